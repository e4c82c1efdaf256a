package fetchtest

import (
	"bytes"
	"html"
	"net/http"
	"strconv"
	"time"
)

// Canonicals is the label of the host of Config.Canonicals,
// canon.<Domain>: a news site whose articles answer under several URLs,
// each variant naming the article's URL as its canonical one (RFC 6596).
// For article k (0 ≤ k < CanonicalArticles):
//
//	/a/k.html                 the article; its <link rel=canonical> names itself
//	/a/k.html?ref=home        the article with a greeting line; <link rel=canonical>
//	/print/a/k.html           the printer version: the article and a long
//	                          reference list; <link rel=canonical>, absolute
//	m.canon.<Domain>/a/k.html the mobile version, on another host of the same
//	                          site: half the article; <link rel=canonical>
//	/amp/k                    an AMP-style version: two thirds of the article,
//	                          the canonical URL only in a Link header
//	/wire/k.html              a syndicated story naming a page of another
//	                          site (h000's home page) as its canonical URL
//
// The variants differ from the article in a third of their text or more,
// so that a content-seen test at Jaccard 0.8 does not take them for
// near-duplicates, but for the ?ref= variant; only their canonical links
// say they are the same. The home page links to every URL above; robots.txt
// answers 404. RelCanonical gives what each URL names.
const Canonicals = "canon"

// CanonicalArticles is the number of articles of the Canonicals site.
const CanonicalArticles = 6

// canonPage is one URL of the Canonicals site.
type canonPage struct {
	mobile  bool   // on m.canon.<Domain>
	path    string // path and sorted query
	article int    // -1 for the home page
	variant canonVariant
}

type canonVariant uint8

const (
	canonHome canonVariant = iota
	canonArticle
	canonRef
	canonPrint
	canonMobile
	canonAMP
	canonWire
)

// canonMobileHost is the mobile host of the Canonicals site.
func (w *Web) canonMobileHost() string { return "m." + w.Host(Canonicals) }

// canonPages lists every URL of the Canonicals site, the home page first.
func canonPages() []canonPage {
	out := []canonPage{{path: "/", article: -1, variant: canonHome}}
	for k := range CanonicalArticles {
		n := strconv.Itoa(k)
		out = append(out,
			canonPage{path: "/a/" + n + ".html", article: k, variant: canonArticle},
			canonPage{path: "/a/" + n + ".html?ref=home", article: k, variant: canonRef},
			canonPage{path: "/print/a/" + n + ".html", article: k, variant: canonPrint},
			canonPage{mobile: true, path: "/a/" + n + ".html", article: k, variant: canonMobile},
			canonPage{path: "/amp/" + n, article: k, variant: canonAMP},
			canonPage{path: "/wire/" + n + ".html", article: k, variant: canonWire},
		)
	}
	return out
}

var canonTable = canonPages()

// canonRoute returns the index in canonTable of path and query (sorted)
// on the main host or the mobile one, or -1.
func canonRoute(mobile bool, pq string) int {
	for i, p := range canonTable {
		if p.mobile == mobile && p.path == pq {
			return i
		}
	}
	return -1
}

// canonURL is the URL of canonTable[i].
func (w *Web) canonURL(i int) string {
	p := canonTable[i]
	if p.mobile {
		return w.URL(w.canonMobileHost(), p.path)
	}
	return w.URL(w.Host(Canonicals), p.path)
}

// canonTarget is the canonical URL canonTable[i] names, "" for the home
// page, and whether it names it only in a Link header.
func (w *Web) canonTarget(i int) (target string, header bool) {
	p := canonTable[i]
	switch p.variant {
	case canonHome:
		return "", false
	case canonWire:
		return w.URL(w.ordinary[0].name, "/"), false
	}
	return w.URL(w.Host(Canonicals), "/a/"+strconv.Itoa(p.article)+".html"), p.variant == canonAMP
}

func (w *Web) canonTitle(i int) string {
	p := canonTable[i]
	if p.variant == canonHome {
		return "Canon Press"
	}
	g := newRNG(w.seed, tagCanon, p.article, 0)
	t := g.title(3 + g.intn(3))
	if p.variant == canonWire {
		return "Wire: " + t
	}
	return t
}

// canonLinks returns the links of canonTable[i]: the home page links to
// every URL of the site, an article to the home page and the next article.
func (w *Web) canonLinks(i int) []link {
	p := canonTable[i]
	if p.variant == canonHome {
		out := make([]link, 0, len(canonTable)-1)
		for j := 1; j < len(canonTable); j++ {
			out = append(out, link{w.canonURL(j), w.canonTitle(j)})
		}
		return out
	}
	next := (p.article + 1) % CanonicalArticles
	return []link{{w.URL(w.Host(Canonicals), "/"), "Canon Press"},
		{w.URL(w.Host(Canonicals), "/a/"+strconv.Itoa(next)+".html"), "next story"}}
}

// serveCanon renders and sends canonTable[i].
func (w *Web) serveCanon(sw http.ResponseWriter, r *http.Request, i int, b *bytes.Buffer) {
	p := canonTable[i]
	target, header := w.canonTarget(i)
	b.WriteString(htmlHead)
	b.WriteString(html.EscapeString(w.canonTitle(i)))
	b.WriteString("</title>\n")
	if target != "" && !header {
		href := target
		switch p.variant {
		case canonArticle:
			href = "/a/" + strconv.Itoa(p.article) + ".html" // itself, root-relative
		case canonRef:
			href = strconv.Itoa(p.article) + ".html" // relative to /a/
		}
		b.WriteString("<link rel=\"canonical\" href=\"" + html.EscapeString(href) + "\">\n")
	}
	b.WriteString("</head>\n<body>\n<h1>")
	b.WriteString(html.EscapeString(w.canonTitle(i)))
	b.WriteString("</h1>\n")
	paragraphs := 9
	switch p.variant {
	case canonHome:
		paragraphs = 1
	case canonMobile:
		paragraphs = 4
	case canonAMP:
		paragraphs = 6
	case canonRef:
		b.WriteString("<p>Welcome, reader from our home page.</p>\n")
	}
	tag, k := tagCanon, p.article
	if p.variant == canonWire || p.variant == canonHome {
		tag, k = tagCanonOther, i // text of its own
	}
	g := newRNG(w.seed, tag, k, 1)
	for range paragraphs {
		b.WriteString("<p>")
		g.sentence(b, 10, 18)
		b.WriteByte(' ')
		g.sentence(b, 10, 18)
		b.WriteString("</p>\n")
	}
	if p.variant == canonPrint {
		b.WriteString("<h2>References</h2>\n<ol>\n")
		rr := newRNG(w.seed, tagCanonOther, -1-p.article, 2)
		for range 6 {
			b.WriteString("<li>")
			rr.sentence(b, 14, 20)
			b.WriteString("</li>\n")
		}
		b.WriteString("</ol>\n")
	}
	b.WriteString("<ul>\n")
	for _, l := range w.canonLinks(i) {
		b.WriteString("<li>")
		writeLink(b, l)
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	if header {
		sw.Header().Set("Link", "<"+target+">; rel=\"canonical\"")
	}
	w.send(sw, r, 200, "text/html; charset=utf-8", b.Bytes(), time.Time{})
}

// RelCanonical returns the canonical URL the page at rawURL names, in its
// <link rel=canonical> or its Link header, in the form of the ground
// truth, and whether only the header names it; "" when the page names
// none or itself. Only pages of the Canonicals site name one.
func (w *Web) RelCanonical(rawURL string) (canonical string, header bool) {
	h, path, q, ok := w.locate(rawURL)
	if !ok || h.kind != kindCanon {
		return "", false
	}
	i := canonRoute(h.name == w.canonMobileHost(), pathQuery(path, q))
	if i < 0 {
		return "", false
	}
	t, header := w.canonTarget(i)
	if t == w.canonURL(i) {
		return "", false
	}
	return t, header
}
