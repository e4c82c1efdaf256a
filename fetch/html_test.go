package fetch

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	xhtml "golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/internal/cputime"
)

type wantLink struct{ url, text, rel, tag string }

func parseFile(t testing.TB, name string) *Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = ToUTF8(b, "text/html")
	var p HTML
	return p.ParseBytes(b, mustURL(t, "http://page.example/section/index.html"))
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func checkLinks(t *testing.T, name string, got []Link, want []wantLink) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d links, want %d", name, len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		if g.URL.String() != w.url || g.Text != w.text || g.Rel != w.rel || g.Tag != w.tag {
			t.Errorf("%s: link %d = {%s %q %q %s}, want {%s %q %q %s}", name, i, g.URL, g.Text, g.Rel, g.Tag, w.url, w.text, w.rel, w.tag)
		}
	}
}

// TestHTMLMessy covers uppercase tags, unquoted attributes, unclosed tags,
// several base tags (the first wins), script/style/comment content,
// entities, skipped schemes, meta robots and refresh, link rel, iframe, area.
func TestHTMLMessy(t *testing.T) {
	d := parseFile(t, "messy.html")
	if d.Title != "Kleine Zeitung & Co" || d.Lang != "de-AT" || d.Base.String() != "http://base.example/dir/sub/" ||
		!d.NoIndex || d.NoFollow || d.Truncated {
		t.Errorf("title %q lang %q base %v noindex %v nofollow %v truncated %v", d.Title, d.Lang, d.Base, d.NoIndex, d.NoFollow, d.Truncated)
	}
	// With scripting disabled, the default, <noscript> content is markup
	// and visible, as in a browser with scripting disabled.
	wantText := "Relative link Up one First paragraph with bold and unclosed italic Second paragraph été €5 js mail data phone top spaced Unclosed anchor Next no href noscript Absolute IDN entities in href Last words"
	if d.Text != wantText {
		t.Errorf("text = %q\nwant   %q", d.Text, wantText)
	}
	for _, bad := range []string{"hidden", "not a link", "color", "comment", "fallback"} {
		if strings.Contains(d.Text, bad) {
			t.Errorf("text contains invisible %q", bad)
		}
	}
	checkLinks(t, "messy.html", d.Links, []wantLink{
		{"http://base.example/artikel/123", "", "canonical", "link"},
		{"http://en.example/article/123", "", "alternate", "link"},
		{"http://base.example/dir/sub/feed.xml", "", "alternate", "link"},
		{"http://base.example/refresh-target", "", "refresh", "meta"},
		{"http://base.example/dir/sub/relative.html", "Relative link", "", "a"},
		{"http://base.example/dir/up.html", "Up one", "nofollow", "a"},
		{"http://base.example/spaced%20path.html", "spaced", "", "a"},
		{"http://base.example/unclosed", "Unclosed anchor", "", "a"},
		{"http://base.example/next", "Logo image Next", "", "a"},
		{"http://base.example/area-target", "Area alt", "", "area"},
		{"http://base.example/frame-src", "Embedded", "", "iframe"},
		{"http://base.example/inside-noscript", "noscript", "", "a"},
		{"http://other.example/Path?q=1#frag", "Absolute", "", "a"},
		{"http://xn--bcher-kva.example/", "IDN", "", "a"},
		{"http://base.example/a&b?x=1&y=2", "entities in href", "", "a"},
	})
	if !d.Links[5].HasRel("nofollow") || d.Links[4].HasRel("nofollow") {
		t.Error("HasRel")
	}
}

func TestHTMLBroken(t *testing.T) {
	d := parseFile(t, "broken.html")
	if d.Title != "Broken <b>markup" {
		t.Errorf("title %q", d.Title)
	}
	checkLinks(t, "broken.html", d.Links, []wantLink{
		{"http://page.example/one", "", "", "a"},
		{"http://page.example/two", "nested anchors", "", "a"},
		{"http://page.example/three", "spaces around equals", "", "a"},
		{"http://page.example/four", "four", "nofollow sponsored", "a"},
		{"http://page.example/five", "five", "", "a"},
		{"http://page.example/six", "mixed case attribute", "", "a"},
	})
	if strings.Contains(d.Text, "document.write") {
		t.Errorf("script in text: %q", d.Text)
	}
}

func TestHTMLFramesAndRobots(t *testing.T) {
	d := parseFile(t, "frames.html")
	if !d.NoIndex || !d.NoFollow || d.Title != "Frames" {
		t.Errorf("%+v", d)
	}
	checkLinks(t, "frames.html", d.Links, []wantLink{
		{"http://page.example/section/nav.html", "Navigation", "", "frame"},
		{"http://page.example/section/main.html", "", "", "frame"},
	})
}

// TestHTMLLatin1 parses a latin-1 page served without any charset, after
// the fetcher's conversion.
func TestHTMLLatin1(t *testing.T) {
	d := parseFile(t, "latin1.html")
	if d.Title != "Café du Château" || d.Text != "Crème brûlée coûte 5 £, naïve façade. Menü" {
		t.Errorf("title %q text %q", d.Title, d.Text)
	}
	checkLinks(t, "latin1.html", d.Links, []wantLink{{"http://page.example/section/men%C3%BC.html", "Menü", "", "a"}})
}

func TestHTMLCases(t *testing.T) {
	page := "http://h.example/a/b.html"
	tests := []struct {
		name, html string
		header     http.Header
		title      string
		text       string
		links      []wantLink
		noindex    bool
		nofollow   bool
		lang       string
	}{
		{name: "empty"},
		{name: "text only", html: "just text", text: "just text"},
		{name: "base relative to page", html: `<base href="../x/"><a href=y>y</a>`, text: "y",
			links: []wantLink{{"http://h.example/x/y", "y", "", "a"}}},
		{name: "base without href is skipped", html: `<base target=_top><base href="/z/"><a href=y>y</a>`, text: "y",
			links: []wantLink{{"http://h.example/z/y", "y", "", "a"}}},
		{name: "base after links still applies", html: `<a href=y>y</a><base href="/late/">`, text: "y",
			links: []wantLink{{"http://h.example/late/y", "y", "", "a"}}},
		{name: "javascript base ignored", html: `<base href="javascript:x"><a href=y>y</a>`, text: "y",
			links: []wantLink{{"http://h.example/a/y", "y", "", "a"}}},
		{name: "x-robots-tag header", html: "<p>x", header: http.Header{"X-Robots-Tag": {"noindex, nofollow"}},
			text: "x", noindex: true, nofollow: true},
		{name: "x-robots-tag for another agent", header: http.Header{"X-Robots-Tag": {"otherbot: noindex"}}},
		{name: "meta robots none", html: `<meta name="Robots" content="none">`, noindex: true, nofollow: true},
		{name: "content-language header", header: http.Header{"Content-Language": {"fr, en"}}, lang: "fr"},
		{name: "meta content-language", html: `<meta http-equiv="Content-Language" content="pt-BR">`, lang: "pt-BR"},
		{name: "refresh forms", html: `<meta http-equiv=refresh content="0;url=/r1"><meta http-equiv="REFRESH" content="5, /r2"><meta http-equiv=refresh content="5">`,
			links: []wantLink{{"http://h.example/r1", "", "refresh", "meta"}, {"http://h.example/r2", "", "refresh", "meta"}}},
		{name: "skipped schemes", html: `<a href=" JavaScript:x">a</a><a href="MAILTO:x@y">b</a><a href="data:,x">c</a><a href="tel:1">d</a><a href="">e</a><a href="#f">f</a><a href="ftp://f.example/x">g</a>`,
			text: "abcdefg", links: []wantLink{{"ftp://f.example/x", "g", "", "a"}}},
		{name: "link rel other than canonical/alternate", html: `<link rel=stylesheet href=a.css><link rel=icon href=i.ico><link rel="Canonical" href=/c>`,
			links: []wantLink{{"http://h.example/c", "", "canonical", "link"}}},
		{name: "whitespace and nbsp", html: "<p>a\u00a0\u00a0b\t\n c</p><p>d</p>", text: "a b c d"},
		{name: "inline tags do not split words", html: "<p>ex<b>am</b>ple</p>", text: "example"},
		{name: "title only first", html: "<title>One</title><title>Two</title>x", title: "One", text: "x"},
		{name: "style and template hidden", html: "<style>.a{}</style><template><p>t</p></template>v", text: "v"},
		{name: "unclosed head", html: "<head><title>T</title><body><p>b", title: "T", text: "b"},
		{name: "link inside an anchor", html: `<a href=/a>x<iframe src=/f title=F></iframe>y</a>`, text: "x y",
			links: []wantLink{{"http://h.example/a", "x y", "", "a"}, {"http://h.example/f", "F", "", "iframe"}}},
		{name: "nul bytes", html: "<a href=\"/x\x00y\">a\x00b</a>", text: "ab",
			links: []wantLink{{"http://h.example/x%EF%BF%BDy", "ab", "", "a"}}},
	}
	for _, tt := range tests {
		var p HTML
		d, err := p.Parse(&Response{URL: mustURL(t, page), Body: []byte(tt.html), Header: tt.header})
		if err != nil {
			t.Fatal(err)
		}
		if d.Title != tt.title || d.Text != tt.text || d.NoIndex != tt.noindex || d.NoFollow != tt.nofollow || d.Lang != tt.lang {
			t.Errorf("%s: title %q text %q noindex %v nofollow %v lang %q", tt.name, d.Title, d.Text, d.NoIndex, d.NoFollow, d.Lang)
		}
		checkLinks(t, tt.name, d.Links, tt.links)
	}
}

func TestHTMLTruncatedResponse(t *testing.T) {
	var p HTML
	d, err := p.Parse(&Response{URL: mustURL(t, "http://h.example/"), Body: []byte("<p>cut"), Truncated: true})
	if err != nil || !d.Truncated {
		t.Errorf("Parse of a truncated body: %+v, %v", d, err)
	}
}

func TestHTMLLimits(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString(`<a href="/p">ééé word</a> `)
	}
	p := HTML{MaxLinks: 10, MaxText: 101}
	d := p.ParseBytes([]byte(b.String()), mustURL(t, "http://h.example/"))
	if len(d.Links) != 10 || !d.Truncated || len(d.Text) > 101 || !utf8.ValidString(d.Text) {
		t.Errorf("links %d, truncated %v, text %d bytes, valid %v", len(d.Links), d.Truncated, len(d.Text), utf8.ValidString(d.Text))
	}
}

// TestHTMLRealPages checks the real pages in testdata against what
// golang.org/x/net/html's full tree parser finds.
func TestHTMLRealPages(t *testing.T) {
	for _, name := range []string{"go1.html", "go_mem.html", "rustc-codegen.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		base := mustURL(t, "http://docs.example/doc/"+name)
		var p HTML
		d := p.ParseBytes(b, base)
		want := treeHrefs(t, b)
		var got []string
		for _, l := range d.Links {
			if l.Tag == "a" {
				got = append(got, l.URL.String())
			}
		}
		var wantURLs []string
		for _, h := range want {
			h = strings.TrimSpace(h)
			if h == "" || h[0] == '#' || strings.HasPrefix(h, "javascript:") || strings.HasPrefix(h, "mailto:") {
				continue
			}
			u, err := base.Parse(h)
			if err != nil {
				continue
			}
			wantURLs = append(wantURLs, u.String())
		}
		if strings.Join(got, "\n") != strings.Join(wantURLs, "\n") {
			t.Errorf("%s: %d links, tree parser finds %d", name, len(got), len(wantURLs))
		}
		if (d.Title == "") != (name == "go_mem.html") || len(d.Text) < len(b)/10 || strings.Contains(d.Text, "function(") {
			t.Errorf("%s: title %q, %d bytes of text", name, d.Title, len(d.Text))
		}
	}
}

// treeHrefs returns the hrefs of the <a> elements x/net/html's tree builder
// finds with scripting disabled, as HTML parses by default.
func treeHrefs(t *testing.T, b []byte) []string { return treeHrefsMode(t, b, false) }

var benchPages = []string{"go1.html", "go_mem.html", "rustc-codegen.html", "messy.html"}

func loadBenchPages(b *testing.B) ([][]byte, int64) {
	var pages [][]byte
	var n int64
	for _, name := range benchPages {
		p, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, p)
		n += int64(len(p))
	}
	return pages, n
}

// BenchmarkHTML measures parsing throughput over the testdata pages; compare
// with BenchmarkHTMLTokenizer, the bare tokenizer loop over the same bytes.
func BenchmarkHTML(b *testing.B) {
	pages, n := loadBenchPages(b)
	base := mustURL(b, "http://docs.example/doc/page.html")
	var p HTML
	b.ReportAllocs()
	b.SetBytes(n)
	links := 0
	cpu := cputime.Now()
	for b.Loop() {
		for _, page := range pages {
			links += len(p.ParseBytes(page, base).Links)
		}
	}
	reportCPU(b, n, cpu)
	b.ReportMetric(float64(links)/float64(b.N), "links/op")
}

// BenchmarkHTMLTokenizer is the baseline: golang.org/x/net/html's tokenizer
// with nothing done per token.
func BenchmarkHTMLTokenizer(b *testing.B) {
	pages, n := loadBenchPages(b)
	b.ReportAllocs()
	b.SetBytes(n)
	cpu := cputime.Now()
	for b.Loop() {
		for _, page := range pages {
			z := xhtml.NewTokenizer(bytes.NewReader(page))
			for z.Next() != xhtml.ErrorToken {
			}
		}
	}
	reportCPU(b, n, cpu)
}

// reportCPU reports throughput per CPU-second of the process (GC included),
// which stays meaningful when other processes share the cores.
func reportCPU(b *testing.B, bytesPerOp int64, start time.Duration) {
	if d := cputime.Now() - start; start > 0 && d > 0 {
		b.ReportMetric(float64(bytesPerOp)*float64(b.N)/d.Seconds()/1e6, "MB/cpu-s")
	}
}

// BenchmarkHTMLVsTokenizer alternates, page by page, HTML.ParseBytes and a
// bare tokenizer loop over the same bytes, timing each with the CPU time of
// the benchmark's own OS thread, and reports their ratio: a comparison that
// holds on a machine shared with other work, where ns/op of two separate
// benchmarks swings with the load. (Background GC work on other threads is
// not counted; GC assists are.)
func BenchmarkHTMLVsTokenizer(b *testing.B) {
	if threadCPU() == 0 {
		b.Skip("no per-thread CPU time on this platform")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pages, n := loadBenchPages(b)
	base := mustURL(b, "http://docs.example/doc/page.html")
	var p HTML
	var parse, bare time.Duration
	b.SetBytes(n)
	for b.Loop() {
		for _, page := range pages {
			t0 := threadCPU()
			p.ParseBytes(page, base)
			t1 := threadCPU()
			z := xhtml.NewTokenizer(bytes.NewReader(page))
			for z.Next() != xhtml.ErrorToken {
			}
			bare += threadCPU() - t1
			parse += t1 - t0
		}
	}
	b.ReportMetric(float64(parse)/float64(bare), "x-bare")
	b.ReportMetric(float64(n)*float64(b.N)/parse.Seconds()/1e6, "parse-MB/cpu-s")
	b.ReportMetric(float64(n)*float64(b.N)/bare.Seconds()/1e6, "bare-MB/cpu-s")
}

// TestLookupTag checks that every known element has its own slot in
// tagTable (a hash collision would lose one) and that unknown names and
// near misses are not mistaken for known ones.
func TestLookupTag(t *testing.T) {
	for _, k := range knownTags {
		for _, name := range []string{k.name, strings.ToUpper(k.name)} {
			if got := lookupTag([]byte(name)); got != k.info {
				t.Errorf("lookupTag(%q) = %+v, want %+v", name, got, k.info)
			}
		}
	}
	for _, name := range []string{"", "span", "abbr", "h7", "fieldsex", "frameseT2", "blockquotes", "a\x00", "\x01", "H\x11", "aa"} {
		if got := lookupTag([]byte(name)); got != (tagInfo{}) {
			t.Errorf("lookupTag(%q) = %+v, want none", name, got)
		}
	}
}

// TestParseRenderedScripting: a rendered response is the DOM of a browser
// that ran scripts, where <noscript> is text; a static one is parsed as a
// crawler reads it, <noscript> links included.
func TestParseRenderedScripting(t *testing.T) {
	u, _ := url.Parse("http://a.test/")
	body := []byte(`<html><body><noscript><a href="/static-only">s</a></noscript><a href="/both">b</a></body></html>`)
	for _, tc := range []struct {
		rendered bool
		want     int
	}{{false, 2}, {true, 1}} {
		d, err := (&HTML{}).Parse(&Response{URL: u, Status: 200, Body: body, ContentType: "text/html", Rendered: tc.rendered})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Links) != tc.want {
			t.Errorf("rendered %v: %d links %v, want %d", tc.rendered, len(d.Links), d.Links, tc.want)
		}
	}
}
