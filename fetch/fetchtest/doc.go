// Package fetchtest is a simulated web for tests and demos: one real HTTP
// server on loopback serving many generated virtual hosts, with the ground
// truth about them and a log of every request, in the spirit of
// net/http/httptest.
//
//	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 50})
//	defer w.Close()
//	resp, err := w.Client().Get(w.Seeds()[0]) // http://h000.sim.test:PORT/
//	...
//	want := w.Reachable("crawlkit")          // what a polite crawl must find
//	if v := w.RobotsViolations("crawlkit"); len(v) > 0 { ... }
//	if n := fetchtest.MaxConcurrency(w.Log()); ... { ... }
//
// # Hosts and routing
//
// The server listens on 127.0.0.1 (a random port unless Config.Addr says
// otherwise) and routes on the Host header, port stripped, case ignored.
// Every URL of the web carries the port: http://h000.sim.test:PORT/. Names
// resolve through Web.Client or Web.DialContext (any web host → the server;
// unknown names fail like NXDOMAIN), through a DNS server answering every
// name under Config.Domain with 127.0.0.1 (see dns/dnstest: AddWildcard for
// Config.Domain, which also covers www.alias.<Domain>, two labels down, and,
// with a subdomain trap, AddWildcard and AddAddr for
// Config.SubdomainTrap), or by using the server as an HTTP proxy
// (absolute-form requests route the same way). A request for an unknown host
// is answered 421.
//
// Ordinary hosts h000, h001, ... have a Pareto-distributed number of pages
// (Config.MeanPages): HTML pages with a title, paragraphs of generated prose
// and links of every form (root-relative, ../relative, ./relative, absolute,
// scheme-relative, upper-case host, with fragments, with query strings,
// broken; one page in ten has a <base href> its relative links depend on)
// written in several markup styles (<A HREF="">, single quotes, unquoted),
// anchors that are not links (no href, mailto:, javascript:, tel:), and some
// PDF, PNG and JSON resources. Page j > 0 is linked from a
// parent page, so every page is reachable from its host's home page; each home
// page links to the next two hosts' home pages, and cross-host links prefer
// popular hosts (Zipf). h000's home page links to the entry of every special
// host. Special hosts (Host returns the name for a label):
//
//	trap-calendar  CalendarTrap: /calendar/YYYY/MM, prev/next month forever
//	trap-session   SessionTrap: 20 items, links carry a new ?sid= on every visit
//	trap-deep      DeepTrap: /d/a/b/c/..., always one level deeper
//	redirect       Redirects: /chain/C/K chains of 1–5 hops (301/302/307/308,
//	               relative and absolute Location) ending on a page;
//	               /loop/0/K (two-step loop), /loop/1/0 (self loop)
//	status         Statuses: /CODE/x answers CODE (400..599); 429 and 503
//	               with Retry-After (Config.RetryAfter); /retry/N/x answers
//	               503 + Retry-After N times, then 200
//	latin1         Latin1: six ISO-8859-1 pages, Content-Type "text/html"
//	cp1252         Windows1252: six windows-1252 pages, no charset header
//	mirror0, ...   byte-identical copies of an ordinary host (Mirrors)
//	hostile        Hostile: huge bodies, a gzip bomb, bad gzip, slow and
//	               stalled answers, an oversized header, invalid UTF-8, a
//	               mislabeled body, a 10 kB link (see HostilePaths); linked
//	               only with Config.LinkHostile
//	javadoc        Javadoc: seven javadoc 1.6 pages, two of them reached
//	               only by links inside <NOSCRIPT> (JavadocNoscriptOnly);
//	               only with Config.Javadoc
//	alias          Aliases: a project site of 97 distinct pages under
//	               many URLs: www.alias serves the same bytes for every
//	               path; ?ref=, ?utm_*= and ?sessionid= links (any
//	               parameter but two) change nothing; dir/ is
//	               dir/index.html; /current/ is a symlink of /v3/. And
//	               decoys: ?page=N of /news/ and ?lang= of /about.html
//	               change the content, /v2/ shares 25 of its 30 files with
//	               /v3/, 12 near-duplicate class pages each hold the only
//	               link to a page. Canonical maps every URL to its
//	               distinct page; only with Config.Aliases
//	canon          Canonicals: six articles, each with variants naming it
//	               as their rel=canonical: ?ref=home, /print/, the mobile
//	               host m.canon, /amp/ (in a Link header only), and a
//	               syndicated /wire/ story naming h000's home page
//	               (another site); RelCanonical says what each names;
//	               only with Config.Canonicals
//	app            ScriptApp: a web application whose pages a script fills
//	               from /data/N.json (fetch() in the shared /app.js, or
//	               XMLHttpRequest inline): content and links exist only
//	               after rendering (RenderedLinks, ReachableRendered,
//	               RenderOnly); robots.txt forbids the /private/track.js
//	               /app.js inserts; AppLoop, AppHang and AppHeavy never
//	               finish, wait for an answer that never comes, or eat
//	               memory; only with Config.Scripts
//	shop           Shop: products with name, price and tags in microdata,
//	               half in the HTML, half written by /shop.js from JSON,
//	               and category lists the script writes (Products); only
//	               with Config.Scripts
//
// With Config.SubdomainTrap set (say "explode.test"), one more trap lives
// outside Config.Domain, under a registrable domain of its own, as wildcard
// DNS makes it possible:
//
//	x0.explode.test  subdomain explosion: every name under the domain
//	               answers; host x<id> (base 36) has pages /, /p/1 and
//	               /p/2, each linking the other two and 30 new hosts
//	               x<id*30+1> .. x<id*30+30>; robots.txt 404
//
// Per-host budgets do not stop it (each host has three pages); budgets per
// registrable domain do.
//
// With Config.Members, members.<Domain> is a site behind a login: / and
// /login are public; POST /login with user=MembersUser and
// password=MembersPassword answers 303 to /members/ and sets a host-only
// session cookie, a cookie for every host under Domain and a Secure one
// (which must never come back over http); the protected pages under
// /members/ (MembersPages, a tree from the index) answer 302 to the form
// without the session and 403 with one the server never issued. Nothing
// links the host, and Pages and Reachable leave it out.
//
// Unknown paths answer 404. Text responses are gzip-encoded when the request
// accepts gzip; pages, robots.txt files and sitemaps carry an ETag, pages
// also Last-Modified, and If-None-Match / If-Modified-Since are answered 304. Config.Latency and
// Config.HostLatency delay responses. Config.RateLimits makes hosts
// throttle: a request sooner than its interval after the one before is
// answered 429 (or 503) without Retry-After.
//
// # robots.txt
//
// Ordinary host hNNN serves robots variant NNN mod 9 (mirrors copy theirs):
// plain (allow all, Sitemap line), prefix (Disallow /private/ and /shop/),
// allow-override (Disallow /archive/, Allow /archive/2019/), wildcard
// (/*.pdf$ disallowed but /docs/*.pdf$ allowed, /search?*sort=, /*/guide/),
// crawl-delay (Crawl-delay, sitemap index), 404, 5xx (500: disallow all),
// redirect (301 then 302 to /site/robots.txt, which disallows /blog/ and
// /private/) and agents (evilbot: nothing; crawlkit, goodbot: /private/;
// others: /shop/ and /private/). With Config.BusyRobots, some hosts whose
// variant is a file answer the first request for it 503 with Retry-After.
// The ground truth (Allowed, Reachable, RobotsViolations) applies RFC 9309
// to these rules with a matcher of its own.
//
// # Sitemaps
//
// Every ordinary host and mirror serves /sitemap.xml (all its pages, with
// lastmod and changefreq), /sitemap_index.xml (a sitemap index of the next
// two), /sitemaps/pages-1.xml and /sitemaps/pages-2.xml.gz (a gzip file).
// Sitemaps list only pages that links also reach, unless
// Config.SitemapOnly adds pages under /more/ that only sitemaps list
// (SitemapOnlyPages). The robots.txt variants plain, crawl-delay and agents
// name a sitemap; of the others, a crawler finds /sitemap.xml only by
// asking for it.
//
// # Ground truth
//
// Pages, PagesOf, Links, RenderedLinks, Status, Title, Reachable,
// ReachableRendered, RenderOnly, Products, Allowed, Robots,
// RobotsVariant, CrawlDelay, Traps, IsTrap, ExactDuplicates,
// NearDuplicates, Canonical, ChangePeriod and Version describe the web
// exactly; they go through the same routing and generation code as the
// server. URLs in the ground truth are absolute, with the port, lower-case
// host, no fragment and query parameters sorted.
//
// The pages of the Aliases site are listed once each, under the URL
// Canonical gives every one of their aliases, and Missed counts a page
// fetched under any alias as fetched, so that a crawl fetching each
// distinct page once, under any URL, covers the site. AliasFetches reads
// the request log for the site's distinct pages fetched and the fetches
// that brought content already fetched (identical-content fetches), the
// waste URL rewrite rules learned from duplicates ("Do not crawl in the
// DUST") should cut.
//
// # Change over time
//
// Each HTML page draws a change period from Config.ChangePeriods. Its
// current version is a function of Config.Clock: a page with period P gets a
// new "Updated" line and a new paragraph every P (its links never change).
// Tests make this deterministic with a Clock they advance.
//
// # Determinism and cost
//
// Everything follows from Config.Seed through a fixed generator, so a seed
// gives the same web on every run and Go release: the same hosts, link graph
// and page bytes for the same Config.Clock reading (PNG bytes excepted: they
// come from image/png). A golden file in testdata pins the web of seed 1. Only the port, the
// session ids of the session trap and the state of /retry/ pages differ
// between runs. NewWeb costs O(Hosts); a host's pages are generated on first
// use (about 120 bytes of heap per page) and rendered per request into
// pooled buffers (about 60 allocations and 3 kB per page; BenchmarkHandler).
//
// # Request log
//
// Every request is logged (Log, ResetLog) with host, method, path, user
// agent, Cookie header, connection id, the client's address, start and
// end time, status and bytes. MaxConcurrency
// and MinGap measure politeness per host; RobotsViolations lists the
// requests robots.txt forbade an agent.
//
// # Proxy
//
// NewProxy starts a forward proxy on 127.0.0.1 for tests of fetchers that
// go through one: an HTTP proxy (CONNECT tunnels, and plain http requests
// in absolute form forwarded) and a SOCKS5 server, optionally asking for
// credentials. Its log (ProxyRequest) records each tunnel or forwarded
// request with the target asked for, the Host header of a CONNECT, the
// user and the proxy's own address on the upstream connection, which the
// web's log shows as the client's (Request.Remote): a test matches the
// two to prove every request went through the proxy. By default it
// connects to loopback IP addresses only; Web.DialAt lets it reach the
// web at a stand-in public address, so that a fetcher that refuses
// private targets can still be tested against the web through it:
//
//	ip := netip.MustParseAddr("192.88.99.7") // resolve the web's names to this
//	p := fetchtest.NewProxy(fetchtest.ProxyConfig{Dial: w.DialAt(ip)})
//	defer p.Close()
//	// a fetcher with Proxy p.HTTPURL() or p.SOCKS5URL(), its targets judged public
package fetchtest
