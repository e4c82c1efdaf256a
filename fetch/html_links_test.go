package fetch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/internal/cputime"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// TestHTMLNoscript parses an old javadoc page whose "All Classes" link is
// only in <NOSCRIPT> (the script writes it when scripts run): with scripting
// off, the default, the link is found, as a browser with scripting disabled
// finds it; with Scripting, it is not, and the links are those of x/net/html's
// tree builder in the same mode.
func TestHTMLNoscript(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "javadoc-noscript.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := mustURL(t, "http://docs.example/api/org/example/lang/StringUtils.html")
	const api = "http://docs.example/api/"
	const pkg = api + "org/example/lang/"
	nav := []wantLink{
		{api + "overview-summary.html", "Overview", "", "a"},
		{pkg + "package-summary.html", "Package", "", "a"},
		{pkg + "package-tree.html", "Tree", "", "a"},
		{api + "index-all.html", "Index", "", "a"},
		{pkg + "StringEscapeUtils.html", "PREV CLASS", "", "a"},
		{pkg + "Validate.html", "NEXT CLASS", "", "a"},
		{api + "index.html?org/example/lang/StringUtils.html", "FRAMES", "", "a"},
		{pkg + "StringUtils.html", "NO FRAMES", "", "a"},
	}
	allClasses := wantLink{api + "allclasses-noframe.html", "All Classes", "", "a"}
	seeAlso := wantLink{pkg + "CharUtils.html", "CharUtils", "", "a"}
	tests := []struct {
		name      string
		scripting bool
		links     []wantLink
		text      bool // "All Classes" and "Scripting is off" in the text
	}{
		{"scripting off", false, append(append(nav, allClasses, seeAlso, allClasses),
			wantLink{api + "no-js.html", "plain pages", "", "a"},
			wantLink{pkg + "nested.html", "nested", "", "a"}), true},
		{"scripting on", true, append(nav, seeAlso), false},
	}
	for _, tt := range tests {
		p := HTML{Scripting: tt.scripting}
		d := p.ParseBytes(b, page)
		checkLinks(t, tt.name, d.Links, tt.links)
		for _, s := range []string{"All Classes", "Scripting is off"} {
			if strings.Contains(d.Text, s) != tt.text {
				t.Errorf("%s: %q in the text is %v: %q", tt.name, s, !tt.text, d.Text)
			}
		}
		if strings.Contains(d.Text, "document.writeln") || d.Title != "StringUtils" {
			t.Errorf("%s: title %q, text %q", tt.name, d.Title, d.Text)
		}
		// The tree builder in the same scripting mode finds the same anchors.
		var want []string
		for _, h := range treeHrefsMode(t, b, tt.scripting) {
			if u, err := page.Parse(h); err == nil && h[0] != '#' {
				want = append(want, u.String())
			}
		}
		var got []string
		for _, l := range d.Links {
			got = append(got, l.URL.String())
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: links\n%s\ntree builder\n%s", tt.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestHTMLNoscriptCases covers <noscript> where it is not a javadoc nav
// bar: in the head (a meta refresh for browsers without scripts), unclosed,
// self-closing, and inside elements that hide it anyway.
func TestHTMLNoscriptCases(t *testing.T) {
	page := "http://h.example/a/b.html"
	tests := []struct {
		name, html string
		scripting  bool
		text       string
		links      []wantLink
	}{
		{name: "refresh in head", html: `<head><noscript><meta http-equiv=refresh content="0; url=/nojs"></noscript></head><p>x`,
			text: "x", links: []wantLink{{"http://h.example/nojs", "", "refresh", "meta"}}},
		{name: "refresh in head, scripting", html: `<head><noscript><meta http-equiv=refresh content="0; url=/nojs"></noscript></head><p>x`,
			scripting: true, text: "x"},
		{name: "unclosed", html: `<noscript><a href=/n>n</a><p>rest`, text: "n rest",
			links: []wantLink{{"http://h.example/n", "n", "", "a"}}},
		{name: "unclosed, scripting", html: `<noscript><a href=/n>n</a><p>rest`, scripting: true},
		{name: "self-closing", html: `<noscript/><a href=/n>n</a></noscript><p>after`, text: "n after",
			links: []wantLink{{"http://h.example/n", "n", "", "a"}}},
		{name: "inside script", html: `<script>"<noscript><a href=/s>s</a></noscript>"</script>v`, text: "v"},
		{name: "inside template", html: `<template><noscript><a href=/t>t</a></noscript></template>v`, text: "v",
			links: []wantLink{{"http://h.example/t", "", "", "a"}}},
		{name: "upper case", html: `<NOSCRIPT><A HREF="x.html">X</A></NOSCRIPT>`, text: "X",
			links: []wantLink{{"http://h.example/a/x.html", "X", "", "a"}}},
	}
	for _, tt := range tests {
		p := HTML{Scripting: tt.scripting}
		d := p.ParseBytes([]byte(tt.html), mustURL(t, page))
		if d.Text != tt.text {
			t.Errorf("%s: text %q, want %q", tt.name, d.Text, tt.text)
		}
		checkLinks(t, tt.name, d.Links, tt.links)
	}
}

// treeHrefsMode is treeHrefs with x/net/html's scripting flag set.
func treeHrefsMode(t *testing.T, b []byte, scripting bool) []string {
	root, err := xhtml.ParseWithOptions(bytes.NewReader(b), xhtml.ParseOptionEnableScripting(scripting))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					out = append(out, a.Val)
					break
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// TestHTMLHrefs parses testdata/hrefs.html, the hrefs hand-written pages
// carry, at /105/index.html, and expects what a browser makes of them
// (the WHATWG URL Standard), and the pagination and translation links of
// its <link> elements.
func TestHTMLHrefs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "hrefs.html"))
	if err != nil {
		t.Fatal(err)
	}
	var p HTML
	d := p.ParseBytes(b, mustURL(t, "http://site.example/105/index.html"))
	const site = "http://site.example"
	want := []struct {
		wantLink
		hreflang string
	}{
		{wantLink{site + "/105/index2.html", "", "next", "link"}, ""},
		{wantLink{site + "//index.html", "", "prev", "link"}, ""},
		{wantLink{site + "/105/index0.html", "", "previous", "link"}, ""},
		{wantLink{site + "/de/105/", "", "alternate", "link"}, "de"},
		{wantLink{"https://pt.example.com/105/", "", "alternate", "link"}, "pt-BR"},
		{wantLink{site + "/105/", "", "alternate", "link"}, "x-default"},
		{wantLink{site + "//index.html", "Empty segment", "", "a"}, ""},
		{wantLink{"http://www.example.com/x", "Three slashes", "", "a"}, ""},
		{wantLink{"https://www.example.com/y", "Four slashes", "", "a"}, ""},
		{wantLink{"http://www.example.com/a/b.html", "Backslashes", "", "a"}, ""},
		{wantLink{"http://cdn.example.com/lib.js", "Backslash network path", "", "a"}, ""},
		{wantLink{site + `/105/sub/page.html?q=a\b`, "Backslash relative, kept in the query", "", "a"}, ""},
		{wantLink{site + "/tabbed/newline/x.html", "Tab and newline", "", "a"}, ""},
		{wantLink{site + "/trimmed.html", "Trimmed", "", "a"}, ""},
		{wantLink{site + "/search?q=it%27s&lang=en", "Quote in the query", "", "a"}, ""},
		{wantLink{site + "/search?q=it%27s&lang=en", "Encoded quote", "", "a"}, ""},
		{wantLink{site + "/o'reilly/", "Quote in the path", "", "a"}, ""},
		{wantLink{"http://www.example.com/Up", "Upper case", "", "a"}, ""},
		{wantLink{"http://127.0.0.1:8080/local", "Hex IPv4", "", "a"}, ""},
		{wantLink{site + "/105/next.html", "Same-scheme relative", "", "a"}, ""},
		{wantLink{site + "/search?q=a%20b%22c%3Cd%3E", "Spaces and quotes", "", "a"}, ""},
		// "http://exa mple.com/" has no valid host: left out.
		{wantLink{site + "/105/index2.html", "Next page", "next", "a"}, ""},
	}
	var wl []wantLink
	for _, w := range want {
		wl = append(wl, w.wantLink)
	}
	checkLinks(t, "hrefs.html", d.Links, wl)
	for i := 0; i < len(d.Links) && i < len(want); i++ {
		if d.Links[i].Hreflang != want[i].hreflang {
			t.Errorf("link %d: hreflang %q, want %q", i, d.Links[i].Hreflang, want[i].hreflang)
		}
	}
	// One page, one key: the raw and the encoded quote.
	if len(d.Links) > 15 {
		k1, err1 := urlnorm.Canonical(d.Links[14].URL.String())
		k2, err2 := urlnorm.Canonical(d.Links[15].URL.String())
		if err1 != nil || err2 != nil || k1 != k2 {
			t.Errorf("keys %q (%v) and %q (%v) differ", k1, err1, k2, err2)
		}
	}
}

// indexPage returns a javadoc index-all.html of n method links, each
// "pkg/ClassK.html#methodI()".
func indexPage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\">\n<HTML><HEAD><TITLE>Index</TITLE></HEAD><BODY>\n<DL>\n")
	for i := range n {
		fmt.Fprintf(&b, "<DT><A HREF=\"org/example/pkg%d/Class%d.html#method%d()\"><B>method%d()</B></A> - Method in class org.example.pkg%d.Class%d\n<DD>&nbsp;\n",
			i%37, i%997, i, i, i%37, i%997)
	}
	b.WriteString("</DL>\n</BODY></HTML>\n")
	return b.Bytes()
}

// TestHTMLLinkCap parses a 20000-link index page with caps below, at and
// above its size: the links past the cap are counted, not silently lost.
func TestHTMLLinkCap(t *testing.T) {
	const n = 20000
	page := indexPage(n)
	base := mustURL(t, "http://docs.example/api/index-all.html")
	tests := []struct {
		maxLinks, kept, dropped int
	}{
		{0, n, 0}, // the default, DefaultMaxLinks
		{n + 1, n, 0},
		{n, n, 0},
		{n - 1, n - 1, 1},
		{10000, 10000, 10000},
		{1, 1, n - 1},
	}
	for _, tt := range tests {
		p := HTML{MaxLinks: tt.maxLinks, MaxText: 8 << 20} // all the text fits: Truncated is the links'
		d := p.ParseBytes(page, base)
		if len(d.Links) != tt.kept || d.LinksDropped != tt.dropped || d.Truncated != (tt.dropped > 0) {
			t.Errorf("MaxLinks %d: %d links, %d dropped, truncated %v; want %d, %d", tt.maxLinks, len(d.Links), d.LinksDropped, d.Truncated, tt.kept, tt.dropped)
			continue
		}
		last := d.Links[len(d.Links)-1]
		k := tt.kept - 1
		want := fmt.Sprintf("http://docs.example/api/org/example/pkg%d/Class%d.html#method%d()", k%37, k%997, k)
		if last.URL.String() != want || last.Text != fmt.Sprintf("method%d()", k) {
			t.Errorf("MaxLinks %d: last link %v %q, want %s", tt.maxLinks, last.URL, last.Text, want)
		}
	}
}

// BenchmarkHTMLIndexPage parses the 20000-link index page with the default
// cap: the cost of a page that fits, per link.
func BenchmarkHTMLIndexPage(b *testing.B) {
	page := indexPage(20000)
	base := mustURL(b, "http://docs.example/api/index-all.html")
	var p HTML
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	cpu := cputime.Now()
	for b.Loop() {
		if d := p.ParseBytes(page, base); len(d.Links) != 20000 {
			b.Fatal(len(d.Links))
		}
	}
	reportCPU(b, int64(len(page)), cpu)
}
