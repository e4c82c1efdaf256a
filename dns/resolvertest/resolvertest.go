package resolvertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/dnstest"
)

// Harness tells Run how to make the resolver under test.
type Harness struct {
	// New returns a resolver that asks the DNS server at addr
	// ("127.0.0.1:PORT", UDP and TCP) and nothing else. It is called once
	// per subtest, each with a server of its own; cleanup (Close) belongs
	// in t.Cleanup. A resolver with retries should be configured so that
	// a lookup gives up within a few seconds. With NoServer, addr is "".
	New func(t *testing.T, addr string) dns.Resolver
	// NoServer says the resolver cannot be pointed at a nameserver: only
	// the checks that send no query run (IP literals), the others skip.
	NoServer bool
}

// Records of the zone the suite serves.
var (
	v4a  = netip.MustParseAddr("127.0.0.1")
	v4b  = netip.MustParseAddr("127.0.0.2")
	v6a  = netip.MustParseAddr("::1")
	v4ip = netip.MustParseAddr("192.0.2.7")
	v6ip = netip.MustParseAddr("2001:db8::7")
)

// zone starts a server with the suite's records and faults.
func zone(t *testing.T) *dnstest.Server {
	t.Helper()
	s := dnstest.Start(t, dnstest.Config{})
	s.AddAddr("both.test", 300, v4a, v6a)
	s.AddAddr("four.test", 300, v4a, v4b)
	s.AddAddr("six.test", 300, v6a)
	s.AddAddr("other.test", 300, v4b)
	s.AddCNAME("alias.test", 300, "both.test")
	s.AddCNAME("alias2.test", 300, "alias.test")
	s.AddWildcard("wild.test", 300, v4b)
	if err := s.AddRR("text.test. 300 IN TXT \"no address here\""); err != nil {
		t.Fatal(err)
	}
	var many []netip.Addr // too many for a 512-byte answer: TCP needed
	for i := range 40 {
		many = append(many, netip.AddrFrom4([4]byte{127, 0, 1, byte(i + 1)}))
	}
	s.AddAddr("many.test", 300, many...)
	s.SetFault("many.test", dnstest.Fault{Truncate: true})
	s.SetFault("servfail.test", dnstest.Fault{Mode: dnstest.ServFail})
	s.SetFault("drop.test", dnstest.Fault{Mode: dnstest.Drop})
	s.AddAddr("slow.test", 300, v4a)
	s.SetFault("slow.test", dnstest.Fault{Delay: time.Minute}) // cut short by Close
	return s
}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name   string
		server bool // needs a nameserver
		fn     func(*testing.T, dns.Resolver, *dnstest.Server)
	}{
		{"Literals", false, testLiterals},
		{"Localhost", true, testLocalhost},
		{"Addresses", true, testAddresses},
		{"NameForms", true, testNameForms},
		{"TruncatedAnswer", true, testTruncated},
		{"NotFound", true, testNotFound},
		{"ServerFailure", true, testServerFailure},
		{"Deadline", true, testDeadline},
		{"Cancel", true, testCancel},
		{"BadNames", true, testBadNames},
		{"Independent", true, testIndependent},
		{"Concurrent", true, testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if h.NoServer && tc.server {
				t.Skip("the resolver cannot be pointed at a test nameserver")
			}
			var srv *dnstest.Server
			addr := ""
			if !h.NoServer {
				srv = zone(t)
				addr = srv.Addr()
			}
			tc.fn(t, h.New(t, addr), srv)
		})
	}
}

// lookup runs one lookup under a deadline long enough for any retry.
func lookup(r dns.Resolver, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.LookupNetIP(ctx, host)
}

// sameAddrs reports whether got holds exactly want's addresses, in any
// order, each once.
func sameAddrs(got, want []netip.Addr) bool {
	g := slices.SortedFunc(slices.Values(got), netip.Addr.Compare)
	w := slices.SortedFunc(slices.Values(want), netip.Addr.Compare)
	return slices.Equal(g, w)
}

// wantAddrs looks host up and checks the answer.
func wantAddrs(t *testing.T, r dns.Resolver, host string, want ...netip.Addr) {
	t.Helper()
	got, err := lookup(r, host)
	if err != nil || !sameAddrs(got, want) {
		t.Errorf("LookupNetIP(%q) = %v, %v; want %v", host, got, err, want)
	}
}

// wantKind checks that err is a *dns.Error of kind k (k < 0: any kind).
func wantKind(t *testing.T, what string, addrs []netip.Addr, err error, k dns.Kind) *dns.Error {
	t.Helper()
	var de *dns.Error
	switch {
	case err == nil:
		t.Errorf("%s = %v, nil; want a *dns.Error of kind %q", what, addrs, k)
		return nil
	case !errors.As(err, &de):
		t.Errorf("%s: error %v (%T) is not a *dns.Error", what, err, err)
		return nil
	case !errors.Is(err, k):
		t.Errorf("%s: error %v of kind %q, want %q", what, err, de.Kind, k)
	}
	if len(addrs) > 0 {
		t.Errorf("%s: addresses %v with the error", what, addrs)
	}
	return de
}

func testLiterals(t *testing.T, r dns.Resolver, srv *dnstest.Server) {
	for _, a := range []netip.Addr{v4ip, v6ip, v4a, v6a, netip.MustParseAddr("10.1.2.3")} {
		wantAddrs(t, r, a.String(), a)
	}
	// An IPv4-mapped IPv6 literal is the IPv4 address: resolvers unmap, as
	// the fetcher's address checks expect.
	got, err := lookup(r, "::ffff:192.0.2.7")
	if err != nil || len(got) != 1 || got[0].Unmap() != v4ip {
		t.Errorf(`LookupNetIP("::ffff:192.0.2.7") = %v, %v; want [192.0.2.7]`, got, err)
	}
	if srv != nil {
		if log := srv.Log(); len(log) > 0 {
			t.Errorf("IP literals sent %d queries, e.g. %+v", len(log), log[0])
		}
	}
}

func testLocalhost(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	got, err := lookup(r, "localhost")
	if err != nil || len(got) == 0 {
		t.Fatalf(`LookupNetIP("localhost") = %v, %v; want loopback addresses`, got, err)
	}
	for _, a := range got {
		if !a.IsLoopback() {
			t.Errorf(`LookupNetIP("localhost") = %v: %v is not a loopback address`, got, a)
		}
	}
}

func testAddresses(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	wantAddrs(t, r, "both.test", v4a, v6a)
	wantAddrs(t, r, "four.test", v4a, v4b)
	wantAddrs(t, r, "six.test", v6a)
	wantAddrs(t, r, "alias2.test", v4a, v6a)
	wantAddrs(t, r, "anything.wild.test", v4b)
	wantAddrs(t, r, "a.b.wild.test", v4b)
	// Asked again (from a cache, if the resolver keeps one): the same.
	wantAddrs(t, r, "both.test", v4a, v6a)
	wantAddrs(t, r, "six.test", v6a)
}

func testNameForms(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	for _, host := range []string{"Both.Test", "both.test.", "BOTH.TEST."} {
		wantAddrs(t, r, host, v4a, v6a)
	}
}

func testTruncated(t *testing.T, r dns.Resolver, srv *dnstest.Server) {
	got, err := lookup(r, "many.test")
	if err != nil || len(got) != 40 {
		t.Fatalf("LookupNetIP(many.test) = %d addresses, %v; want 40 (UDP answers are truncated: TCP is needed)", len(got), err)
	}
	tcp := false
	for _, q := range srv.Log() {
		tcp = tcp || q.Transport == "tcp"
	}
	if !tcp {
		t.Error("no query over TCP")
	}
}

func testNotFound(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	for _, host := range []string{"nope.test", "text.test", "deeper.nope.test"} {
		addrs, err := lookup(r, host)
		if de := wantKind(t, fmt.Sprintf("LookupNetIP(%q)", host), addrs, err, dns.NotFound); de != nil {
			if de.Name == "" {
				t.Errorf("%q: the *dns.Error names no host", host)
			}
			if de.Temporary() || de.Timeout() {
				t.Errorf("%q: NotFound reported as temporary or a timeout", host)
			}
		}
	}
}

func testServerFailure(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	addrs, err := lookup(r, "servfail.test")
	if de := wantKind(t, `LookupNetIP("servfail.test")`, addrs, err, dns.ServerFailure); de != nil && !de.Temporary() {
		t.Error("a server failure is not reported as temporary")
	}
}

func testDeadline(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	addrs, err := r.LookupNetIP(ctx, "drop.test")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("lookup under a 300ms deadline took %v", d)
	}
	if de := wantKind(t, `LookupNetIP("drop.test")`, addrs, err, dns.Timeout); de != nil && !de.Timeout() {
		t.Error("Timeout() is false")
	}
}

func testCancel(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	addrs, err := r.LookupNetIP(ctx, "drop.test")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("lookup canceled after 100ms returned after %v", d)
	}
	var de *dns.Error
	if !errors.As(err, &de) || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled lookup = %v, %v (%T); want a *dns.Error wrapping context.Canceled", addrs, err, err)
	}
	// A new lookup still works.
	wantAddrs(t, r, "other.test", v4b)
}

func testBadNames(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	for _, host := range []string{"", "a..test", ".", strings.Repeat("a", 64) + ".test", strings.Repeat("abcdefg.", 40) + "test"} {
		addrs, err := lookup(r, host)
		var de *dns.Error
		if err == nil || !errors.As(err, &de) || len(addrs) > 0 {
			t.Errorf("LookupNetIP(%.20q...) = %v, %v (%T); want a *dns.Error and no addresses", host, addrs, err, err)
		}
	}
}

func testIndependent(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.LookupNetIP(ctx, "slow.test") // answered after a minute: canceled below
	}()
	defer func() { cancel(); <-done }()
	time.Sleep(50 * time.Millisecond) // the slow lookup is under way
	start := time.Now()
	wantAddrs(t, r, "other.test", v4b)
	if d := time.Since(start); d > time.Second {
		t.Errorf("a lookup took %v while another name's lookup hung", d)
	}
}

func testConcurrent(t *testing.T, r dns.Resolver, _ *dnstest.Server) {
	type want struct {
		host  string
		addrs []netip.Addr
		kind  dns.Kind
	}
	cases := []want{
		{host: "both.test", addrs: []netip.Addr{v4a, v6a}},
		{host: "four.test", addrs: []netip.Addr{v4a, v4b}},
		{host: "alias.test", addrs: []netip.Addr{v4a, v6a}},
		{host: "nope.test", kind: dns.NotFound},
		{host: "192.0.2.7", addrs: []netip.Addr{v4ip}},
	}
	for i := range 20 {
		cases = append(cases, want{host: fmt.Sprintf("h%d.wild.test", i), addrs: []netip.Addr{v4b}})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := range 16 {
		wg.Go(func() {
			for i := range 3 * len(cases) {
				c := cases[(i+w)%len(cases)]
				got, err := lookup(r, c.host)
				ok := err == nil && sameAddrs(got, c.addrs)
				if c.addrs == nil {
					ok = errors.Is(err, c.kind) && len(got) == 0
				}
				if !ok {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %v, %v", c.host, got, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d concurrent lookups failed, e.g. %s", len(failures), failures[0])
	}
}

// SystemAt returns a dns.System whose net.Resolver (Go's own resolver,
// reading /etc/hosts first as the system's configuration says) sends its
// queries to the DNS server at addr instead of the configured
// nameservers, over UDP and TCP. It is safe for concurrent use, as
// net.Resolver is. Each connection is closed when its query's context
// ends: Go's resolver stops a canceled lookup but leaves its read waiting
// for the resolver timeout (5 s), and tests that check for leaked
// goroutines would find it.
func SystemAt(addr string) dns.System {
	return dns.System{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		context.AfterFunc(ctx, func() { c.Close() })
		return c, nil
	}}}
}
