package fetchtest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/encoding/charmap"
)

const htmlHead = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"

func writeLink(b *bytes.Buffer, l link) { writeLinkStyled(b, l, 0) }

// Markup styles of an anchor: pages differ in how they write their links, as
// hand-written and generated HTML does.
const (
	styleQuoted   = iota // <a href="...">
	styleUpper           // <A HREF="...">
	styleSingle          // <a class=x href='...'>
	styleUnquoted        // <a href=...> where the value allows it
	numStyles
)

func writeLinkStyled(b *bytes.Buffer, l link, style int) {
	href := html.EscapeString(l.href)
	if style == styleUnquoted && strings.ContainsAny(href, " \t\n\f\r\"'=<>`") {
		style = styleQuoted
	}
	switch style {
	case styleUpper:
		b.WriteString(`<A HREF="`)
		b.WriteString(href)
		b.WriteString(`">`)
	case styleSingle:
		b.WriteString(`<a class=ref href='`)
		b.WriteString(href)
		b.WriteString(`'>`)
	case styleUnquoted:
		b.WriteString(`<a href=`)
		b.WriteString(href)
		b.WriteString(`>`)
	default:
		b.WriteString(`<a href="`)
		b.WriteString(href)
		b.WriteString(`">`)
	}
	b.WriteString(html.EscapeString(l.text))
	if style == styleUpper {
		b.WriteString("</A>")
	} else {
		b.WriteString("</a>")
	}
}

// renderHTML writes page j of ordinary host o. The bytes depend only on the
// seed, the port and (for changing pages) the current version, never on the
// host name the request used, so mirrors serve identical bytes.
func (w *Web) renderHTML(b *bytes.Buffer, o *hostInfo, j int) {
	m := o.model()
	p := m.pages[j]
	links := w.pageLinks(o, j)
	if p.kind == pageArticle {
		w.renderArticle(b, o, j, links)
		return
	}
	title := w.pageTitle(o.index, j)
	r := newRNG(w.seed, tagBody, o.index, j)
	b.WriteString(htmlHead)
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n")
	if href, _ := w.pageBase(o, j); href != "" {
		b.WriteString("<base href=\"")
		b.WriteString(html.EscapeString(href))
		b.WriteString("\">\n")
	}
	b.WriteString("<meta name=\"description\" content=\"")
	r.sentence(b, 8, 14)
	b.WriteString("\">\n</head>\n<body>\n<header><p class=\"site\">")
	b.WriteString(o.name)
	b.WriteString("</p></header>\n<main>\n<h1>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</h1>\n")
	if p.period > 0 {
		v, since := w.version(o.index, j, p.period)
		b.WriteString("<p class=\"updated\">Updated ")
		b.WriteString(since.UTC().Format(time.RFC1123))
		b.WriteString(" (revision ")
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteString(")</p>\n<p class=\"latest\">")
		lr := newRNG(w.seed, tagLatest, o.index, j)
		lr = rng{mix64(lr.s ^ uint64(v))}
		for range 3 {
			lr.sentence(b, 6, 12)
			b.WriteByte(' ')
		}
		b.WriteString("</p>\n")
	}
	style := 0
	if r.intn(3) == 0 {
		style = r.intn(numStyles)
	}
	np := 2 + r.intn(5)
	li := 0
	for range np {
		b.WriteString("<p>")
		for s := range 3 + r.intn(4) {
			if s > 0 {
				b.WriteByte(' ')
			}
			r.sentence(b, 6, 16)
			if li < len(links) && r.intn(3) == 0 {
				b.WriteString(" See ")
				writeLinkStyled(b, links[li], style)
				b.WriteString(".")
				li++
			}
		}
		b.WriteString("</p>\n")
	}
	if li < len(links) {
		b.WriteString("<ul class=\"links\">\n")
		for ; li < len(links); li++ {
			b.WriteString("<li>")
			writeLinkStyled(b, links[li], style)
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</main>\n<footer><p>&copy; 2026 ")
	b.WriteString(o.name)
	if r.intn(4) == 0 {
		// Anchors a crawler must not follow: no href, and schemes
		// other than http. Not in Links.
		b.WriteString(` <a name="bottom"></a><a href="mailto:webmaster@`)
		b.WriteString(o.name)
		b.WriteString(`">webmaster</a> <a href="javascript:window.print()">print</a> <a href="tel:+1-555-0100">call us</a>`)
	}
	b.WriteString("</p></footer>\n</body>\n</html>\n")
}

// renderArticle writes a member of a near-duplicate cluster: the same title
// and story everywhere, a different date line and advertisement per member.
func (w *Web) renderArticle(b *bytes.Buffer, o *hostInfo, j int, links []link) {
	ref := o.synd[j-o.nbase]
	title := w.clusterTitle(ref.cluster)
	b.WriteString(htmlHead)
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n</head>\n<body>\n<article>\n<h1>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</h1>\n<p class=\"dateline\">Published ")
	pub := epoch.Add(-time.Duration(ref.cluster*7+ref.member+1) * 26 * time.Hour)
	b.WriteString(pub.Format("Monday, 2 January 2006 15:04"))
	b.WriteString(" by ")
	b.WriteString(o.name)
	b.WriteString("</p>\n")
	ar := newRNG(w.seed, tagCluster, ref.cluster, 1)
	mr := newRNG(w.seed, tagMember, ref.cluster, ref.member)
	adAt := 1 + mr.intn(4)
	for pi := range 8 {
		if pi == adAt {
			b.WriteString("<aside class=\"ad\"><p>")
			mr.sentence(b, 8, 12)
			b.WriteByte(' ')
			mr.sentence(b, 8, 12)
			b.WriteString("</p></aside>\n")
		}
		b.WriteString("<p>")
		for s := range 6 {
			if s > 0 {
				b.WriteByte(' ')
			}
			ar.sentence(b, 8, 14)
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("</article>\n<nav>")
	for _, l := range links {
		writeLink(b, l)
	}
	b.WriteString("</nav>\n</body>\n</html>\n")
}

// renderPDF writes a small, well-formed one-page PDF.
func (w *Web) renderPDF(b *bytes.Buffer, o *hostInfo, j int) {
	title := pdfEscape(w.pageTitle(o.index, j))
	content := "BT /F1 18 Tf 72 720 Td (" + title + ") Tj ET\n"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		"<< /Length " + strconv.Itoa(len(content)) + " >>\nstream\n" + content + "endstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Title (" + title + ") /Producer (fetchtest) >>",
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(objs))
	for i, obj := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(b, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offs {
		fmt.Fprintf(b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(b, "trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
}

func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// renderPNG writes a 16×16 paletted image with colours drawn from the seed.
func (w *Web) renderPNG(b *bytes.Buffer, o *hostInfo, j int) {
	r := newRNG(w.seed, tagBody, o.index, j)
	pal := make(color.Palette, 4)
	for i := range pal {
		pal[i] = color.RGBA{uint8(r.intn(256)), uint8(r.intn(256)), uint8(r.intn(256)), 255}
	}
	img := image.NewPaletted(image.Rect(0, 0, 16, 16), pal)
	for i := range img.Pix {
		img.Pix[i] = uint8(r.intn(len(pal)))
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: pngPool{}}
	_ = enc.Encode(b, img)
}

// pngPool lets the PNG encoder reuse its zlib writer across requests.
type pngPool struct{}

var pngBuffers sync.Pool

func (pngPool) Get() *png.EncoderBuffer {
	b, _ := pngBuffers.Get().(*png.EncoderBuffer)
	return b
}

func (pngPool) Put(b *png.EncoderBuffer) { pngBuffers.Put(b) }

// renderJSON writes a small JSON document describing the resource.
func (w *Web) renderJSON(b *bytes.Buffer, o *hostInfo, j int) {
	r := newRNG(w.seed, tagBody, o.index, j)
	var sb strings.Builder
	r.sentence(&sb, 10, 20)
	doc := struct {
		Title   string   `json:"title"`
		Host    string   `json:"host"`
		Tags    []string `json:"tags"`
		Summary string   `json:"summary"`
		Count   int      `json:"count"`
	}{w.pageTitle(o.index, j), o.name, []string{r.word(), r.word(), r.word()}, sb.String(), r.intn(1000)}
	out, _ := json.Marshal(doc)
	b.Write(out)
	b.WriteByte('\n')
}

var (
	latin1Words = strings.Fields("café crème naïve façade Müller Größe Straße élève señor niño " +
		"año résumé déjà über Ärger Öl fiancée piñata Zürich São garçon Köln gâteau forêt hôtel île")
	cp1252Words = strings.Fields("“citation” ‘quote’ 5€ œuvre Šárka trade™ attente… " +
		"a–b x—y •point café Größe")
)

// charsetTitle returns the UTF-8 title of page j of a legacy-charset host.
func (w *Web) charsetTitle(h *hostInfo, j int) string {
	r := newRNG(w.seed, tagCharset, int(h.kind), j)
	ws := latin1Words
	if h.kind == kindCP1252 {
		ws = cp1252Words
	}
	return ws[r.intn(len(ws))] + " " + ws[r.intn(len(ws))] + " " + strconv.Itoa(j)
}

func charsetPath(j int) string {
	if j == 0 {
		return "/"
	}
	return "/p/" + strconv.Itoa(j) + ".html"
}

// charsetLinks are the links of page j of a legacy-charset host.
func (w *Web) charsetLinks(h *hostInfo, j int) []link {
	var out []link
	from := charsetPath(j)
	for k := range charsetPages {
		if k != j {
			out = append(out, link{relRef(from, charsetPath(k)), w.charsetTitle(h, k)})
		}
	}
	return append(out, link{w.URL(w.ordinary[0].name, "/"), "home"})
}

// renderCharset writes page j of the Latin1 or Windows1252 host, encoded in
// that charset, and returns the Content-Type to send (without charset).
func (w *Web) renderCharset(b *bytes.Buffer, h *hostInfo, j int) string {
	var u bytes.Buffer
	title := w.charsetTitle(h, j)
	u.WriteString("<!DOCTYPE html>\n<html>\n<head>\n")
	if j%2 == 0 {
		if h.kind == kindLatin1 {
			u.WriteString("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\n")
		} else {
			u.WriteString("<meta charset=\"windows-1252\">\n")
		}
	}
	u.WriteString("<title>" + html.EscapeString(title) + "</title>\n</head>\n<body>\n<h1>" + html.EscapeString(title) + "</h1>\n<p>")
	r := newRNG(w.seed, tagCharset, int(h.kind), 100+j)
	ws := latin1Words
	if h.kind == kindCP1252 {
		ws = cp1252Words
	}
	for k := range 40 {
		if k > 0 {
			u.WriteByte(' ')
		}
		if r.intn(3) == 0 {
			u.WriteString(ws[r.intn(len(ws))])
		} else {
			u.WriteString(r.word())
		}
	}
	u.WriteString(".</p>\n<ul>\n")
	for _, l := range w.charsetLinks(h, j) {
		u.WriteString("<li><a href=\"" + html.EscapeString(l.href) + "\">" + html.EscapeString(l.text) + "</a></li>\n")
	}
	u.WriteString("</ul>\n</body>\n</html>\n")
	enc := charmap.ISO8859_1.NewEncoder()
	if h.kind == kindCP1252 {
		enc = charmap.Windows1252.NewEncoder()
	}
	out, err := enc.Bytes(u.Bytes())
	if err != nil { // cannot happen: the word lists fit their charsets
		panic("fetchtest: charset word list: " + err.Error())
	}
	b.Write(out)
	return "text/html"
}

var monthNames = []string{"", "January", "February", "March", "April", "May", "June",
	"July", "August", "September", "October", "November", "December"}

// renderTrap writes a page of a trap host.
func (w *Web) renderTrap(b *bytes.Buffer, h *hostInfo, path string) {
	if h.kind == kindSubdomain {
		w.renderSubdomain(b, h, path)
		return
	}
	var title string
	var links []link
	var r rng
	switch h.kind {
	case kindCalendar:
		y, m, d, ok := parseCalendar(path)
		switch {
		case !ok:
			title = "Calendar"
			links = append(links, link{"/calendar/2026/01", "this month"})
		case d == 0:
			title = fmt.Sprintf("Events in %s %04d", monthNames[m], y)
			if y > 1 || m > 1 {
				py, pm := y, m-1
				if pm == 0 {
					py, pm = y-1, 12
				}
				links = append(links, link{fmt.Sprintf("../%04d/%02d", py, pm), "previous month"})
			}
			if y < 9999 || m < 12 {
				ny, nm := y, m+1
				if nm == 13 {
					ny, nm = y+1, 1
				}
				links = append(links, link{fmt.Sprintf("../%04d/%02d", ny, nm), "next month"})
			}
			for _, dd := range []int{3, 14, 27} {
				links = append(links, link{fmt.Sprintf("%02d/%02d", m, dd), fmt.Sprintf("%d %s", dd, monthNames[m])})
			}
		default:
			title = fmt.Sprintf("%d %s %04d", d, monthNames[m], y)
			links = append(links, link{fmt.Sprintf("../%02d", m), "back to the month"})
		}
		r = newRNG(w.seed, tagSession, y*12+m, d)
	case kindSession:
		sid := strconv.FormatUint(mix64(uint64(w.seed)^w.sessionSeq.Add(1)*0x9e3779b97f4a7c15), 16)
		item := -1
		if s, ok := strings.CutPrefix(path, "/item/"); ok {
			item, _ = strconv.Atoi(s)
		}
		title = "Members area"
		if item >= 0 {
			title = "Item " + strconv.Itoa(item)
		}
		r = newRNG(w.seed, tagSession, item, -1)
		links = append(links, link{"/?sid=" + sid, "members home"})
		for range 5 {
			links = append(links, link{"/item/" + strconv.Itoa(r.intn(sessionItems)) + "?sid=" + sid, "item"})
		}
	case kindDeep:
		title = "Index of " + path
		links = append(links, link{"a/", "a"}, link{"b/", "b"}, link{"c/", "c"}, link{"../", "parent"})
		if path == "/" {
			links = []link{{"/d/", "files"}}
		}
		r = newRNG(w.seed, tagSession, len(path), -2)
	}
	b.WriteString(htmlHead)
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n</head>\n<body>\n")
	switch h.kind {
	case kindCalendar:
		// A community calendar as such sites serve it: the same header,
		// month grid, sidebar and footer on every page, and no events.
		// The pages differ only in the month and year they name, so the
		// content-seen test finds them near-duplicates of each other, as
		// a real empty calendar's are.
		b.WriteString(calendarHeader)
	case kindDeep:
		b.WriteString("<h1>")
		b.WriteString(html.EscapeString(title))
		b.WriteString("</h1>\n<pre>Name                    Last modified      Size  Description</pre>\n")
	}
	if h.kind != kindDeep {
		b.WriteString("<h1>")
		b.WriteString(html.EscapeString(title))
		b.WriteString("</h1>\n")
	}
	switch h.kind {
	case kindCalendar:
		b.WriteString(calendarGrid)
	case kindSession:
		b.WriteString("<p>")
		r.sentence(b, 8, 16)
		b.WriteString("</p>\n")
	}
	b.WriteString("<ul>\n")
	for _, l := range links {
		b.WriteString("<li>")
		writeLink(b, l)
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
	switch h.kind {
	case kindCalendar:
		b.WriteString(calendarFooter)
	case kindDeep:
		// An autoindex page: the same listing at every depth.
		b.WriteString("<hr>\n<address>Apache/2.4.62 (Unix) Server at this host Port 80</address>\n" +
			"<p>Directory listing generated by the server. Files in this folder are mirrored nightly from the project archive; " +
			"checksums and signatures for every release are kept in the parent folders. Please use a mirror close to you " +
			"and do not fetch the whole tree at once.</p>\n")
	}
	b.WriteString("</body>\n</html>\n")
}

// calendarHeader, calendarGrid and calendarFooter are the template of
// every page of the CalendarTrap host.
const (
	calendarHeader = "<header><p>Riverside Community Events. Home | What's on | Venues | Clubs and societies | " +
		"Volunteering | Submit an event | Contact us</p></header>\n"
	calendarGrid = "<p>There are no events listed for this period. Events are added by members of the community; " +
		"sign in to submit one, or subscribe to the calendar feed to hear about new events as they are posted.</p>\n" +
		"<table><tr><th>Mon</th><th>Tue</th><th>Wed</th><th>Thu</th><th>Fri</th><th>Sat</th><th>Sun</th></tr>\n" +
		"<tr><td>1</td><td>2</td><td>3</td><td>4</td><td>5</td><td>6</td><td>7</td></tr>\n" +
		"<tr><td>8</td><td>9</td><td>10</td><td>11</td><td>12</td><td>13</td><td>14</td></tr>\n" +
		"<tr><td>15</td><td>16</td><td>17</td><td>18</td><td>19</td><td>20</td><td>21</td></tr>\n" +
		"<tr><td>22</td><td>23</td><td>24</td><td>25</td><td>26</td><td>27</td><td>28</td></tr></table>\n"
	calendarFooter = "<aside><p>Popular categories: music, theatre, sport, family days out, markets and fairs, talks and " +
		"walks, workshops, charity events. Venues: the town hall, the library, the riverside park, the leisure centre " +
		"and the old chapel. Listings are free for community groups and charities.</p></aside>\n" +
		"<footer><p>Riverside Community Events is run by volunteers. Accessibility | Privacy and cookies | Terms of use | " +
		"Advertise with us. All times are local. Information is provided by the organisers and may change at short " +
		"notice; please check with them before you travel.</p></footer>\n"
)

func changefreq(p time.Duration) string {
	switch {
	case p <= 0:
		return "never"
	case p <= time.Hour:
		return "hourly"
	case p <= 24*time.Hour:
		return "daily"
	case p <= 7*24*time.Hour:
		return "weekly"
	}
	return "monthly"
}

// serveSitemap answers the four sitemap files every ordinary host (and
// mirror) has: /sitemap.xml (all pages), /sitemap_index.xml (an index of the
// next two), /sitemaps/pages-1.xml (first half) and /sitemaps/pages-2.xml.gz
// (second half, gzip-compressed file).
func (w *Web) serveSitemap(sw http.ResponseWriter, r *http.Request, h *hostInfo, name string, b *bytes.Buffer) {
	o := h
	if h.kind == kindMirror {
		o = w.ordinary[h.index]
	}
	m := o.model()
	base := w.base(h.name)
	if name == "/sitemap_index.xml" {
		b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
		for _, f := range []string{"/sitemaps/pages-1.xml", "/sitemaps/pages-2.xml.gz"} {
			b.WriteString("<sitemap><loc>" + base + f + "</loc></sitemap>\n")
		}
		b.WriteString("</sitemapindex>\n")
		w.send(sw, r, 200, "application/xml", b.Bytes(), time.Time{})
		return
	}
	lo, hi := 0, len(m.pages)
	switch name {
	case "/sitemaps/pages-1.xml":
		hi = len(m.pages) / 2
	case "/sitemaps/pages-2.xml.gz":
		lo = len(m.pages) / 2
	}
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
	for j := lo; j < hi; j++ {
		p := m.pages[j]
		_, since := w.version(o.index, j, p.period)
		b.WriteString("<url><loc>")
		b.WriteString(html.EscapeString(base + p.path))
		b.WriteString("</loc><lastmod>")
		b.WriteString(since.UTC().Format(time.RFC3339))
		b.WriteString("</lastmod><changefreq>")
		b.WriteString(changefreq(p.period))
		b.WriteString("</changefreq></url>\n")
	}
	b.WriteString("</urlset>\n")
	if !strings.HasSuffix(name, ".gz") {
		w.send(sw, r, 200, "application/xml", b.Bytes(), time.Time{})
		return
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(b.Bytes())
	_ = zw.Close()
	w.send(sw, r, 200, "application/gzip", z.Bytes(), time.Time{})
}
