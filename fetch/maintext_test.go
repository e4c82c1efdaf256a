package fetch_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/fetch"
)

// mainPage is one page of testdata/maintext with its hand-marked main
// content: the sidecar NAME.main.txt holds the text a reader would call the
// page's content (headline, body, the data of a product, the posts of a
// thread) and nothing around it.
type mainPage struct {
	name string
	html []byte
	gold string
}

func loadMainPages(tb testing.TB) []mainPage {
	tb.Helper()
	files, err := filepath.Glob("testdata/maintext/*.html")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no pages in testdata/maintext: %v", err)
	}
	var pages []mainPage
	for _, f := range files {
		h, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		g, err := os.ReadFile(strings.TrimSuffix(f, ".html") + ".main.txt")
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, mainPage{strings.TrimSuffix(filepath.Base(f), ".html"), h, string(g)})
	}
	return pages
}

// tokens splits s into lowercase words of letters and digits.
func tokens(s string) map[string]int {
	m := make(map[string]int)
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		m[strings.ToLower(w)]++
	}
	return m
}

// overlap returns the words got and want share (as multisets) and the
// sizes of both: precision is common/nGot, recall common/nWant.
func overlap(got, want string) (common, nGot, nWant int) {
	g, w := tokens(got), tokens(want)
	for t, n := range g {
		nGot += n
		common += min(n, w[t])
	}
	for _, n := range w {
		nWant += n
	}
	return common, nGot, nWant
}

func pageURL(name string) *url.URL {
	u, _ := url.Parse("https://site.example/" + name)
	return u
}

func TestMainTextQuality(t *testing.T) {
	for _, p := range loadMainPages(t) {
		t.Run(p.name, func(t *testing.T) {
			dom, err := fetch.ParseDOM(p.html, pageURL(p.name), false)
			if err != nil {
				t.Fatal(err)
			}
			main := dom.MainText()
			c, ng, nw := overlap(main, p.gold)
			full := (&fetch.HTML{}).ParseBytes(p.html, pageURL(p.name)).Text
			fc, fng, _ := overlap(full, p.gold)
			t.Logf("main: P %.2f R %.2f   plain: P %.2f R %.2f", float64(c)/float64(ng), float64(c)/float64(nw), float64(fc)/float64(fng), float64(fc)/float64(nw))
			if ng == 0 {
				t.Fatalf("MainText is empty")
			}
			// Per page the extraction must keep most of the content and be
			// mostly content; the averages are in BenchmarkMainText.
			if p, r := float64(c)/float64(ng), float64(c)/float64(nw); p < 0.75 || r < 0.75 {
				t.Errorf("precision %.2f, recall %.2f; want both >= 0.75\n%s", p, r, main)
			}
		})
	}
}

func TestMainTextCases(t *testing.T) {
	const para = "This paragraph is long enough to count as content of the page for sure."
	for _, tc := range []struct {
		name, html string
		want       string // the exact main text
	}{
		{"empty", ``, ""},
		{"only links", `<ul><li><a href="/a">One</a></li><li><a href="/b">Two</a></li></ul>`, ""},
		{"nav and footer dropped", `<nav>Home About Contact us today please now</nav><div><p>` + para + `</p></div><footer>Copyright 2026 by the company that owns the site</footer>`, para},
		{"hidden dropped", `<div><p>` + para + `</p><p hidden>Secret text hidden from readers of the page here</p><p style="display: none">Also hidden from the readers of this page now</p><p aria-hidden="true">Hidden too</p></div>`, para},
		{"role navigation dropped", `<div role="navigation">Go to the first page of this site or the second one</div><article><p>` + para + `</p></article>`, para},
		{"link-dense run dropped", `<article><p>` + para + `</p><p>See <a href="/x">other news about this topic</a></p></article>`, para},
		{"short lines kept inside", `<article><h2>Ingredients</h2><ul><li>2 eggs</li></ul><p>` + para + `</p></article>`, "Ingredients\n2 eggs\n" + para},
		{"header with h1 kept", `<article><header><h1>Headline</h1></header><p>` + para + `</p></article><header>Site name</header>`, "Headline\n" + para},
		{"h1 outside prepended", `<div class="top"><h1>Title</h1></div><div class="body"><p>` + para + `</p><p>` + para + `</p></div>`, "Title\n" + para + "\n" + para},
		{"class word not substring", `<div class="thread-header"><p>` + para + `</p></div>`, para},
		{"named wrapper of most content kept", `<div class="nav-content"><p>` + para + `</p></div><div class="nav-side"><a href="/">Home</a></div>`, para},
		{"comments dropped", `<div class="post"><p>` + para + `</p></div><div id="comments"><p>I disagree with every single word written in the post above.</p></div>`, para},
		{"inline boilerplate dropped", `<div><h2>Backoff<a class="headerlink" href="#b">¶</a></h2><p>` + para + `</p></div>`, "Backoff\n" + para},
		{"script and style ignored", `<div><script>var x = "a long script string with many words in it";</script><style>p{}</style><p>` + para + `</p></div>`, para},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dom, err := fetch.ParseDOM([]byte(tc.html), pageURL("t"), false)
			if err != nil {
				t.Fatal(err)
			}
			if got := dom.MainText(); got != tc.want {
				t.Errorf("MainText() =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestMainTextParser(t *testing.T) {
	news, err := os.ReadFile("testdata/maintext/news.html")
	if err != nil {
		t.Fatal(err)
	}
	links := []byte(`<html><title>Index</title><body><a href="/a">Alpha</a> <a href="/b">Beta</a></body></html>`)
	sitemap := []byte(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://site.example/a</loc></url></urlset>`)
	long := []byte("<article><p>" + strings.Repeat("héllo wörld ", 200) + "</p></article>")
	for _, tc := range []struct {
		name  string
		p     *fetch.MainTextParser
		resp  *fetch.Response
		check func(t *testing.T, d *fetch.Document)
	}{
		{"article", &fetch.MainTextParser{}, &fetch.Response{URL: pageURL("news"), ContentType: "text/html", Body: news},
			func(t *testing.T, d *fetch.Document) {
				if !strings.HasPrefix(d.Text, "City council approves new bike lanes") || strings.Contains(d.Text, "Most read") {
					t.Errorf("Text = %.120q...", d.Text)
				}
				if len(d.Links) < 30 || d.Title == "" {
					t.Errorf("links and title must come from the HTML parser: %d links, title %q", len(d.Links), d.Title)
				}
			}},
		{"no main content keeps full text", &fetch.MainTextParser{}, &fetch.Response{URL: pageURL("index"), ContentType: "text/html", Body: links},
			func(t *testing.T, d *fetch.Document) {
				if d.Text != "Alpha Beta" {
					t.Errorf("Text = %q, want the full text", d.Text)
				}
			}},
		{"other types pass through", &fetch.MainTextParser{Parser: &fetch.Registry{}}, &fetch.Response{URL: pageURL("sitemap.xml"), ContentType: "application/xml", Body: sitemap},
			func(t *testing.T, d *fetch.Document) {
				if len(d.Links) != 1 || d.Text != "" {
					t.Errorf("sitemap: %d links, text %q", len(d.Links), d.Text)
				}
			}},
		{"content type from header", &fetch.MainTextParser{Parser: &fetch.HTML{}}, &fetch.Response{URL: pageURL("news"), Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: news},
			func(t *testing.T, d *fetch.Document) {
				if strings.Contains(d.Text, "Most read") {
					t.Errorf("Text not reduced: %.120q...", d.Text)
				}
			}},
		{"cap at a rune boundary", &fetch.MainTextParser{MaxText: 100}, &fetch.Response{URL: pageURL("long"), ContentType: "text/html", Body: long},
			func(t *testing.T, d *fetch.Document) {
				if len(d.Text) > 100 || !utf8.ValidString(d.Text) || !d.Truncated {
					t.Errorf("Text %d bytes, valid %v, truncated %v", len(d.Text), utf8.ValidString(d.Text), d.Truncated)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.p.Parse(tc.resp)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d)
		})
	}
	if _, err := (&fetch.MainTextParser{}).Parse(&fetch.Response{ContentType: "text/html", Body: news}); err == nil {
		t.Error("no URL: want an error")
	}
}

// BenchmarkMainText reports the token-level precision and recall of the
// main text against the hand-marked content of testdata/maintext
// (averaged over pages), for MainText and for the plain Document.Text, and
// the time per page of each.
func BenchmarkMainText(b *testing.B) {
	pages := loadMainPages(b)
	var size int64
	for _, p := range pages {
		size += int64(len(p.html))
	}
	quality := func(b *testing.B, extract func(p mainPage) string) {
		var sp, sr float64
		for _, p := range pages {
			c, ng, nw := overlap(extract(p), p.gold)
			if ng > 0 {
				sp += float64(c) / float64(ng)
			}
			sr += float64(c) / float64(nw)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for b.Loop() {
			for _, p := range pages {
				_ = extract(p)
			}
		}
		b.ReportMetric(time.Since(start).Seconds()*1000/float64(b.N*len(pages)), "ms/page")
		b.ReportMetric(sp/float64(len(pages)), "precision")
		b.ReportMetric(sr/float64(len(pages)), "recall")
	}
	b.Run("MainText", func(b *testing.B) {
		quality(b, func(p mainPage) string {
			d, err := (&fetch.MainTextParser{}).Parse(&fetch.Response{URL: pageURL(p.name), ContentType: "text/html", Body: p.html})
			if err != nil {
				b.Fatal(err)
			}
			return d.Text
		})
	})
	b.Run("PlainText", func(b *testing.B) {
		quality(b, func(p mainPage) string { return (&fetch.HTML{}).ParseBytes(p.html, pageURL(p.name)).Text })
	})
}
