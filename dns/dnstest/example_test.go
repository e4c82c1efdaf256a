package dnstest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/crawlkit/crawlkit/dns/dnstest"
)

// Example points the standard library's resolver at a test server with a
// wildcard zone and one failing name.
func Example() {
	srv, err := dnstest.NewServer(dnstest.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.AddWildcard("sim.test", 300, netip.MustParseAddr("127.0.0.1"))
	srv.SetFault("gone.sim.test", dnstest.Fault{Mode: dnstest.NXDomain})

	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr())
	}}
	ctx := context.Background()
	addrs, err := r.LookupNetIP(ctx, "ip4", "h42.sim.test")
	fmt.Println(addrs, err)
	_, err = r.LookupNetIP(ctx, "ip4", "gone.sim.test")
	var dnsErr *net.DNSError
	fmt.Println(errors.As(err, &dnsErr) && dnsErr.IsNotFound)
	for _, q := range srv.Log() {
		fmt.Println(q.Transport, q.Type, q.Name, q.Rcode)
	}
	// Output:
	// [127.0.0.1] <nil>
	// true
	// udp A h42.sim.test NOERROR
	// udp A gone.sim.test NXDOMAIN
}
