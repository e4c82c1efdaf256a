package fetchtest

import (
	"bytes"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Aliases is the label of the host of Config.Aliases, alias.<Domain>: the
// site of a small software project whose pages answer under many URLs, as
// the duplicates a crawl of real static sites meets do ("Do not crawl in
// the DUST", Bar-Yossef, Keidar and Schonfeld, WWW 2007), next to URLs
// that only look like aliases. Its www alias, www.alias.<Domain>, serves
// the same bytes for every path, robots.txt and 404s included. The site
// (every directory also answers as dir/index.html, the same bytes):
//
//	/                   home; /index.html is the same page
//	/about.html         about page; ?lang=de, ?lang=fr, ?lang=es are three
//	                    more pages (other text), ?lang=en is /about.html
//	/contact.html       contact page
//	/news/              news listing, page 1; ?page=2 .. ?page=5 are four
//	                    more pages, ?page=1 is /news/
//	/news/<name>.html   25 articles, five per listing page
//	/docs/              documentation index
//	/v3/                30 files of the version 3 manual: index.html and
//	                    29 chapters
//	/current/           a symlink of /v3/: every file the same bytes
//	/v2/                the version 2 manual: the same 30 file names, 25 of
//	                    them (index.html among them) the same bytes as in
//	                    /v3/, five its own
//	/api/               a package summary linking 12 class pages; any
//	                    query on /api/index.html is ignored, and every
//	                    class page links its "FRAMES" view
//	                    /api/index.html?<Class>.html, as javadoc does
//	/api/<Class>.html   near-duplicates (one template, a small part of each
//	                    page its own), each holding the only link to
//	/api/class-use/<Class>.html
//
// Config.AliasScale multiplies the articles (and so the listing pages) and
// the classes; the manuals keep their 30 files.
//
// Query parameters change the content only where the map says so:
// ?page= on /news/ and ?lang= on /about.html. Any other parameter (the
// pages link with ?ref=, ?utm_source=, ?utm_medium=, ?utm_campaign= and
// ?sessionid= values, dozens of them) and these two elsewhere are ignored,
// as a static server ignores them; a page= or lang= value outside the
// ones listed answers 404. The pages link one another in every form a
// real site does: relative (so /current/ and /v2/ pages link inside their
// own directory), root-relative, absolute on either host name, with and
// without index.html and tracking parameters, so a crawl from the home
// page meets all of it; from either host's home page the links lead to
// every page on that host, so the whole site is crawled again under www.
//
// Canonical maps every URL of both hosts to the URL of the distinct page
// it serves: on alias.<Domain>, directories without index.html, neutral
// parameters dropped, ?page=1 and ?lang=en dropped, /current/ written
// /v3/, and a /v2/ file that /v3/ serves byte for byte written as its /v3/
// twin. Pages lists each distinct page once under that URL.
const Aliases = "alias"

// Sizes of the Aliases site; Config.AliasScale multiplies the articles
// and the classes.
const (
	aliasArticles = 25 // news articles
	aliasPerList  = 5  // articles per listing page
	aliasFiles    = 30 // files of each manual, index.html included
	aliasV2Own    = 5  // /v2/ files that are not /v3/'s bytes
	aliasClasses  = 12 // near-duplicate class pages
	aliasRelated  = 3  // ?ref= links per article
	aliasFeatured = 3  // ?utm_ links on the home page

	// MaxAliasScale bounds Config.AliasScale: page numbers stay below
	// the generator key's 16 bits.
	MaxAliasScale = 1000
)

// aliasLangs are the values of ?lang= on /about.html; the first is the
// default, the page without the parameter.
var aliasLangs = []string{"en", "de", "fr", "es"}

type aliasKind uint8

const (
	aliasHome aliasKind = iota
	aliasAbout
	aliasContact
	aliasList // n: listing page, 1..lists
	aliasArticle
	aliasDocs
	aliasFile // n: file index (0: index.html); v2: the /v2/ file of its own
	aliasAPI
	aliasClass
	aliasClassUse
)

// aliasPage is one distinct page of the Aliases site.
type aliasPage struct {
	path  string // canonical path and query on the Aliases host
	kind  aliasKind
	n     int
	v2    bool
	title string
}

// aliasSite is the generated Aliases site: names from the seed, the
// distinct pages and indexes on them. Immutable once built.
type aliasSite struct {
	name     string // the project's name
	lists    int    // news listing pages
	articles []string
	files    []string // files[0] is "index.html"
	v2own    []bool
	classes  []string
	pages    []aliasPage
	byPath   map[string]int32 // canonical path and query → page
	article  map[string]int   // file name → article
	file     map[string]int   // file name → manual file
	class    map[string]int   // class name → class
	featured []int            // articles the home page links
}

func (w *Web) aliasWWW() string { return "www." + w.Host(Aliases) }

func capitalize(s string) string { return string(s[0]-'a'+'A') + s[1:] }

func (w *Web) buildAliasSite() *aliasSite {
	s := &aliasSite{byPath: make(map[string]int32), article: make(map[string]int),
		file: make(map[string]int), class: make(map[string]int)}
	r := newRNG(w.seed, tagAlias, 0, 0)
	s.name = r.title(2)
	scale := max(1, w.cfg.AliasScale)
	for i := range aliasArticles * scale {
		name := r.word() + "-" + r.word() + "-" + strconv.Itoa(i+1) + ".html"
		s.article[name] = i
		s.articles = append(s.articles, name)
	}
	s.files = append(s.files, "index.html")
	for k := 1; k < aliasFiles; k++ {
		s.files = append(s.files, r.word()+"-"+strconv.Itoa(k)+".html")
	}
	for k, f := range s.files {
		s.file[f] = k
	}
	s.v2own = make([]bool, aliasFiles)
	for n := 0; n < aliasV2Own; {
		if k := 1 + r.intn(aliasFiles-1); !s.v2own[k] {
			s.v2own[k] = true
			n++
		}
	}
	for len(s.classes) < aliasClasses*scale {
		name := capitalize(r.word()) + capitalize(r.word())
		if _, dup := s.class[name]; !dup {
			s.class[name] = len(s.classes)
			s.classes = append(s.classes, name)
		}
	}
	for len(s.featured) < aliasFeatured {
		if a := r.intn(len(s.articles)); !slices.Contains(s.featured, a) {
			s.featured = append(s.featured, a)
		}
	}

	add := func(path string, kind aliasKind, n int, v2 bool, title string) {
		s.byPath[path] = int32(len(s.pages))
		s.pages = append(s.pages, aliasPage{path: path, kind: kind, n: n, v2: v2, title: title})
	}
	add("/", aliasHome, 0, false, s.name)
	for l, lang := range aliasLangs {
		path := "/about.html"
		if l > 0 {
			path += "?lang=" + lang
		}
		add(path, aliasAbout, l, false, aliasAboutTitles[l]+" "+s.name)
	}
	add("/contact.html", aliasContact, 0, false, "Contact")
	s.lists = len(s.articles) / aliasPerList
	for n := 1; n <= s.lists; n++ {
		path, title := "/news/", "News"
		if n > 1 {
			path += "?page=" + strconv.Itoa(n)
			title += ", page " + strconv.Itoa(n)
		}
		add(path, aliasList, n, false, title)
	}
	for i, a := range s.articles {
		tr := newRNG(w.seed, tagAlias, aliasKey(aliasArticle, i), 0)
		add("/news/"+a, aliasArticle, i, false, tr.title(3+tr.intn(3)))
	}
	add("/docs/", aliasDocs, 0, false, "Documentation")
	for k, f := range s.files {
		title := "Contents"
		if k > 0 {
			tr := newRNG(w.seed, tagAlias, aliasKey(aliasFile, k), 0)
			title = tr.title(2 + tr.intn(3))
		}
		if k == 0 {
			f = ""
		}
		add("/v3/"+f, aliasFile, k, false, title)
	}
	for k, f := range s.files {
		if s.v2own[k] {
			add("/v2/"+f, aliasFile, k, true, s.pages[s.byPath["/v3/"+f]].title)
		}
	}
	add("/api/", aliasAPI, 0, false, "Package "+strings.ToLower(strings.ReplaceAll(s.name, " ", ".")))
	for c, name := range s.classes {
		add("/api/"+name+".html", aliasClass, c, false, name)
	}
	for c, name := range s.classes {
		add("/api/class-use/"+name+".html", aliasClassUse, c, false, "Uses of Class "+name)
	}
	return s
}

var aliasAboutTitles = []string{"About", "\u00dcber", "\u00c0 propos de", "Acerca de"}

// aliasKey is the generator key of a page's facts.
func aliasKey(kind aliasKind, n int) int { return int(kind)<<16 | n }

// canon returns the canonical path and query of the page path (escaped, as
// requests carry it) and rawQuery answer on the Aliases site, or false
// for a URL that answers 404.
func (s *aliasSite) canon(path, rawQuery string) (string, bool) {
	// Only page= and lang= are read, where they matter; a value that does
	// not parse is not there.
	q, _ := url.ParseQuery(rawQuery)
	switch path {
	case "/", "/index.html":
		return "/", true
	case "/about.html":
		switch l := q["lang"]; {
		case len(l) == 0:
			return path, true
		case len(l) == 1 && l[0] == aliasLangs[0]:
			return path, true
		case len(l) == 1 && slices.Contains(aliasLangs, l[0]):
			return path + "?lang=" + l[0], true
		}
		return "", false
	case "/contact.html":
		return path, true
	case "/news/", "/news/index.html":
		p := q["page"]
		if len(p) == 0 {
			return "/news/", true
		}
		n, err := strconv.Atoi(p[0])
		switch {
		case len(p) > 1 || err != nil || n < 1 || n > s.lists || strconv.Itoa(n) != p[0]:
			return "", false
		case n == 1:
			return "/news/", true
		}
		return "/news/?page=" + p[0], true
	case "/docs/", "/docs/index.html":
		return "/docs/", true
	case "/api/", "/api/index.html":
		return "/api/", true
	}
	cut := strings.LastIndexByte(path, '/') + 1
	dir, file := path[:cut], path[cut:]
	switch dir {
	case "/news/":
		if _, ok := s.article[file]; ok {
			return path, true
		}
	case "/v3/", "/current/", "/v2/":
		if file == "" {
			file = "index.html"
		}
		k, ok := s.file[file]
		switch {
		case !ok:
		case k == 0:
			return "/v3/", true
		case dir == "/v2/" && s.v2own[k]:
			return path, true
		default:
			return "/v3/" + file, true
		}
	case "/api/", "/api/class-use/":
		if name, ok := strings.CutSuffix(file, ".html"); ok {
			if _, ok := s.class[name]; ok {
				return path, true
			}
		}
	}
	return "", false
}

// route returns the page path and rawQuery answer on the Aliases site, or
// -1.
func (s *aliasSite) route(path, rawQuery string) int {
	c, ok := s.canon(path, rawQuery)
	if !ok {
		return -1
	}
	j, ok := s.byPath[c]
	if !ok {
		return -1
	}
	return int(j)
}

// aliasURL is the canonical URL of page j of the Aliases site.
func (w *Web) aliasURL(j int) string { return w.URL(w.Host(Aliases), w.alias().pages[j].path) }

// aliasPages returns the canonical URLs of the Aliases site's pages in
// generation order.
func (w *Web) aliasPages() []string {
	out := make([]string, len(w.alias().pages))
	for j := range out {
		out[j] = w.aliasURL(j)
	}
	return out
}

// aliasClassPages returns the URLs of the class pages, sorted.
func (w *Web) aliasClassPages() []string {
	var out []string
	for j, p := range w.alias().pages {
		if p.kind == aliasClass {
			out = append(out, w.aliasURL(j))
		}
	}
	slices.Sort(out)
	return out
}

func (w *Web) aliasTitle(j int) string { return w.alias().pages[j].title }

// aliasSession is the session id the links of page j carry.
func (w *Web) aliasSession(j int) string {
	r := newRNG(w.seed, tagAlias, 1<<24, j)
	return strconv.FormatUint(r.next(), 16)
}

// aliasLinks returns the links of page j of the Aliases site in document
// order: a pure function of the seed, the port and j, so that every alias
// of the page serves the same bytes.
func (w *Web) aliasLinks(j int) []link {
	s := w.alias()
	p := s.pages[j]
	www := func(path string) string { return w.URL(w.aliasWWW(), path) }
	contact := func(prefix string) link {
		return link{prefix + "contact.html?sessionid=" + w.aliasSession(j), "Contact"}
	}
	var out []link
	switch p.kind {
	case aliasHome:
		out = append(out,
			link{"/index.html", s.name},
			link{"/news/", "News"},
			link{"/docs/", "Documentation"},
			link{"about.html", "About"},
			link{w.URL(w.Host(Aliases), "/about.html?lang="+aliasLangs[1]), aliasAboutTitles[1]},
			link{"/api/", "API"})
		for f, a := range s.featured {
			r := newRNG(w.seed, tagAlias, aliasKey(aliasHome, 1), f)
			out = append(out, link{"news/" + s.articles[a] + "?utm_source=home&utm_campaign=" + r.word(),
				s.pages[s.byPath["/news/"+s.articles[a]]].title})
		}
		out = append(out, contact(""))
	case aliasAbout:
		out = append(out, link{www("/"), "Home"}, link{www("/docs/"), "Documentation"})
		for l, lang := range aliasLangs {
			out = append(out, link{"?lang=" + lang, aliasAboutTitles[l]})
		}
		out = append(out, contact(""))
	case aliasContact:
		out = append(out, link{"/", "Home"}, link{"about.html", "About"})
	case aliasList:
		out = append(out, link{"/", "Home"})
		for i := (p.n - 1) * aliasPerList; i < p.n*aliasPerList; i++ {
			out = append(out, link{s.articles[i], s.pages[s.byPath["/news/"+s.articles[i]]].title})
		}
		if p.n > 1 {
			out = append(out, link{"index.html?page=" + strconv.Itoa(p.n-1), "Newer"})
		}
		if p.n < s.lists {
			out = append(out, link{"index.html?page=" + strconv.Itoa(p.n+1), "Older"})
		}
		for n := 1; n <= s.lists; n++ {
			out = append(out, link{"?page=" + strconv.Itoa(n), strconv.Itoa(n)})
		}
		out = append(out, contact("../"))
	case aliasArticle:
		out = append(out, link{"/", "Home"}, link{"index.html", "All news"})
		r := newRNG(w.seed, tagAlias, aliasKey(aliasArticle, p.n), 1)
		var related []int
		for len(related) < aliasRelated {
			if a := r.intn(len(s.articles)); a != p.n && !slices.Contains(related, a) {
				related = append(related, a)
				out = append(out, link{s.articles[a] + "?ref=" + strconv.Itoa(p.n+1),
					s.pages[s.byPath["/news/"+s.articles[a]]].title})
			}
		}
		out = append(out, link{www("/news/"+s.articles[p.n]) + "?utm_source=share&utm_medium=" + r.word(), "Share"})
		out = append(out, contact("../"))
	case aliasDocs:
		out = append(out, link{"/", "Home"}, link{"../v3/", "Version 3 (latest)"},
			link{"/current/", "Current version"}, link{"/v2/index.html", "Version 2"})
	case aliasFile:
		if p.n == 0 {
			out = append(out, link{"/", "Home"}, link{"../docs/index.html", "All versions"})
			for k := 1; k < aliasFiles; k++ {
				out = append(out, link{s.files[k], s.fileTitle(k)})
			}
			break
		}
		out = append(out, link{"index.html", "Contents"})
		if p.n > 1 {
			out = append(out, link{s.files[p.n-1], "Previous: " + s.fileTitle(p.n-1)})
		}
		if p.n < aliasFiles-1 {
			out = append(out, link{s.files[p.n+1], "Next: " + s.fileTitle(p.n+1)})
		}
		out = append(out, link{"../docs/index.html", "All versions"})
	case aliasAPI:
		out = append(out, link{"../", "Home"})
		for _, c := range s.classes {
			out = append(out, link{c + ".html", c})
		}
	case aliasClass:
		out = append(out, link{"index.html", "Package"}, link{"index.html?" + s.classes[p.n] + ".html", "Frames"})
		if p.n > 0 {
			out = append(out, link{s.classes[p.n-1] + ".html", "Prev Class"})
		}
		if p.n < len(s.classes)-1 {
			out = append(out, link{s.classes[p.n+1] + ".html", "Next Class"})
		}
		out = append(out, link{"class-use/" + s.classes[p.n] + ".html", "Use"})
	case aliasClassUse:
		out = append(out, link{"../" + s.classes[p.n] + ".html", s.classes[p.n]}, link{"../index.html", "Package"})
	}
	return out
}

func (s *aliasSite) fileTitle(k int) string {
	if k == 0 {
		return "Contents"
	}
	return s.pages[s.byPath["/v3/"+s.files[k]]].title
}

// renderAlias writes page j of the Aliases site. The bytes depend only on
// the seed, the port and j, never on the URL the request used.
func (w *Web) renderAlias(b *bytes.Buffer, j int) {
	s := w.alias()
	p := s.pages[j]
	lang := aliasLangs[0]
	if p.kind == aliasAbout {
		lang = aliasLangs[p.n]
	}
	title := html.EscapeString(p.title)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"" + lang + "\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(title)
	b.WriteString("</title>\n</head>\n<body>\n<h1>")
	b.WriteString(title)
	b.WriteString("</h1>\n")
	variant := 0
	if p.v2 {
		variant = 2
	}
	r := newRNG(w.seed, tagAlias, aliasKey(p.kind, p.n), 2+variant)
	switch p.kind {
	case aliasClass:
		// One template for every class: the class's own part is its
		// name, a sentence and its links; the rest is shared.
		b.WriteString("<p>")
		r.sentence(b, 10, 14)
		b.WriteString("</p>\n")
		t := newRNG(w.seed, tagAlias, aliasKey(aliasClass, 1<<15), 0)
		for range 8 {
			b.WriteString("<p>")
			for n := range 4 {
				if n > 0 {
					b.WriteByte(' ')
				}
				t.sentence(b, 10, 14)
			}
			b.WriteString("</p>\n")
		}
	default:
		paras := 2 + r.intn(3)
		if p.kind == aliasFile || p.kind == aliasArticle || p.kind == aliasClassUse {
			paras += 2
		}
		for range paras {
			b.WriteString("<p>")
			for n := range 3 + r.intn(3) {
				if n > 0 {
					b.WriteByte(' ')
				}
				r.sentence(b, 8, 16)
			}
			b.WriteString("</p>\n")
		}
	}
	b.WriteString("<ul>\n")
	for _, l := range w.aliasLinks(j) {
		b.WriteString("<li>")
		writeLink(b, l)
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
}

// Canonical returns the URL, as Pages lists it, of the page rawURL
// serves, and true; or "", false if rawURL does not answer a page (a URL
// off the web, a 404, a redirect, robots.txt, a sitemap, a trap or the
// Hostile host). On the Aliases site (Config.Aliases) it maps every alias
// to its distinct page: both host names, any neutral query parameter,
// dir/index.html, /current/, a /v2/ file with /v3/'s bytes (see Aliases).
// Any other page is its own canonical URL, in the form of the ground
// truth (lower-case host, no fragment, query parameters sorted); a mirror's
// page stays on the mirror (see ExactDuplicates).
func (w *Web) Canonical(rawURL string) (string, bool) {
	h, path, q, ok := w.locate(rawURL)
	if !ok {
		return "", false
	}
	switch rt := w.route(h, path, q); rt.kind {
	case routeAlias:
		return w.aliasURL(rt.page), true
	case routePage, routeCharset, routeJavadoc, routeScript:
		return w.URL(h.name, pathQuery(path, q)), true
	}
	return "", false
}

// AliasFetches reads a request log (see Log) for the page fetches of the
// Aliases site: GET requests to either of its hosts answered 200 with a
// page (robots.txt is not one). distinct is the canonical URL (see
// Canonical) of every page fetched at least once, under any of its
// URLs, sorted; identical counts the fetches that brought content
// already fetched: every page fetch but the first of each distinct page,
// a second fetch of the same URL included. A crawl covers the site when
// distinct is PagesOf(Host(Aliases)), and fetches it without waste when
// identical is 0. Without Config.Aliases both are zero. O(len(log)).
func (w *Web) AliasFetches(log []Request) (distinct []string, identical int) {
	if !w.cfg.Aliases {
		return nil, 0
	}
	seen := make(map[string]bool)
	for _, r := range log {
		h := w.byName[r.Host]
		if h == nil || h.kind != kindAlias || r.Method != "GET" || r.Status != 200 {
			continue
		}
		c, ok := w.Canonical("http://" + r.Host + ":" + w.port + r.Path)
		if !ok {
			continue
		}
		if seen[c] {
			identical++
			continue
		}
		seen[c] = true
		distinct = append(distinct, c)
	}
	slices.Sort(distinct)
	return distinct, identical
}
