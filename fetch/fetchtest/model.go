package fetchtest

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

type pageKind uint8

const (
	pageHTML pageKind = iota
	pagePDF
	pagePNG
	pageJSON
	pageArticle // a member of a near-duplicate cluster
)

type page struct {
	path   string // path and canonical (sorted) query
	kind   pageKind
	synd   int32 // index into hostInfo.synd for articles, else -1
	period time.Duration
}

// hostModel is the generated page set of an ordinary host (shared by its
// mirrors). Immutable once built.
type hostModel struct {
	pages     []page
	linked    int // pages[:linked] are linked; the rest are sitemap-only (Config.SitemapOnly)
	byPath    map[string]int32
	childOff  []int32 // children of p: childList[childOff[p]:childOff[p+1]]
	childList []int32
}

// cluster is a near-duplicate cluster: one article published on several hosts.
type cluster struct {
	slug    string
	members []syndMember
}

type syndMember struct {
	host int
	path string
}

type syndRef struct {
	cluster, member int
}

// chain is a redirect chain on the Redirects host ending on an ordinary page.
type chain struct {
	length int
	host   int
	page   int
}

// Directories an ordinary HTML page may live in; the robots variants refer to
// several of them.
var dirs = []string{"/", "/news/", "/news/", "/blog/", "/blog/2025/03/", "/docs/",
	"/docs/guide/", "/private/", "/shop/", "/archive/2018/", "/archive/2019/",
	"/archive/2020/", "/about/"}

// pageSpec returns the path and kind of base page j of ordinary host i: a pure
// function of the seed, so links to a host's pages need not build its model.
func (w *Web) pageSpec(i, j int) (string, pageKind) {
	if j == 0 {
		return "/", pageHTML
	}
	r := newRNG(w.seed, tagSpec, i, j)
	x := r.intn(100)
	slug := r.word() + "-" + r.word() + "-" + strconv.Itoa(j)
	switch {
	case x < 5:
		if r.intn(2) == 0 {
			return "/docs/" + slug + ".pdf", pagePDF
		}
		return "/papers/" + slug + ".pdf", pagePDF
	case x < 8:
		return "/img/" + slug + ".png", pagePNG
	case x < 12:
		return "/api/" + slug + ".json", pageJSON
	case x < 17:
		p := "/search?page=" + strconv.Itoa(j) + "&q=" + r.word()
		if r.intn(2) == 0 {
			p += "&sort=date"
		}
		return p, pageHTML
	default:
		return dirs[r.intn(len(dirs))] + slug + ".html", pageHTML
	}
}

// pageTitle is the title of base page j of ordinary host i.
func (w *Web) pageTitle(i, j int) string {
	r := newRNG(w.seed, tagTitle, i, j)
	t := r.title(2 + r.intn(4))
	if j == 0 {
		return t + " | " + w.ordinary[i].name
	}
	return t
}

// sitemapOnly returns the number of sitemap-only pages of a host with
// nbase base pages: none without Config.SitemapOnly.
func (w *Web) sitemapOnly(nbase int) int {
	if !w.cfg.SitemapOnly {
		return 0
	}
	return 1 + nbase/8
}

// sitemapOnlyPath is the path of sitemap-only page k of ordinary host i.
func (w *Web) sitemapOnlyPath(i, k int) string {
	r := newRNG(w.seed, tagSitemapOnly, i, k)
	return "/more/" + r.word() + "-" + r.word() + "-" + strconv.Itoa(k) + ".html"
}

func (w *Web) buildModel(h *hostInfo) *hostModel {
	n := h.nbase + len(h.synd)
	all := n + w.sitemapOnly(h.nbase)
	m := &hostModel{pages: make([]page, all), linked: n, byPath: make(map[string]int32, all)}
	parent := make([]int32, n)
	for j := range all {
		p := page{synd: -1}
		if j >= n {
			p.path, p.kind = w.sitemapOnlyPath(h.index, j-n), pageHTML
		} else if j < h.nbase {
			p.path, p.kind = w.pageSpec(h.index, j)
			if j > 0 {
				r := newRNG(w.seed, tagParent, h.index, j)
				parent[j] = int32(r.float() * float64(j))
			}
		} else {
			s := int32(j - h.nbase)
			ref := h.synd[s]
			p.path, p.kind, p.synd = w.clusters[ref.cluster].members[ref.member].path, pageArticle, s
		}
		if p.kind == pageHTML {
			r := newRNG(w.seed, tagPeriod, h.index, j)
			p.period = w.cfg.ChangePeriods[r.intn(len(w.cfg.ChangePeriods))]
		}
		m.pages[j] = p
		m.byPath[p.path] = int32(j)
	}
	m.childOff = make([]int32, n+1)
	for j := 1; j < n; j++ {
		m.childOff[parent[j]+1]++
	}
	for p := range n {
		m.childOff[p+1] += m.childOff[p]
	}
	m.childList = make([]int32, n)
	fill := make([]int32, n)
	for j := 1; j < n; j++ {
		p := parent[j]
		m.childList[m.childOff[p]+fill[p]] = int32(j)
		fill[p]++
	}
	m.childList = m.childList[:m.childOff[n]]
	return m
}

// children returns the pages p is the parent of (none for a sitemap-only
// page).
func (m *hostModel) children(p int) []int32 {
	if p >= m.linked {
		return nil
	}
	return m.childList[m.childOff[p]:m.childOff[p+1]]
}

// placeClusters spreads the near-duplicate articles over ordinary hosts that
// are not mirrored (so an article never also has an exact duplicate).
func (w *Web) placeClusters() {
	mirrored := make(map[int]bool)
	for _, m := range w.mirrors {
		mirrored[m.index] = true
	}
	var eligible []int
	for i := range w.ordinary {
		if !mirrored[i] {
			eligible = append(eligible, i)
		}
	}
	if len(eligible) < 2 {
		return
	}
	prefixes := []string{"/stories/", "/news/", "/wire/", "/blog/"}
	for c := range w.cfg.NearDuplicates {
		r := newRNG(w.seed, tagPlacement, c, 0)
		size := min(2+r.intn(3), len(eligible))
		cl := cluster{slug: r.word() + "-" + r.word() + "-" + r.word()}
		used := make(map[int]bool)
		for len(cl.members) < size {
			hi := eligible[r.intn(len(eligible))]
			if used[hi] {
				continue
			}
			used[hi] = true
			path := prefixes[len(cl.members)%len(prefixes)] + cl.slug + "-" + strconv.Itoa(c) + ".html"
			w.ordinary[hi].synd = append(w.ordinary[hi].synd, syndRef{c, len(cl.members)})
			cl.members = append(cl.members, syndMember{host: hi, path: path})
		}
		w.clusters = append(w.clusters, cl)
	}
}

func (w *Web) makeChains() {
	for c := range 8 {
		r := newRNG(w.seed, tagChain, c, 0)
		t := r.intn(len(w.ordinary))
		w.chains = append(w.chains, chain{length: 1 + c%5, host: t, page: r.intn(w.ordinary[t].nbase)})
	}
}

var redirectCodes = []int{301, 302, 307, 308}

// navLinks is the size of every page's navigation bar.
const navLinks = 3

// link is one <a href> of a generated page.
type link struct {
	href string
	text string
}

// buildSpecials lists the entry point of every special-purpose resource;
// h000's home page links to all of them and other pages to some.
func (w *Web) buildSpecials() {
	add := func(host, path, text string) {
		w.specials = append(w.specials, link{w.URL(host, path), text})
	}
	for c := range w.chains {
		add(w.Host(Redirects), "/chain/"+strconv.Itoa(c)+"/0", "moved story "+strconv.Itoa(c))
	}
	add(w.Host(Redirects), "/loop/0/0", "round trip")
	add(w.Host(Redirects), "/loop/1/0", "self reference")
	for _, code := range []int{404, 410, 429, 500, 503} {
		add(w.Host(Statuses), "/"+strconv.Itoa(code)+"/page", "status "+strconv.Itoa(code))
	}
	add(w.Host(CalendarTrap), "/calendar/2026/01", "events calendar")
	add(w.Host(SessionTrap), "/", "members area")
	add(w.Host(DeepTrap), "/d/", "file browser")
	add(w.Host(Latin1), "/", "caf\u00e9 fran\u00e7ais")
	add(w.Host(Windows1252), "/", "\u201cquoted\u201d pages")
	for _, m := range w.mirrors {
		add(m.name, "/", "mirror of "+w.ordinary[m.index].name)
	}
	if w.cfg.Javadoc {
		add(w.Host(Javadoc), "/", "API documentation")
	}
	if w.cfg.Aliases {
		add(w.Host(Aliases), "/", "project site")
	}
	if w.cfg.Canonicals {
		add(w.Host(Canonicals), "/", "press")
	}
	if w.cfg.Scripts {
		add(w.Host(ScriptApp), "/", "web application")
		add(w.Host(Shop), "/", "online shop")
	}
	if w.cfg.LinkHostile {
		for _, p := range hostilePaths {
			add(w.Host(Hostile), p, "download "+strings.Trim(p, "/"))
		}
	}
	if w.cfg.SubdomainTrap != "" {
		add(subdomainEntry+"."+w.cfg.SubdomainTrap, "/", "community sites")
	}
}

// pageLinks returns the links of page j of ordinary host h (HTML pages only).
// A pure function of the seed and the server port.
func (w *Web) pageLinks(h *hostInfo, j int) []link {
	m := h.model()
	p := m.pages[j]
	if p.kind != pageHTML && p.kind != pageArticle {
		return nil
	}
	r := newRNG(w.seed, tagLinks, h.index, j)
	var out []link
	// Relative links are written against the document's base: its own
	// path, or the directory its <base href> names.
	from := p.path
	if _, dir := w.pageBase(h, j); dir != "" {
		from = dir
	}
	same := func(t int) {
		var text string
		if t < h.nbase {
			text = w.pageTitle(h.index, t)
		} else {
			text = w.clusterTitle(w.ordinary[h.index].synd[t-h.nbase].cluster)
		}
		out = append(out, link{w.sameHref(&r, h, from, m.pages[t].path), text})
	}
	if j != 0 {
		out = append(out, link{w.sameHref(&r, h, from, "/"), "Home"})
	}
	if p.kind == pageArticle {
		return out
	}
	// The site's navigation bar: its first sections on every page, which
	// gives a host's top pages the high in-degree real templates give them.
	for t := 1; t < min(navLinks+1, h.nbase); t++ {
		if t != j {
			same(t)
		}
	}
	for _, c := range m.children(j) {
		same(int(c))
	}
	for range 1 + r.intn(6) {
		same(r.intn(m.linked))
	}
	cross := func(t, tj int) {
		th := w.ordinary[t]
		path, _ := w.pageSpec(t, tj)
		host := th.name
		if r.intn(20) == 0 {
			host = strings.ToUpper(host)
		}
		href := w.base(host) + path
		if r.intn(5) == 0 {
			href = "//" + host + ":" + w.port + path
		}
		out = append(out, link{href, w.pageTitle(t, tj)})
	}
	for range r.intn(4) {
		t := w.pickHost(&r)
		u := r.float()
		cross(t, int(float64(w.ordinary[t].nbase)*u*u*u))
	}
	if j == 0 && len(w.ordinary) > 1 {
		cross((h.index+1)%len(w.ordinary), 0)
		if len(w.ordinary) > 2 {
			cross((h.index+2)%len(w.ordinary), 0)
		}
	}
	if h.index == 0 && j == 0 {
		out = append(out, w.specials...)
	} else if r.intn(10) == 0 && len(w.specials) > 0 {
		out = append(out, w.specials[r.intn(len(w.specials))])
	}
	if r.intn(20) == 0 {
		out = append(out, link{"/missing/" + r.word() + "-" + strconv.Itoa(j) + ".html", "an old link"})
	}
	if r.intn(8) == 0 {
		out = append(out, link{"#comments", "comments"})
	}
	return out
}

// baseDirs are the directories a page's <base href> may name.
var baseDirs = []string{"/docs/", "/blog/", "/news/"}

// pageBase returns the <base href> of page j of ordinary host h and the
// directory it names, or "", "" for the nine pages in ten without one. Half
// the bases are absolute URLs of h, half root-relative paths.
func (w *Web) pageBase(h *hostInfo, j int) (href, dir string) {
	if j == 0 || h.model().pages[j].kind != pageHTML {
		return "", ""
	}
	r := newRNG(w.seed, tagBase, h.index, j)
	if r.intn(10) != 0 {
		return "", ""
	}
	dir = baseDirs[r.intn(len(baseDirs))]
	if r.intn(2) == 0 {
		return w.base(h.name) + dir, dir
	}
	return dir, dir
}

// sameHref writes a link from path from to path to on the same host in one of
// the forms pages use: root-relative, relative (with ../ or ./), absolute,
// sometimes with a fragment.
func (w *Web) sameHref(r *rng, h *hostInfo, from, to string) string {
	var href string
	switch x := r.intn(10); {
	case x < 3:
		href = to
	case x < 6:
		href = relRef(from, to)
	case x < 8:
		href = w.base(h.name) + to
	case x < 9:
		href = relRef(from, to)
		if !strings.HasPrefix(href, ".") {
			href = "./" + href
		}
	default:
		href = to
	}
	if r.intn(7) == 0 {
		href += "#sec-" + strconv.Itoa(1+r.intn(5))
	}
	return href
}

// relRef returns a relative reference that resolves, against a document at
// from, to the absolute path (and query) to. Both must start with "/".
func relRef(from, to string) string {
	if i := strings.IndexAny(from, "?#"); i >= 0 {
		from = from[:i]
	}
	toPath, toQuery := to, ""
	if i := strings.IndexByte(to, '?'); i >= 0 {
		toPath, toQuery = to[:i], to[i:]
	}
	fromDir := from[:strings.LastIndexByte(from, '/')+1]
	cut := strings.LastIndexByte(toPath, '/') + 1
	toDir, toFile := toPath[:cut], toPath[cut:]
	fs := strings.Split(strings.Trim(fromDir, "/"), "/")
	ts := strings.Split(strings.Trim(toDir, "/"), "/")
	if fromDir == "/" {
		fs = nil
	}
	if toDir == "/" {
		ts = nil
	}
	c := 0
	for c < len(fs) && c < len(ts) && fs[c] == ts[c] {
		c++
	}
	var b strings.Builder
	for range len(fs) - c {
		b.WriteString("../")
	}
	for _, s := range ts[c:] {
		b.WriteString(s)
		b.WriteByte('/')
	}
	b.WriteString(toFile)
	ref := b.String()
	first, _, _ := strings.Cut(ref, "/")
	if ref == "" || strings.Contains(first, ":") {
		ref = "./" + ref // a colon in the first segment would read as a scheme
	}
	return ref + toQuery
}

func (w *Web) clusterTitle(c int) string {
	r := newRNG(w.seed, tagCluster, c, 0)
	return r.title(4 + r.intn(3))
}

// canonQuery returns raw with its parameters sorted by key, the form page
// paths are stored in, so that a crawler that reorders parameters still finds
// the page.
func canonQuery(raw string) string {
	if raw == "" {
		return ""
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return raw
	}
	return v.Encode()
}

// epoch is the origin of change-over-time versions.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// version returns the current version of page j of host i and when it began.
func (w *Web) version(i, j int, period time.Duration) (int64, time.Time) {
	if period <= 0 {
		return 0, epoch
	}
	r := newRNG(w.seed, tagVersion, i, j)
	phase := time.Duration(r.next() % uint64(period))
	d := w.cfg.Clock().Sub(epoch) + phase
	v := int64(d / period)
	if d < 0 && d%period != 0 {
		v--
	}
	return v, epoch.Add(time.Duration(v)*period - phase)
}
