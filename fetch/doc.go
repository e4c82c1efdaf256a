// Package fetch is the fetch and parse modules of the book's Figure 20.1
// (§20.2.1): an HTTP fetcher hardened against hostile servers, and parsers
// that extract the text and the links of a page.
//
// # Fetching
//
// A Fetcher fetches one URL. HTTP, the default, runs on net/http, resolves
// host names through a dns.Resolver and dials only the addresses it
// returned, after refusing private, loopback, link-local, multicast and
// unspecified ones (unless Options.AllowPrivate): the check is on the
// address actually dialed, so DNS rebinding cannot slip past it. Every
// limit has a default: body size (10 MiB; a longer body is cut and the
// response marked Truncated), header size, connect, first-byte and total
// timeouts, a minimum transfer rate, and the decompression ratio that stops
// gzip bombs.
//
//	f := fetch.NewHTTP(&fetch.Options{UserAgent: "mybot/1.0 (+https://example.com/bot)"})
//	defer f.Close()
//	resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
//	var fe *fetch.Error
//	if errors.As(err, &fe) && fe.Kind == fetch.KindTimeout { ... }
//
// Redirects are not followed: the crawler gets the 3xx status with the
// resolved Location and sends the target through its URL filter and
// duplicate check like any other link. Re-crawls send the ETag and
// Last-Modified of the previous response and get 304 Not Modified when the
// page has not changed. Text bodies are converted to UTF-8 from whatever
// charset the header, a <meta> tag or, failing both, the bytes say
// (windows-1252, which is what "latin-1" means on the web); with
// Options.KeepWire the body as the server sent it (compressed, in its own
// charset) is kept beside, for archives. Each response
// carries its timings; politeness waits a multiple of the fetch time before
// the next request to the host.
//
// Every failure is a *Error whose Kind says what happened (timeout, too
// large, refused address, DNS, TLS, reset, ...), for counting and retry
// decisions without parsing messages.
//
// Static is a second Fetcher, serving fixed responses from memory.
//
// # Sessions, headers and proxies
//
// All of these are off by default. Options.Jar keeps cookies between
// fetches (net/http/cookiejar with golang.org/x/net/publicsuffix makes
// one), so a crawl keeps a session: every answer's cookies go in, a
// redirect's too, and each request carries what the jar's domain, path
// and Secure rules give its URL. PostForm sends a form the way a login
// page does, through the same guard, proxy, limits and jar; logging in
// before a crawl is one call:
//
//	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
//	f := fetch.NewHTTP(&fetch.Options{Jar: jar})
//	resp, err := f.PostForm(ctx, loginURL, url.Values{"user": {u}, "password": {pw}})
//	// resp.Status 303 and a session cookie in the jar; crawl on with f
//
// Options.Prepare is the hook for whatever must happen to each request
// (a token to refresh, a signature, a login made when first needed).
// Options.Header and HostHeader add request headers to every request and
// to the requests of one host; the headers the fetcher owns (User-Agent,
// Accept-Encoding, the conditional ones, the hop-by-hop ones) cannot be
// set there: robots.txt rules are matched against one announced agent,
// and the fetcher decodes gzip itself, within its limits. Validate and
// ParseHeader report bad headers as errors wrapping ErrOption.
//
// Options.Proxy sends connections through an HTTP (CONNECT) or SOCKS5
// proxy, chosen per URL; ParseProxy checks a proxy URL and ProxyURL makes
// the common one-proxy choice. The guard still judges every target: the
// fetcher resolves the name itself, refuses private addresses (unless
// AllowPrivate) and asks the proxy for a tunnel to the address it judged,
// never to the name, so neither DNS rebinding nor the proxy's resolver
// can take a fetch elsewhere (HTTP CONNECT IP:port with the name in the
// Host header; SOCKS5 CONNECT to the IP; socks5h, which would have the
// proxy resolve names, is refused). The proxy's own address is judged
// too: a proxy on a loopback or private address needs AllowPrivateProxy
// (or AllowPrivate). Plain http goes through a CONNECT tunnel as well,
// not as a forwarded request, since a forwarding proxy resolves the name
// itself. Proxy failures are KindProxy; a target the proxy reports
// refused or unreachable is KindConnect, as without a proxy; the
// *ProxyError carries the proxy's answer.
//
// # Parsing
//
// A Parser turns a response into a Document: title, visible text, language,
// robots directives (meta robots, X-Robots-Tag) and the outgoing links with
// their anchor text and rel, resolved against the first <base href> and the
// page URL with urlnorm.Resolve (as browsers resolve them). HTML runs the
// golang.org/x/net/html tokenizer without building a tree and reads tags
// from the raw token bytes, so it allocates per link, not per token. It
// reads a page as a browser with scripting disabled does, so the links
// inside <noscript> are found; <link rel> canonical, alternate (with its
// hreflang), next and prev are links too. A page's links are capped
// (HTML.MaxLinks, 100000 by default); Document.LinksDropped counts the
// ones a page lost to the cap. Sitemap reads XML urlsets and
// sitemap indexes (gzip too) and text sitemaps, with caps on size and
// entries. ByType picks one of them by content type. ParseLinkHeader reads
// the links of HTTP Link headers (RFC 8288), the way any resource, a PDF
// too, names its rel=canonical URL.
//
//	var p fetch.ByType
//	doc, err := p.Parse(resp)
//	for _, l := range doc.Links {
//		if !doc.NoFollow && !l.HasRel("nofollow") {
//			// to the URL filter, with l.Text as anchor text for the index
//		}
//	}
//
// # Selectors and structured extraction
//
// ParseDOM builds a page's element tree (golang.org/x/net/html) for CSS
// selectors (github.com/andybalholm/cascadia): an Element has Text, Attr,
// ChildText, ChildAttr, Find and ForEach, and Follow, which records a link
// for the crawler running the page's handlers (crawlkit.Config.OnHTML).
// Unmarshal fills a struct from `selector` and `attr` tags, nested structs
// and slices included. The HTML Parser does not build the tree: a page
// costs it only when someone queries the page (ParseDOM is about 2.8 times
// the CPU of HTML.Parse; BenchmarkDOM).
//
//	dom, err := fetch.ParseDOM(resp.Body, resp.URL, false)
//	var p struct {
//		Name  string   `selector:"h1.product-title"`
//		Price float64  `selector:"meta[itemprop=price]" attr:"content"`
//		Tags  []string `selector:"ul.tags li"`
//	}
//	err = fetch.Unmarshal(dom.Root(), &p)
//
// # Main text
//
// Document.Text is every visible word of a page, menus and footers
// included. DOM.MainText keeps the main content only (the article, the
// post, the product description, the thread), and MainTextParser wraps a
// Parser so that Document.Text, and so the index, gets it; off by
// default, since it parses each page a second time (0.12 against 0.026 ms
// a page). On the hand-marked pages of testdata/maintext its token-level
// precision is 0.95 at recall 0.96, against 0.64 precision for the plain
// text (BenchmarkMainText; go-readability, compared in bench/, has 0.92
// and 0.98 at 0.71 ms a page).
//
//	cfg.Parser = &fetch.MainTextParser{Parser: &fetch.Registry{}}
//
// Package fetch/lang detects a page's language for Document.Lang.
package fetch
