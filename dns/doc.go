// Package dns resolves host names for the crawler: the "DNS" box of the
// crawl loop (IIR §20.2.2, Figure 20.1).
//
// DNS resolution is a well-known bottleneck of crawling: a lookup may take
// seconds, and the resolvers of standard libraries block the calling thread
// for that long. Mercator's answer, followed here, was a resolver of its
// own: a cache, lookups that never wait for one another, and timed retries
// (about five attempts whose wait grows from one second to roughly ninety).
//
// # Resolvers
//
// [Resolver] is the interface the fetcher dials through. [Caching], built
// with [New], is the default implementation: it talks to nameservers itself
// over github.com/miekg/dns. [System] wraps a net.Resolver (the operating
// system's configuration and /etc/hosts) and is the fallback; [ResolverFunc]
// adapts a function.
//
// # Caching
//
//   - Nameservers from [Options.Nameservers], default /etc/resolv.conf
//     (its search list is ignored: a crawler resolves absolute names).
//   - A and AAAA asked in parallel (Options.Network; once one family has
//     answered, the other gets at most Options.Timeout more), over UDP with
//     the TCP fallback when an answer comes back truncated; CNAME chains
//     followed up to Options.MaxCNAME aliases, loops detected.
//   - IP literals and localhost names answered without a query.
//   - Answers cached for their TTL clamped to [MinTTL, MaxTTL]; NXDOMAIN and
//     "no address" cached for the SOA minimum (RFC 2308), at most
//     MaxNegativeTTL; at most CacheSize names, least recently used evicted.
//     A cache hit takes tens of nanoseconds and does not allocate.
//   - Concurrent lookups of one name share one resolution; lookups of
//     different names never wait for each other: all queries to a
//     nameserver share one UDP socket whose single reader goroutine hands
//     each answer to the lookup waiting for it, much as Mercator's DNS
//     thread did.
//   - Attempt i goes to the next nameserver in turn and waits
//     RTO·Backoff^i, where RTO is the server's retransmission timeout
//     learnt from its round-trip times (RFC 6298, at least
//     Options.MinTimeout, 100 ms) and Timeout until its first answer, so
//     at most Timeout·Backoff^i (1, 3, 9, 27, 81 s by default). An answer
//     to an earlier attempt is taken whenever it comes; a lookup without
//     any gives up when the whole schedule has run out. A wait that ends
//     while answers have come and are not handed over yet (unread in
//     the socket, which Linux tells, or read and not delivered) lasts
//     until the socket's reader has caught up, for at most one more
//     wait: on a machine whose cores are all busy, that reader may run
//     tens of milliseconds after an answer came, and the name would be
//     asked again for nothing. A fast failure
//     (SERVFAIL, REFUSED, unreachable) moves to a server not yet tried at
//     once.
//   - The queries to a nameserver are paced by a window
//     (Options.MaxInFlight, TCP's slow start from 32): a burst of new
//     names, such as a crawl's first pages bring, goes out as fast as
//     the answers come back instead of overflowing the server's receive
//     queue, which on a stock Linux kernel holds about 512 queries.
//   - [Caching.Prefetch] resolves hosts in the background before they are
//     needed; [Caching.Stats] reports hits, misses, failures and latencies.
//
// # Errors
//
// Failed lookups return an [*Error] with the name, a [Kind] and the cause.
// Kinds are errors themselves:
//
//	addrs, err := r.LookupNetIP(ctx, "example.com")
//	switch {
//	case errors.Is(err, dns.NotFound): // permanent: drop the host's URLs
//	case errors.Is(err, dns.Timeout), errors.Is(err, dns.ServerFailure):
//		// temporary: try the host again later
//	}
//
// # Example
//
//	r, err := dns.New(&dns.Options{Nameservers: []string{"127.0.0.1:5353"}})
//	if err != nil { ... }
//	defer r.Close()
//	r.Prefetch("a.example", "b.example")
//	addrs, err := r.LookupNetIP(ctx, "a.example")
//
// Package dns/dnstest provides a DNS server on the loopback interface with
// configurable records and failures, for tests.
package dns
