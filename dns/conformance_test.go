package dns_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/resolvertest"
)

// Every Resolver of the package passes the resolvertest suite: Caching
// (asking the suite's server itself, over UDP and TCP), System over Go's
// resolver pointed at the suite's server, a ResolverFunc around it, and
// System over net.DefaultResolver, which reads the machine's
// configuration: it cannot be pointed at a test server, so only the
// checks that send no query run for it (any other name could reach the
// machine's nameservers, and tests talk to loopback only).
func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		h    resolvertest.Harness
	}{
		{"Caching", resolvertest.Harness{New: func(t *testing.T, addr string) dns.Resolver {
			r, err := dns.New(&dns.Options{Nameservers: []string{addr}, Attempts: 2, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		}}},
		{"Caching/one-attempt", resolvertest.Harness{New: func(t *testing.T, addr string) dns.Resolver {
			r, err := dns.New(&dns.Options{Nameservers: []string{addr}, Attempts: 1, Timeout: 2 * time.Second, CacheSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		}}},
		{"System", resolvertest.Harness{New: func(_ *testing.T, addr string) dns.Resolver {
			return resolvertest.SystemAt(addr)
		}}},
		{"ResolverFunc", resolvertest.Harness{New: func(_ *testing.T, addr string) dns.Resolver {
			s := resolvertest.SystemAt(addr)
			return dns.ResolverFunc(func(ctx context.Context, host string) ([]netip.Addr, error) {
				return s.LookupNetIP(ctx, host)
			})
		}}},
		{"System/default", resolvertest.Harness{NoServer: true, New: func(*testing.T, string) dns.Resolver {
			return dns.System{}
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { resolvertest.Run(t, tt.h) })
	}
}
