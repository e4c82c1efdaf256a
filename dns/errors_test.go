package dns

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
)

func TestError(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		err       *Error
		text      string
		kind      Kind
		timeout   bool
		temporary bool
	}{
		{&Error{Name: "a.test", Kind: NotFound, Server: "127.0.0.1:53", Err: errNXDomain},
			"dns: lookup a.test: not found: no such host (NXDOMAIN) (server 127.0.0.1:53)", NotFound, false, false},
		{&Error{Name: "a.test", Kind: Timeout, Err: context.DeadlineExceeded},
			"dns: lookup a.test: timeout: context deadline exceeded", Timeout, true, true},
		{&Error{Name: "a.test", Kind: ServerFailure, Err: errServFail},
			"dns: lookup a.test: server failure: server failure (SERVFAIL)", ServerFailure, false, true},
		{&Error{Name: "x", Kind: Unknown, Err: cause}, "dns: lookup x: unknown failure: boom", Unknown, false, false},
		{&Error{Name: "x", Kind: BadName, Err: BadName}, "dns: lookup x: bad name", BadName, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			var err error = tc.err
			if err.Error() != tc.text {
				t.Errorf("Error() = %q, want %q", err.Error(), tc.text)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("errors.Is(err, %v) = false", tc.kind)
			}
			for _, k := range []Kind{Unknown, NotFound, Timeout, ServerFailure, CNAMELoop, BadName, BadResponse} {
				if k != tc.kind && errors.Is(err, k) {
					t.Errorf("errors.Is(err, %v) = true", k)
				}
			}
			if !errors.Is(err, tc.err.Err) {
				t.Error("cause not reachable with errors.Is")
			}
			var ne net.Error
			// net.Error still declares the deprecated Temporary; *Error answers it
			// as net's own errors do, for callers that ask.
			//lint:ignore SA1019 testing the method net.Error requires
			if !errors.As(err, &ne) || ne.Timeout() != tc.timeout || ne.Temporary() != tc.temporary {
				//lint:ignore SA1019 as above
				t.Errorf("net.Error: timeout %v temporary %v", ne.Timeout(), ne.Temporary())
			}
		})
	}
	if Kind(200).String() != "unknown failure" || NotFound.Error() != "dns: not found" {
		t.Error("Kind strings")
	}
}

// systemOver returns a System resolver whose net.Resolver asks srv.
func systemOver(srv *dnstest.Server) System {
	return System{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr())
	}}}
}

// TestImplementations runs the same lookups through both Resolver
// implementations: they must agree on addresses and on error kinds.
func TestImplementations(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("broken.test", dnstest.Fault{Mode: dnstest.ServFail})
	impls := map[string]Resolver{
		"Caching": resolver(t, Options{Attempts: 2, Timeout: 500 * time.Millisecond}, srv),
		"System":  systemOver(srv),
		"Func": ResolverFunc(func(ctx context.Context, host string) ([]netip.Addr, error) {
			return systemOver(srv).LookupNetIP(ctx, host)
		}),
	}
	tests := []struct {
		host string
		want []netip.Addr
		kind Kind
	}{
		{"a.test", []netip.Addr{lo, lo6}, 0},
		{"h3.sim.test", []netip.Addr{lo}, 0},
		{"alias2.test", []netip.Addr{lo, lo6}, 0},
		{"192.0.2.1", []netip.Addr{netip.MustParseAddr("192.0.2.1")}, 0},
		{"nope.test", nil, NotFound},
		{"broken.test", nil, ServerFailure},
	}
	for name, r := range impls {
		for _, tc := range tests {
			t.Run(name+"/"+tc.host, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				got, err := r.LookupNetIP(ctx, tc.host)
				if tc.want != nil {
					slices.SortFunc(got, netip.Addr.Compare)
					want := slices.SortedFunc(slices.Values(tc.want), netip.Addr.Compare)
					if err != nil || !slices.Equal(got, want) {
						t.Fatalf("got %v, %v; want %v", got, err, want)
					}
					return
				}
				var e *Error
				if !errors.As(err, &e) || !errors.Is(err, tc.kind) {
					t.Fatalf("got %v, %v; want an *Error of kind %v", got, err, tc.kind)
				}
			})
		}
	}
}
