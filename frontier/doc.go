// Package frontier is the URL frontier of the Mercator crawler (IIR
// §20.2.3, Figures 20.3 and 20.4): it holds the URLs still to be fetched
// and hands them to crawl workers so that high-priority pages come first
// and no host is contacted too often.
//
// # Frontier
//
// A Frontier has three methods: Add queues URLs, Next blocks until some
// politeness key (host by default) may be contacted and leases its next
// URL, Done reports the fetch and makes the key eligible again after the
// politeness gap, now + max(MinDelay, K × fetch time, Crawl-delay,
// Retry-After) capped by MaxDelay, K = 10 by default. Optional
// capabilities are separate interfaces: Checkpointer, Poller, Stater, Syncer.
//
//	f, _ := frontier.NewMercator(&frontier.Options{Workers: 64})
//	defer f.Close()
//	f.Add(ctx, frontier.URL{URL: "https://example.com/"})
//	for {
//		l, err := f.Next(ctx)
//		if err != nil {
//			return err
//		}
//		start := time.Now()
//		page, err := fetch(ctx, l.URL.URL)
//		f.Done(l, frontier.Result{Duration: time.Since(start), Err: err})
//		f.Add(ctx, links(page)...)
//	}
//
// # Implementations
//
// Mercator is the book's design: F front queues filled by a Prioritizer,
// a biased random front queue selector, B back queues (3 × workers) of one
// host each, the host → back queue table and a heap of back queues keyed
// by the earliest contact time. FIFO is the baseline the book warns about:
// one queue with per-host politeness, which stalls when links are local.
// Both keep their queues in a Store: MemStore by default, or the Pebble
// store of package frontier/diskq, which keeps only queue heads and tails
// in memory. Package frontier/frontiertest holds the conformance suite.
//
// # Host order
//
// A crawl ends when its largest host is done, and politeness makes that
// host take its pages × its gap at best. Options.HostOrder says how
// Mercator gets close to that. By default (MostWork), among the hosts
// that may be contacted, the next worker goes to a host whose first page
// is still to be fetched (robots.txt, then that page), then to the most
// overdue host, a host's URLs queued times its gap counted as time it
// has waited; the URLs found on
// a host being crawled join its back queue at once; the URLs of a host
// never contacted wait for a back queue in a lane of their priority,
// which goes before the front queue three times in four, rather than
// behind every URL queued before them; and a host with few URLs gives
// its back queue up while it waits out its gap, so that the B back
// queues serve hosts that may be contacted rather than hosts that wait.
// Politeness is unchanged. The Prioritizer orders each host's URLs and
// decides which hosts get back queues; PriorityFirst also ranks the hosts
// that may be contacted by it, for a focused crawl. EarliestContact is
// the book's order, the host that may be contacted earliest first.
// BenchmarkMakespan measures them against the lower bound in simulated
// time.
//
// # Prioritizers
//
// Depth (breadth first), OPIC (on-line page importance, Abiteboul et al.),
// ChangeRate (revisits by estimated change rate × quality, with the Cho and
// Garcia-Molina estimator EstimateChangeRate) and Rules (e.g. news hosts
// first); PrioritizerFunc adapts a function.
//
// # Continuous crawling
//
// A Result with a Revisit time sends the URL back at that time with its
// History (fetches, changes seen through the content Fingerprint) updated;
// the Options.Revisit prioritizer places it. The lease of a revisit carries
// the previous Fingerprint, so the crawler can retire it from its
// content-seen set when the page changed.
//
// # URL filters
//
// URLFilter decides what enters the frontier; Chain combines filters.
// Provided: Schemes, Domains, Patterns, MaxLength, MaxPathDepth,
// RepeatedSegments, MaxQueryParams, Extensions, HostBudget. A rejection
// is a *Rejection with a Reason to count.
//
// # Checkpoints
//
// Checkpoint writes every queued, leased and scheduled URL; Restore adds
// them to a new frontier, so leased URLs that were never Done are crawled
// again and nothing is lost or doubled.
package frontier
