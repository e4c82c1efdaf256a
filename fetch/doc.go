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
package fetch
