// Package render is a fetch.Fetcher that runs pages' scripts in headless
// Chromium and returns the document they leave: the links and text of a
// web application that only scripts write. It drives the browser over the
// Chrome DevTools protocol (github.com/chromedp/chromedp); the browser
// never touches the network itself.
//
//	static := fetch.NewHTTP(nil)
//	f, err := render.New(&render.Options{Static: static, Policy: render.Adaptive{}})
//	if err != nil { ... } // render.ErrNoBrowser without Chromium
//	defer f.Close()
//	resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
//	doc, err := (&fetch.HTML{Scripting: resp.Rendered}).Parse(resp)
//
// # A page's way
//
// Fetch first fetches the page through Options.Static, once. An answer
// that is not a 200 HTML page, or a page the Policy does not pick, is
// returned as it is. Otherwise the page waits for a tab (at most
// Options.Tabs are open; each in a browser context of its own, so no
// cookie, storage or cache passes from page to page), the tab navigates
// to the URL, and the document request is answered with the bytes
// already fetched. When the page has loaded and made no request for
// Options.Quiet, the DOM is serialised (doctype and
// document.documentElement.outerHTML, at most Options.MaxBodySize) into
// Response.Body, with Rendered set. Status, Header, Wire, WireBytes,
// Timings, ETag and the rest stay those of the static answer: the crawl
// archives and times what the server sent. Response.Subresources lists
// the answers fetched for the page's own requests, in order.
//
// # Interception
//
// Every request of a tab pauses (the protocol's Fetch domain, pattern
// "*") and is answered by the Fetcher: from the static answer for the
// document, from the cache, or by a GET through Options.Static, whose
// guard against private addresses, proxy, cookies, user agent and size
// limits therefore hold for the browser as for the crawler. Requests
// other than GET, of another scheme than http and https (data: and
// blob: are made from the page's own bytes and go on), of a kind outside
// Options.Resources (images, fonts and media by default), past
// Options.MaxRequests, or navigating the page away fail in the browser
// as blocked by the client. The browser runs with a proxy and resolver
// rules that lead nowhere, so that a request interception misses (a
// worker's, a WebSocket) fails instead of reaching a server.
//
// # Politeness
//
// A page's requests go out one at a time, in the order the browser makes
// them: a render never has two requests in flight. Each first passes the
// Gate (fetch.Gate; see SetGate), is sent once Admit returns and released
// when its answer has been read; a refused request fails in the browser,
// and the page renders without it. The crawl holds the politeness slot of
// the page's host during Fetch, so the requests to that host, one at a
// time, are inside that slot: the crawl's Gate checks robots.txt for
// every request, and waits for the politeness of other hosts; for the
// page's own host it must not wait for the slot the crawl already holds.
// Without a Gate, the default admits the page's host only (others fail,
// Stats.Refused) unless Options.ThirdParty, and waits for nothing.
//
// # Policy
//
// Rendering costs a tab, a CPU and some 0.4 s a page on a 2-core machine
// (docs/RENDERING.md), against a few milliseconds for a static fetch.
// Options.Policy says which pages are worth it: Always (the default),
// Never, Hosts, Pattern, Adaptive (pages with little text before their
// scripts run and at least one script: application shells) or a
// PolicyFunc. Stats counts the decisions.
//
// # Cache
//
// The pages of a site share their scripts and styles. A successful answer
// for a script, style, font or image is kept (least recently used out
// first, Options.CacheBytes in all) for its max-age or Options.CacheTTL,
// unless Cache-Control says no-store or no-cache; other answers (HTML,
// the JSON a script fetches) only when max-age or Expires allow it. A
// request the cache answers is not made and not listed in Subresources
// again: the page that fetched it listed it.
//
// # Limits
//
// A page that has not loaded by Options.PageTimeout (a script that never
// returns is stopped first) is returned as fetched; one that loaded but
// whose requests never settle (long polling, a server that holds its
// answer) is returned with the DOM it has. Both count in Stats.Timeouts.
// A tab that crashes (a heap past Options.MaxHeapMB, a killed renderer)
// gives the page as fetched and counts in Stats.Crashes; a browser that
// dies is started again at the next page (Stats.Restarts). A page is
// never lost to rendering: Fetch returns an error only when Static does,
// or when the caller's context ends. JavaScript dialogs are dismissed,
// pop-ups blocked. Requests made from a setTimeout later than Quiet after
// the last answer are not waited for, and the requests of workers are not
// intercepted (they fail).
//
// The browser is one Chromium process per Fetcher (found by FindBrowser,
// or Options.Browser), headless, without sandbox when run as root, with a
// temporary profile and TMPDIR removed by Close. Close ends the renders in
// progress (their pages are returned as fetched) and returns within
// seconds whatever the pages do.
package render
