// Package resolvertest is the conformance suite every dns.Resolver
// implementation runs, in the style of database/sql's driver tests: the
// suite starts a dnstest.Server on 127.0.0.1 with the records and faults
// it needs, and the implementation's test points its resolver at it.
//
//	func TestConformance(t *testing.T) {
//		resolvertest.Run(t, resolvertest.Harness{
//			New: func(t *testing.T, addr string) dns.Resolver {
//				r, err := dns.New(&dns.Options{Nameservers: []string{addr}, Attempts: 2, Timeout: time.Second})
//				if err != nil {
//					t.Fatal(err)
//				}
//				t.Cleanup(func() { r.Close() })
//				return r
//			},
//		})
//	}
//
// # What the suite checks
//
// The contract of dns.Resolver and of the errors of package dns, as a
// caller sees it:
//
//   - IP literals come back as the one address they are, without a query;
//     "localhost" resolves to loopback addresses;
//   - names with A records, AAAA records, both, a CNAME chain or a
//     wildcard resolve to exactly their addresses (IPv4 unmapped, no
//     repeats), whatever the case of the name and with or without the
//     trailing dot; answers truncated over UDP are fetched over TCP;
//   - failures are *dns.Error values whose Kind the caller tests with
//     errors.Is: NotFound for NXDOMAIN and for names without address
//     records, ServerFailure for SERVFAIL, Timeout when the caller's
//     deadline passes; a canceled lookup returns promptly with an error
//     wrapping context.Canceled; malformed names fail without addresses;
//   - a lookup that hangs does not delay lookups of other names, and
//     concurrent lookups get the right answers.
//
// A resolver that cannot be pointed at a nameserver (dns.System over the
// operating system's configuration) sets Harness.NoServer and runs only
// the checks that send no query.
//
// SystemAt returns a dns.System whose net.Resolver asks a given server, so
// that the system resolver's code runs against a dnstest.Server too.
//
// RunPrefetcher checks the optional dns.Prefetcher: Prefetch returns at
// once, even with a server that never answers, and the names it was
// given then resolve from the cache, without a query.
package resolvertest
