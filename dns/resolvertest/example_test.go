package resolvertest_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/dns/resolvertest"
)

// ExampleSystemAt points the system resolver at a test server: its
// answers and its errors are those of package dns.
func ExampleSystemAt() {
	srv, err := dnstest.NewServer(dnstest.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.AddWildcard("sim.test", 300, netip.MustParseAddr("127.0.0.1"))
	srv.SetFault("gone.sim.test", dnstest.Fault{Mode: dnstest.NXDomain})

	r := resolvertest.SystemAt(srv.Addr())
	ctx := context.Background()
	addrs, err := r.LookupNetIP(ctx, "h1.sim.test")
	fmt.Println(addrs, err)
	_, err = r.LookupNetIP(ctx, "gone.sim.test")
	fmt.Println(errors.Is(err, dns.NotFound))
	// Output:
	// [127.0.0.1] <nil>
	// true
}
