package fetchtest

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// locate parses a URL of the web. ok is false for URLs of other servers.
func (w *Web) locate(raw string) (h *hostInfo, path, rawQuery string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Port() != w.port {
		return nil, "", "", false
	}
	h = w.lookupHost(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")))
	if h == nil {
		return nil, "", "", false
	}
	path = u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return h, path, u.RawQuery, true
}

func pathQuery(path, rawQuery string) string {
	if rawQuery == "" {
		return path
	}
	return path + "?" + canonQuery(rawQuery)
}

// canonical is the form of URLs in the ground truth: absolute, host in lower
// case, no fragment, query parameters sorted.
func canonical(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	c.Host = strings.ToLower(c.Host)
	if c.RawQuery != "" {
		c.RawQuery = canonQuery(c.RawQuery)
	}
	if c.Path == "" && c.Opaque == "" {
		c.Path = "/"
	}
	return c.String()
}

// Pages returns the URL of every resource of the finite web that answers 200:
// the pages of the ordinary hosts (HTML, PDF, PNG and JSON, near-duplicate
// articles included), their copies on the mirror hosts, the pages of the
// legacy-charset hosts and, with Config.Javadoc, of the Javadoc host and,
// with Config.Aliases, the distinct pages of the Aliases site, each once
// under its canonical URL (see Canonical), sorted. Trap hosts, redirects,
// error statuses, robots.txt and sitemaps are not pages. Generates every
// host's model on first call: O(total pages).
func (w *Web) Pages() []string {
	var out []string
	for _, h := range w.ordinary {
		for _, p := range h.model().pages {
			out = append(out, w.URL(h.name, p.path))
		}
	}
	for _, m := range w.mirrors {
		for _, p := range m.model().pages {
			out = append(out, w.URL(m.name, p.path))
		}
	}
	for _, label := range []string{Latin1, Windows1252} {
		for j := range charsetPages {
			out = append(out, w.URL(w.Host(label), charsetPath(j)))
		}
	}
	if w.cfg.Javadoc {
		for _, p := range javadocPages {
			out = append(out, w.URL(w.Host(Javadoc), p.path))
		}
	}
	if w.cfg.Aliases {
		out = append(out, w.aliasPages()...)
	}
	if w.cfg.Canonicals {
		for i := range canonTable {
			out = append(out, w.canonURL(i))
		}
	}
	out = append(out, w.scriptPages()...)
	slices.Sort(out)
	return out
}

// SitemapOnlyPages returns the pages (see Pages) that no page links to
// and only their host's sitemaps list (Config.SitemapOnly), mirrors'
// copies included, sorted; nil without Config.SitemapOnly.
func (w *Web) SitemapOnlyPages() []string {
	var out []string
	for _, h := range append(slices.Clip(w.ordinary), w.mirrors...) {
		m := h.model()
		for _, p := range m.pages[m.linked:] {
			out = append(out, w.URL(h.name, p.path))
		}
	}
	slices.Sort(out)
	return out
}

// PagesOf returns the URLs of the pages of one host, in generation order
// (the home page first); nil for hosts without a finite page set, and for
// www.alias.<Domain>, all of whose URLs are aliases of the pages of the
// Aliases host.
func (w *Web) PagesOf(host string) []string {
	h := w.lookupHost(strings.ToLower(host))
	if h == nil {
		return nil
	}
	var out []string
	switch h.kind {
	case kindOrdinary, kindMirror:
		for _, p := range h.model().pages {
			out = append(out, w.URL(h.name, p.path))
		}
	case kindLatin1, kindCP1252:
		for j := range charsetPages {
			out = append(out, w.URL(h.name, charsetPath(j)))
		}
	case kindJavadoc:
		for _, p := range javadocPages {
			out = append(out, w.URL(h.name, p.path))
		}
	case kindAlias:
		if h.name == w.Host(Aliases) {
			out = w.aliasPages()
		}
	case kindCanon:
		mobile := h.name == w.canonMobileHost()
		for i, p := range canonTable {
			if p.mobile == mobile {
				out = append(out, w.canonURL(i))
			}
		}
	case kindApp, kindShop:
		prefix := w.base(h.name)
		for _, u := range w.scriptPages() {
			if strings.HasPrefix(u, prefix+"/") {
				out = append(out, u)
			}
		}
	}
	return out
}

// Links returns the out-links of pageURL as a correct parser sees them: the
// href of every <a> element (those inside <noscript> included, as a browser
// with scripting disabled reads them; not those a script writes) resolved
// (RFC 3986) against the document's base
// URL (pageURL, or its <base href> where a page has one), fragment
// removed, host lower-cased, query parameters sorted; duplicates removed, in
// order of first appearance. Anchors without href and hrefs of other
// schemes (mailto:, javascript:, tel:, which some pages carry) are not links. For a redirect it returns the Location target.
// It returns nil for URLs that are not pages or redirects, and for trap
// pages (whose links are generated endlessly; see Traps).
func (w *Web) Links(pageURL string) []string { return w.links(pageURL, false) }

// RenderedLinks returns the out-links of pageURL as a browser sees them
// once the page's scripts have run (in the same form as Links): the links
// of its HTML, and on the hosts of Config.Scripts those its scripts write
// too. Elsewhere it equals Links: the javadoc pages' scripts write the
// very links their <NOSCRIPT> holds.
func (w *Web) RenderedLinks(pageURL string) []string { return w.links(pageURL, true) }

func (w *Web) links(pageURL string, rendered bool) []string {
	h, path, q, ok := w.locate(pageURL)
	if !ok {
		return nil
	}
	base, _ := url.Parse(pageURL)
	rt := w.route(h, path, q)
	var links []link
	switch rt.kind {
	case routePage:
		o := h
		if h.kind == kindMirror {
			o = w.ordinary[h.index]
		}
		links = w.pageLinks(o, rt.page)
		if href, _ := w.pageBase(o, rt.page); href != "" {
			ref, _ := url.Parse(href)
			base = base.ResolveReference(ref)
		}
	case routeCharset:
		links = w.charsetLinks(h, rt.page)
	case routeJavadoc:
		links = javadocLinks(rt.page)
	case routeAlias:
		links = w.aliasLinks(rt.page)
	case routeCanon:
		links = w.canonLinks(rt.page)
	case routeScript:
		links, _ = w.scriptLinks(h, path, false)
		if rendered {
			more, _ := w.scriptLinks(h, path, true)
			links = append(links, more...)
		}
	case routeRedirect:
		links = []link{{href: rt.location}}
	default:
		return nil
	}
	seen := make(map[string]bool, len(links))
	out := make([]string, 0, len(links))
	for _, l := range links {
		ref, err := url.Parse(l.href)
		if err != nil {
			continue
		}
		s := canonical(base.ResolveReference(ref))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Status returns the status the web answers for rawURL without conditional
// headers (200 for pages and trap pages, the redirect code for redirects,
// robots.txt's status for robots.txt), or 0 for a URL that is not on the web.
func (w *Web) Status(rawURL string) int {
	h, path, q, ok := w.locate(rawURL)
	if !ok {
		return 0
	}
	return w.route(h, path, q).status
}

// Traps returns the URL prefixes of the spider traps, one per trap host
// ("http://trap-calendar.sim.test:PORT/", ...), and last, when
// Config.SubdomainTrap is set, the URL of the bare trap domain
// ("http://explode.test:PORT/"), which stands for every host under that
// domain as well: its URLs share a host suffix, not a prefix (IsTrap
// knows). Every URL under them answers (the set is infinite), none is in
// Pages or Reachable; a robust crawler's fetches under each prefix stay
// bounded (per host for the first three, per registrable domain for the
// subdomain trap).
func (w *Web) Traps() []string {
	out := []string{
		w.URL(w.Host(CalendarTrap), "/"),
		w.URL(w.Host(DeepTrap), "/"),
		w.URL(w.Host(SessionTrap), "/"),
	}
	if w.cfg.SubdomainTrap != "" {
		out = append(out, w.URL(w.cfg.SubdomainTrap, "/"))
	}
	return out
}

// IsTrap reports whether rawURL is a URL of the web under one of the Traps
// prefixes, or on any host of the subdomain trap.
func (w *Web) IsTrap(rawURL string) bool {
	h, _, _, ok := w.locate(rawURL)
	return ok && (h.kind == kindCalendar || h.kind == kindSession || h.kind == kindDeep || h.kind == kindSubdomain)
}

// Allowed reports whether the robots.txt of rawURL's host, as the web serves
// it, lets agent (a product token; a full User-Agent is reduced to its token)
// fetch rawURL: RFC 9309 group selection, longest match with allow winning
// ties, '*' and '$', a 4xx robots.txt allowing everything and a 5xx one
// forbidding everything. robots.txt itself is always allowed.
func (w *Web) Allowed(agent, rawURL string) bool {
	h, path, q, ok := w.locate(rawURL)
	if !ok {
		return true
	}
	pq := pathQuery(path, q)
	return isRobotsPath(h, pq) || allowedBy(robotsOf(h), agent, pq)
}

// RobotsVariant names the robots.txt behaviour of host: "plain", "prefix",
// "allow-override", "wildcard", "crawl-delay", "404", "5xx", "redirect",
// "agents" for ordinary hosts (hNNN has variant NNN mod 9) and mirrors,
// "allow-all" for the charset hosts, "none" (404) for the other special hosts
// and the hosts of the subdomain trap, and "" for unknown hosts.
func (w *Web) RobotsVariant(host string) string {
	h := w.lookupHost(strings.ToLower(host))
	if h == nil {
		return ""
	}
	if v := robotsOf(h); v != nil {
		return v.name
	}
	return "none"
}

// Robots returns what a client that follows redirects gets for host's
// robots.txt: the final status and body (empty unless the status is 200).
func (w *Web) Robots(host string) (status int, body string) {
	h := w.lookupHost(strings.ToLower(host))
	if h == nil {
		return 0, ""
	}
	v := robotsOf(h)
	if v == nil {
		return 404, ""
	}
	if v.status >= 400 {
		return v.status, ""
	}
	return 200, w.renderRobots(v, w.robotsHost(h))
}

// CrawlDelay returns the Crawl-delay host's robots.txt announces, or 0.
func (w *Web) CrawlDelay(host string) time.Duration {
	h := w.lookupHost(strings.ToLower(host))
	if h == nil {
		return 0
	}
	return w.crawlDelayOf(robotsOf(h))
}

// Reachable returns the pages (see Pages) a crawler identifying as agent
// reaches from seeds (Seeds() if none are given) by following links and
// redirects, never fetching a URL the robots.txt of its host forbids to
// agent (see Allowed; a redirect target is checked like any URL) and never
// entering a trap. A page of the Aliases site is listed once, under its
// canonical URL, however many of its aliases the links reach. Sorted.
// O(pages + links).
func (w *Web) Reachable(agent string, seeds ...string) []string {
	return w.reachable(agent, false, seeds)
}

// ReachableRendered is Reachable for a crawler that renders every page,
// following RenderedLinks instead of Links: on the hosts of
// Config.Scripts it reaches the pages only scripts link to.
func (w *Web) ReachableRendered(agent string, seeds ...string) []string {
	return w.reachable(agent, true, seeds)
}

// RenderOnly returns the pages ReachableRendered finds and Reachable
// does not: those a crawler finds only by running the pages' scripts.
// Sorted; empty without Config.Scripts.
func (w *Web) RenderOnly(agent string, seeds ...string) []string {
	static := w.Reachable(agent, seeds...)
	var out []string
	for _, u := range w.ReachableRendered(agent, seeds...) {
		if _, found := slices.BinarySearch(static, u); !found {
			out = append(out, u)
		}
	}
	return out
}

func (w *Web) reachable(agent string, rendered bool, seeds []string) []string {
	if len(seeds) == 0 {
		seeds = w.Seeds()
	}
	seen := make(map[string]bool)
	listed := make(map[string]bool) // canonical URLs of the Aliases site
	var queue, out []string
	push := func(s string) {
		if !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for _, s := range seeds {
		if u, err := url.Parse(s); err == nil {
			push(canonical(u))
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		h, path, q, ok := w.locate(u)
		if !ok || w.IsTrap(u) || !w.Allowed(agent, u) {
			continue
		}
		switch rt := w.route(h, path, q); rt.kind {
		case routePage, routeCharset, routeJavadoc, routeCanon, routeScript:
			out = append(out, u)
		case routeAlias:
			if c := w.aliasURL(rt.page); !listed[c] {
				listed[c] = true
				out = append(out, c)
			}
		case routeRedirect:
		default:
			continue
		}
		for _, l := range w.links(u, rendered) {
			push(l)
		}
	}
	slices.Sort(out)
	return out
}

// ExactDuplicates returns the clusters of URLs whose bodies are
// byte-identical: each page of a mirrored host with its copy on every mirror
// of it. Each cluster is sorted, clusters by first URL. (A page reached with
// its query parameters in another order is the same page, not a duplicate;
// so are the countless URL aliases of the Aliases site: see Canonical.)
func (w *Web) ExactDuplicates() [][]string {
	by := make(map[int][]*hostInfo)
	for _, m := range w.mirrors {
		by[m.index] = append(by[m.index], m)
	}
	var out [][]string
	for o, ms := range by {
		origin := w.ordinary[o]
		for _, p := range origin.model().pages {
			c := []string{w.URL(origin.name, p.path)}
			for _, m := range ms {
				c = append(c, w.URL(m.name, p.path))
			}
			slices.Sort(c)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// NearDuplicates returns the clusters of near-duplicate pages: the same
// article (same title and eight paragraphs of story) published on 2–4 hosts,
// differing in the date line, the advertisement and the path, and, with
// Config.Aliases, the API class pages of the Aliases site (one template,
// a small part of each page its own). No member is also an exact
// duplicate. Each cluster sorted, clusters by first URL.
func (w *Web) NearDuplicates() [][]string {
	var out [][]string
	for _, cl := range w.clusters {
		var c []string
		for _, m := range cl.members {
			c = append(c, w.URL(w.ordinary[m.host].name, m.path))
		}
		slices.Sort(c)
		out = append(out, c)
	}
	if w.cfg.Aliases {
		out = append(out, w.aliasClassPages())
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// Title returns the title of the page at rawURL as its HTML carries it
// (decoded to UTF-8 for the charset hosts; the document title for PDF, PNG
// and JSON resources), or "" if rawURL is not a page.
func (w *Web) Title(rawURL string) string {
	h, path, q, ok := w.locate(rawURL)
	if !ok {
		return ""
	}
	rt := w.route(h, path, q)
	switch rt.kind {
	case routePage:
		o := h
		if h.kind == kindMirror {
			o = w.ordinary[h.index]
		}
		if o.model().pages[rt.page].kind == pageArticle {
			return w.clusterTitle(o.synd[rt.page-o.nbase].cluster)
		}
		return w.pageTitle(o.index, rt.page)
	case routeCharset:
		return w.charsetTitle(h, rt.page)
	case routeJavadoc:
		return javadocPages[rt.page].title
	case routeAlias:
		return w.aliasTitle(rt.page)
	case routeCanon:
		return w.canonTitle(rt.page)
	case routeScript:
		return w.scriptTitle(h, path)
	}
	return ""
}

// ChangePeriod returns how often the page at rawURL changes: 0 for pages
// that never change (and for anything that is not a page). A page with
// period P gets a new version every P, at a phase of its own.
func (w *Web) ChangePeriod(rawURL string) time.Duration {
	o, j := w.pageOf(rawURL)
	if o == nil {
		return 0
	}
	return o.model().pages[j].period
}

// Version returns the current version number of the page at rawURL (by
// Config.Clock) and when that version appeared; pages that never change are
// at version 0 since 2026-01-01.
func (w *Web) Version(rawURL string) (int64, time.Time) {
	o, j := w.pageOf(rawURL)
	if o == nil {
		return 0, time.Time{}
	}
	return w.version(o.index, j, o.model().pages[j].period)
}

func (w *Web) pageOf(rawURL string) (*hostInfo, int) {
	h, path, q, ok := w.locate(rawURL)
	if !ok {
		return nil, 0
	}
	rt := w.route(h, path, q)
	if rt.kind != routePage {
		return nil, 0
	}
	if h.kind == kindMirror {
		h = w.ordinary[h.index]
	}
	return h, rt.page
}
