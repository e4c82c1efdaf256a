// Package crawlkit is a software development kit for web crawlers, search
// indexes and connectivity servers, built after the Mercator architecture
// (Heydon and Najork) as "Introduction to Information Retrieval" (Manning,
// Raghavan, Schütze), chapter 20, teaches it.
//
// Every stage of a crawl is an independent package with a small interface and
// a strong default implementation, so a program can import only what it
// needs — a robots.txt checker, a compressed web-graph reader — or swap one
// stage for its own while keeping the others. This root package assembles
// the stages into a complete crawler.
//
// # The crawl loop
//
// The loop is the book's Figure 20.1. A worker goroutine takes a URL from
// the frontier, which hands out a URL only when its host may be contacted
// again (one connection per host at a time; the next contact waits k times
// the duration of the last fetch, k = 10 as in Mercator). Immediately before
// fetching, the worker checks the host's robots.txt rules — never at enqueue
// time, because rules change while URLs wait. It resolves the host through
// the crawler's own caching DNS resolver, fetches the page with bounded
// size and time, and parses it into text and links. The "content seen?"
// test drops pages whose text was already fetched at another URL (exact
// fingerprints, and MinHash for near-duplicates), though their links are
// still read; a host whose pages keep turning out to be content seen
// before is cut as a spider trap, and a registrable domain gains hosts
// only as fast as its hosts serve pages (TrapOptions). Rewrite rules
// learned from the duplicates (package dedup/dust, Config.URLRules) map
// links and queued URLs to the URL their content is fetched at, and the
// aliases are parked unfetched. Each extracted link is
// normalised, passed through the URL filters (schemes, domains, spider-trap
// guards), and through the "URL seen?" test; the links that survive are
// added to the frontier, whose prioritizer chooses their front queue. The
// text feeds an inverted index and the links a web graph; a housekeeping
// goroutine reports progress and decides termination. In a cluster
// (Figure 20.2), a host splitter after the URL filter sends each URL to the
// node that owns its host.
//
// # Politeness beyond the gap
//
// A host that answers 429 or 503 without Retry-After is blocked as a
// whole for a time that doubles at each new incident (BackoffOptions;
// the state is kept in the host's KeyRecord, so a resume keeps it).
// HostRules override the least gap and the budgets per host or domain.
// PolitenessKey groups the hosts of a registrable domain or of one
// server address under one gap. A continuous crawl sends each page's
// ETag and Last-Modified back with its revisit; an unchanged page answers
// 304 without a body.
//
// # Sitemaps and canonical URLs
//
// When a worker fetches a host's robots.txt, the sitemaps it names (or,
// when it names none, the host's /sitemap.xml) join the frontier as URLs
// marked frontier.URL.Sitemap: they are fetched in their host's turn,
// under its robots.txt and politeness like any request, are pending in
// the State like any URL, and are archived but not counted as pages
// (Outcomes SitemapRead, SitemapFailed). Their entries go through the
// filters, the URL-seen test and the budgets as links do, carrying
// <lastmod> and <changefreq> for the Prioritizer and, in a continuous
// crawl, for the revisit schedule. Config.NoSitemaps turns them off;
// SitemapOptions bounds them.
//
// A page that names another URL in <link rel=canonical> or a Link
// header (fetch.ParseLinkHeader) is an alias of it, if Config.Canonicals
// allows (by default within the page's registrable domain): it is still
// fetched and archived, Page.Canonical names its canonical URL, which is
// queued; the index sinks leave the alias out, and the link log records
// it, so that ReadLinkLogCanonical builds the graph with the alias
// collapsed into its canonical node. See CanonicalPolicy.
//
// # Selectors and extraction
//
// Config.OnHTML registers callbacks keyed by CSS selector, colly's OnHTML
// with a context and an error: each is called for every matching element
// of every HTML page the crawl keeps, from the worker that fetched it.
// The element tree is built once per page, and only when handlers are
// registered; without them the parser allocates what it always did. A
// handler extracts fields with fetch.Unmarshal (struct tags) and feeds
// links back with Element.Follow: they pass the URL filters, budgets and
// the URL-seen test like the page's own links. Errors reach Config.OnError
// as *HandlerError.
//
//	OnHTML: []crawlkit.HTMLHandler{{Selector: "div.product", Func: func(ctx context.Context, e *fetch.Element) error {
//		var p Product
//		if err := fetch.Unmarshal(e, &p); err != nil {
//			return err
//		}
//		return enc.Encode(p) // enc safe for concurrent use
//	}}},
//
// # Durability
//
// A crawl's State holds what it must not lose: the URLs still to fetch,
// the URL-seen set, a record per host and per registrable domain (URLs
// admitted, next contact) and the crawl's progress. Each page is
// committed to it in one Txn, under a lock that also covers the page's
// records in the DurableSinks (WARC, JSON Lines, link log, index) and
// their positions, so the outputs and the state never disagree: a crawl
// killed at any instant is resumed by a new Crawler's Run on the same
// State, which rewinds every DurableSink to the last committed page and
// keeps the hosts' politeness gaps. Package crawldb keeps the State on
// disk with bounded memory; MemState keeps it in memory; without one a
// crawl keeps nothing to resume.
//
// # Packages
//
//   - urlnorm: relative-link resolution (RFC 3986 §5), the canonical form
//     used as the duplicate-URL key, host keys (host, registrable domain,
//     host-reversed order).
//   - fetch: the Fetcher and Parser interfaces, the HTTP fetcher with its
//     limits and private-address guard, the HTML and sitemap parsers.
//   - fetch/fetchtest: a simulated web of many virtual hosts on one loopback
//     listener, with ground truth and a request log, for tests and demos.
//   - dns: the Resolver interface and a caching resolver with retries and
//     prefetch; dns/dnstest: an in-process DNS server for tests.
//   - robots: the Robots Exclusion Protocol (RFC 9309) and a per-host cache.
//   - frontier: the Mercator URL frontier (front queues for priority, back
//     queues for politeness, a heap of next-contact times), prioritizers,
//     URL filters; frontier/frontiertest: the conformance suite.
//   - dedup and shingle: "URL seen?" and "content seen?" with fingerprints,
//     shingling, MinHash and locality-sensitive hashing.
//   - index: an inverted index with BM25, distributed by documents or by
//     terms.
//   - webgraph: the Boldi–Vigna compressed graph, file-compatible with Java
//     WebGraph, behind a connectivity-server interface.
//   - cluster: the distributed crawl of Figure 20.2 on NATS: host
//     splitter, content-seen partitioned by fingerprint, scatter-gather
//     search over the nodes' index shards.
//   - warc: WARC 1.1 files, the crawler's archive, and a Fetcher that
//     replays them.
//   - crawldb: the crawl's State on disk (Pebble), safe against a kill at
//     any instant; statetest: the conformance suite of State.
//   - console: an http.Handler with the crawl's status console for its
//     operator and its Prometheus metrics.
//
// # Using the crawler
//
// Every nil field of a Config is the default module, so a crawl needs only
// its seeds; sinks receive the pages:
//
//	c, err := crawlkit.New(crawlkit.Config{
//		Seeds:    []string{"https://example.com/"},
//		MaxPages: 1000,
//		Sinks:    []crawlkit.Sink{crawlkit.NewJSONLines(os.Stdout)},
//	})
//	if err != nil { ... }
//	stats, err := c.Run(ctx)
//	fmt.Println(stats.Summary())
//
// A crawl that must survive a kill keeps its state and its outputs on disk:
//
//	db, err := crawldb.Open("crawl/state", nil) // locks the directory
//	if err != nil { ... }
//	defer db.Close()
//	pages, err := crawlkit.OpenJSONLines("crawl/pages.jsonl")
//	if err != nil { ... }
//	c, err := crawlkit.New(crawlkit.Config{Seeds: seeds, State: db, Sinks: []crawlkit.Sink{pages}})
//	// ... Run; after a kill, the same program resumes where it stopped.
//
// Every URL ends in exactly one Outcome (fetched, duplicate content,
// robots-denied, filtered with its reason, ...), counted in Stats.
// Activity details a running crawl for its operator (time per stage,
// busiest and slowest hosts, recent errors, caches); Pause and Resume hold
// and release its workers; package console serves both, with metrics.
//
// # Configuration
//
// Constructors take *Options; nil means every default; the options are
// copied. Each field's comment states its default; where a field is
// required (warc.WriterOptions.Dir), nil fails with a typed error. New's
// Config stays a value: it is the crawl's whole description, not a
// constructor's options.
//
// # Commands
//
// examples/crawler is the bundled crawler (-demo crawls a simulated web with
// no network); examples/simweb serves that simulated web and its DNS server
// on loopback ports so any crawler can be measured against the same web;
// examples/connectivity serves a crawl's web graph over HTTP.
package crawlkit
