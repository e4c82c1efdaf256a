package dns_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/dnstest"
)

// Example resolves names against a test server: a wildcard zone, an alias,
// a name that does not exist, and a cache hit.
func Example() {
	srv, err := dnstest.NewServer(dnstest.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.AddWildcard("sim.test", 300, netip.MustParseAddr("127.0.0.1"))
	srv.AddCNAME("www.example.test", 300, "h1.sim.test")

	r, err := dns.New(&dns.Options{
		Nameservers: []string{srv.Addr()},
		Network:     "ip4",
		Timeout:     100 * time.Millisecond,
	})
	if err != nil {
		panic(err)
	}
	defer r.Close()

	ctx := context.Background()
	fmt.Println(r.LookupNetIP(ctx, "h7.sim.test"))
	fmt.Println(r.LookupNetIP(ctx, "www.example.test"))
	_, err = r.LookupNetIP(ctx, "nope.example.test")
	var e *dns.Error
	if errors.As(err, &e) {
		fmt.Println(e.Name, "|", e.Kind, "|", e.Err, "|", errors.Is(err, dns.NotFound))
	}
	r.LookupNetIP(ctx, "h7.sim.test") // from the cache
	st := r.Stats()
	fmt.Println("hits", st.Hits, "misses", st.Misses)
	// Output:
	// [127.0.0.1] <nil>
	// [127.0.0.1] <nil>
	// nope.example.test | dns: not found | dns: no such host (NXDOMAIN) | true
	// hits 1 misses 3
}
