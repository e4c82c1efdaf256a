package parsertest

import (
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
)

const directivesHTML = `<!DOCTYPE html>
<html lang="de-AT"><head><title>  Suite
  page </title>
<base href="http://other.test/base/">
<base href="http://ignored.test/">
<meta name="robots" content="noindex, nofollow">
<script>var s = "<a href='/in-script'>in script</a>";</script>
<style>a { color: red }</style>
</head><body>
<p>Hello <b>world</b></p>
<a href="rel.html">Relative</a> <a href="/root">Root</a> <a href="#top">Top</a>
<a href="javascript:void(0)">JS</a> <a href="mailto:a@b.test">Mail</a> <a href="tel:+1">Tel</a>
<a href="data:text/html,x">Data</a> <a href="VBScript:x">VB</a>
<a href="https://abs.test/x#frag">Absolute</a> <a>no href</a>
<!-- <a href="/in-comment">comment</a> -->
</body></html>`

const headerHTML = `<html><head><title>Header directives</title></head><body><a href="next.html">next</a></body></html>`

const rssFeed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel>
<title>Suite News</title>
<link>http://news.test/</link>
<item><title>First</title><link>http://news.test/1.html</link><description>One &amp; only</description></item>
<item><title>Relative</title><link>/2.html</link><enclosure url="/media/2.mp3" type="audio/mpeg" length="1"/></item>
<item><title>Script</title><link>javascript:alert(1)</link></item>
</channel></rss>`

const atomFeed = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://blog.test/base/">
<title>Suite Blog</title>
<link rel="self" href="http://blog.test/feed.atom"/>
<link rel="alternate" href="http://blog.test/"/>
<link rel="next" href="page2.atom"/>
<entry><title>Entry one</title><link rel="alternate" href="one.html"/><id>1</id></entry>
<entry><title>Entry two</title><link href="http://blog.test/two.html"/><id>2</id></entry>
</feed>`

const textSitemap = "http://maps.test/a\n\nhttps://maps.test/b?x=1\nftp://maps.test/c\n"

// wantLinks checks a Document's links, canonicalized, against want.
func wantLinks(name string, want ...string) func(t *testing.T, d *fetch.Document) {
	return func(t *testing.T, d *fetch.Document) {
		t.Helper()
		w := map[string]bool{}
		for _, u := range want {
			w[u] = true
		}
		compareSets(t, name, "link", linkSet(t, name, d.Links), w)
	}
}

// cannedSamples are the suite's own documents, with exact expectations.
func cannedSamples(formats Format) []sample {
	var out []sample
	if formats&HTML != 0 {
		links := wantLinks("directives.html", "http://other.test/base/rel.html", "http://other.test/root", "https://abs.test/x")
		xrobots := response("http://page.test/dir/header.html", "text/html; charset=utf-8", []byte(headerHTML))
		xrobots.Header.Set("X-Robots-Tag", "none")
		xrobots.Header.Set("Content-Language", "fr")
		out = append(out,
			sample{name: "directives.html", format: HTML, resp: response("http://page.test/dir/page.html", "text/html", []byte(directivesHTML)),
				check: func(t *testing.T, d *fetch.Document) {
					if d.Title != "Suite page" {
						t.Errorf("directives.html: Title %q, want %q", d.Title, "Suite page")
					}
					if !strings.EqualFold(d.Lang, "de-AT") {
						t.Errorf("directives.html: Lang %q, want de-AT (<html lang>)", d.Lang)
					}
					if d.Base == nil || d.Base.String() != "http://other.test/base/" {
						t.Errorf("directives.html: Base %v, want the first <base href>", d.Base)
					}
					if !d.NoIndex || !d.NoFollow {
						t.Errorf("directives.html: NoIndex %v, NoFollow %v; want both from <meta name=robots>", d.NoIndex, d.NoFollow)
					}
					if !strings.Contains(d.Text, "Hello world") || strings.Contains(d.Text, "in script") ||
						strings.Contains(d.Text, "color") || strings.Contains(d.Text, "comment") {
						t.Errorf("directives.html: Text %q: want the visible text only", d.Text)
					}
					links(t, d)
					for _, l := range d.Links {
						if l.Tag != "a" {
							t.Errorf("directives.html: link %s has Tag %q, want a", l.URL, l.Tag)
						}
						if l.URL.Host == "abs.test" && (l.URL.Fragment != "frag" || l.Text != "Absolute") {
							t.Errorf("directives.html: link %s with text %q, want the fragment kept and the text Absolute", l.URL, l.Text)
						}
					}
				}},
			sample{name: "header.html", format: HTML, resp: xrobots, check: func(t *testing.T, d *fetch.Document) {
				if !d.NoIndex || !d.NoFollow {
					t.Errorf("header.html: NoIndex %v, NoFollow %v; want both from X-Robots-Tag: none", d.NoIndex, d.NoFollow)
				}
				if d.Lang != "fr" {
					t.Errorf("header.html: Lang %q, want fr (Content-Language)", d.Lang)
				}
				wantLinks("header.html", "http://page.test/dir/next.html")(t, d)
			}},
		)
	}
	if formats&Sitemap != 0 {
		out = append(out, sample{name: "sitemap.txt", format: Sitemap, resp: response("http://maps.test/sitemap.txt", "text/plain", []byte(textSitemap)),
			check: wantLinks("sitemap.txt", "http://maps.test/a", "https://maps.test/b?x=1")})
	}
	if formats&Feed != 0 {
		out = append(out,
			sample{name: "rss.xml", format: Feed, resp: response("http://feeds.test/dir/rss.xml", "application/rss+xml", []byte(rssFeed)),
				check: func(t *testing.T, d *fetch.Document) {
					if d.Title != "Suite News" {
						t.Errorf("rss.xml: Title %q", d.Title)
					}
					wantLinks("rss.xml", "http://news.test/", "http://news.test/1.html", "http://feeds.test/2.html", "http://feeds.test/media/2.mp3")(t, d)
				}},
			sample{name: "atom.xml", format: Feed, resp: response("http://feeds.test/dir/atom.xml", "application/atom+xml", []byte(atomFeed)),
				check: func(t *testing.T, d *fetch.Document) {
					if d.Title != "Suite Blog" {
						t.Errorf("atom.xml: Title %q", d.Title)
					}
					wantLinks("atom.xml", "http://blog.test/", "http://blog.test/base/page2.atom", "http://blog.test/base/one.html", "http://blog.test/two.html")(t, d)
				}},
		)
	}
	return out
}
