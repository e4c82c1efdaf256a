// Package dnstest runs an in-process DNS server on the loopback interface for
// tests and demos, in the spirit of net/http/httptest: it answers A, AAAA,
// CNAME (and any record given in zone-file syntax) from an in-memory table,
// and fails on demand so that resolvers can be tested against the failures
// the real Domain Name Service produces (IIR §20.2.2: lookups that take
// seconds, time out, or fail).
//
// # Records
//
// Records are added with [Server.AddAddr], [Server.AddCNAME],
// [Server.AddWildcard] or, for any type, [Server.AddRR] in zone-file syntax.
// A wildcard owner "*.zone" answers for every name strictly under zone that
// has no records of its own (as in RFC 4592, simplified: no closest-encloser
// rules). Unknown names get NXDOMAIN and names without records of the asked
// type get an empty NOERROR answer (NODATA); both carry an SOA record in the
// authority section whose MINIMUM field is the negative-caching TTL
// (RFC 2308): an SOA added with AddRR for an enclosing zone, else one
// synthesized with [Config.NegativeTTL].
//
// CNAME chains are followed inside the server, as an authoritative server
// does for its own zone, unless [Config.NoCNAMEChase] is set; loops stop at
// the first repeated name.
//
// # Failures
//
// [Server.SetFault] makes one name (or, with a "*.zone" key, every name under
// a zone) misbehave: answer NXDOMAIN, SERVFAIL or REFUSED, drop the query so
// that the client times out, answer late, answer UDP queries with the TC bit
// set so that the client must retry over TCP, fail only every other query
// (flapping), or fail only the first n queries.
//
// # Query log
//
// Every query the server receives is recorded in [Server.Log]: name, type,
// transport, arrival time and what was done with it.
//
// # Example
//
//	srv, err := dnstest.NewServer(dnstest.Config{})
//	if err != nil { ... }
//	defer srv.Close()
//	srv.AddWildcard("sim.test", 300, netip.MustParseAddr("127.0.0.1"))
//	srv.SetFault("slow.sim.test", dnstest.Fault{Delay: 2 * time.Second})
//	// point a resolver at srv.Addr() (UDP and TCP on the same port)
//
// No server ever listens on anything but the address given in
// [Config.Addr], by default 127.0.0.1 on a random port.
package dnstest
