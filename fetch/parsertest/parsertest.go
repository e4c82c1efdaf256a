package parsertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Format is a set of document formats a parser reads.
type Format uint8

// The formats of the suite's documents.
const (
	// HTML is text/html and application/xhtml+xml pages.
	HTML Format = 1 << iota
	// Sitemap is sitemaps.org urlsets and sitemap indexes, as XML and
	// gzip-compressed.
	Sitemap
	// Feed is RSS 2.0 and Atom 1.0 feeds.
	Feed
)

// Harness tells Run how to make the parser under test and what it reads.
type Harness struct {
	// New returns the parser under test. It is called once per subtest.
	New func(t *testing.T) fetch.Parser
	// Formats are the formats the parser reads; the suite gives it
	// documents of these formats only (and garbage labeled as them).
	Formats Format
	// Dispatch says the parser picks a parser by the response's content
	// type and refuses types it has none for with a *fetch.Error wrapping
	// fetch.ErrUnsupportedType (fetch.ByType, fetch.Registry).
	Dispatch bool
	// Skip names subtests that the implementation is known to fail, each
	// with the reason, which the subtest reports as it skips.
	Skip map[string]string
}

// sample is one response the suite parses and what it expects of the
// Document, beyond the checks every Document gets.
type sample struct {
	name   string
	format Format
	resp   *fetch.Response
	check  func(t *testing.T, d *fetch.Document)
}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, h Harness) {
	samples := webSamples(t, h.Formats)
	samples = append(samples, cannedSamples(h.Formats)...)
	if len(samples) == 0 {
		t.Fatal("parsertest: Harness.Formats names no format")
	}
	tests := []struct {
		name string
		fn   func(*testing.T, fetch.Parser, Harness, []sample)
	}{
		{"Documents", testDocuments},
		{"Truncated", testTruncated},
		{"Garbage", testGarbage},
		{"OtherXML", testOtherXML},
		{"NoURL", testNoURL},
		{"Unsupported", testUnsupported},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := h.Skip[tc.name]; ok {
				t.Skip("known deviation: " + reason)
			}
			tc.fn(t, h.New(t), h, samples)
		})
	}
}

// parse calls p.Parse, turning a panic into a test error, and checks that
// the body is left as it was and that an error is a *fetch.Error.
func parse(t *testing.T, p fetch.Parser, name string, resp *fetch.Response) (d *fetch.Document, err error) {
	t.Helper()
	body := bytes.Clone(resp.Body)
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: Parse panicked: %v", name, r)
			d, err = nil, errors.New("panic")
		}
	}()
	d, err = p.Parse(resp)
	if !bytes.Equal(body, resp.Body) {
		t.Errorf("%s: Parse modified the response body", name)
	}
	var fe *fetch.Error
	if err != nil && !errors.As(err, &fe) {
		t.Errorf("%s: error %v (%T) is not a *fetch.Error", name, err, err)
	}
	if err != nil && d != nil {
		t.Errorf("%s: a Document beside the error %v", name, err)
	}
	if err == nil && d == nil {
		t.Errorf("%s: neither a Document nor an error", name)
	}
	return d, err
}

var skippedSchemes = []string{"javascript", "mailto", "data", "tel", "vbscript"}

// checkDocument checks what every Document promises.
func checkDocument(t *testing.T, name string, resp *fetch.Response, d *fetch.Document) {
	t.Helper()
	if resp.URL != nil && (d.URL == nil || d.URL.String() != resp.URL.String()) {
		t.Errorf("%s: Document.URL = %v, want the response's %v", name, d.URL, resp.URL)
	}
	if resp.URL != nil && (d.Base == nil || !d.Base.IsAbs()) {
		t.Errorf("%s: Document.Base = %v, want an absolute URL", name, d.Base)
	}
	for i, l := range d.Links {
		switch {
		case l.URL == nil:
			t.Errorf("%s: link %d has no URL", name, i)
		case !l.URL.IsAbs():
			t.Errorf("%s: link %d (%s) is not absolute", name, i, l.URL)
		case slices.Contains(skippedSchemes, strings.ToLower(l.URL.Scheme)):
			t.Errorf("%s: link %d has the scheme %s, which is left out", name, i, l.URL.Scheme)
		case (l.URL.Scheme == "http" || l.URL.Scheme == "https") && l.URL.Host == "":
			t.Errorf("%s: link %d (%s) has no host", name, i, l.URL)
		case l.Tag == "":
			t.Errorf("%s: link %d (%s) has no Tag", name, i, l.URL)
		}
	}
	if resp.Truncated && !d.Truncated {
		t.Errorf("%s: the response is truncated, the Document is not", name)
	}
}

// linkSet returns the canonical form of the links' URLs.
func linkSet(t *testing.T, name string, links []fetch.Link) map[string]bool {
	t.Helper()
	c := urlnorm.Canonicalizer{SortQuery: true}
	out := map[string]bool{}
	for _, l := range links {
		if l.URL == nil {
			continue
		}
		s, err := c.Canonical(l.URL.String())
		if err != nil {
			t.Errorf("%s: link %s: %v", name, l.URL, err)
			continue
		}
		out[s] = true
	}
	return out
}

// compareSets reports the members of want missing from got and the
// members of got not in want.
func compareSets(t *testing.T, name, what string, got, want map[string]bool) {
	t.Helper()
	for s := range want {
		if !got[s] {
			t.Errorf("%s: missing %s %s", name, what, s)
		}
	}
	for s := range got {
		if !want[s] {
			t.Errorf("%s: extra %s %s", name, what, s)
		}
	}
}

// sameRef matches a same-page fragment href in any of the web's markup
// styles: the ground truth counts it as a link to the page itself, which
// parsers leave out.
var sameRef = regexp.MustCompile(`(?i)href\s*=\s*["']?#`)

// webSamples fetches the simulated web's pages and sitemaps.
func webSamples(t *testing.T, formats Format) []sample {
	if formats&(HTML|Sitemap) == 0 {
		return nil
	}
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 3, MeanPages: 8, Mirrors: -1, NearDuplicates: -1,
		ChangePeriods: []time.Duration{0}})
	t.Cleanup(w.Close)
	f := fetch.NewHTTP(fetchertest.WebOptions(w))
	t.Cleanup(func() { f.Close() })
	get := func(raw string) *fetch.Response {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
		if err != nil || resp.Status != http.StatusOK {
			t.Fatalf("parsertest: %s: %v, %v", raw, resp, err)
		}
		return resp
	}
	var out []sample
	if formats&HTML != 0 {
		hosts := append(w.OrdinaryHosts()[:2], w.Host(fetchtest.Latin1), w.Host(fetchtest.Windows1252))
		for _, host := range hosts {
			for _, page := range w.PagesOf(host) {
				resp := get(page)
				if resp.ContentType != "text/html" {
					continue
				}
				title, links := w.Title(page), w.Links(page)
				selfRef := sameRef.Match(resp.Body)
				out = append(out, sample{name: page, format: HTML, resp: resp, check: func(t *testing.T, d *fetch.Document) {
					if d.Title != title {
						t.Errorf("%s: Title %q, want %q", page, d.Title, title)
					}
					want := map[string]bool{}
					for _, l := range links {
						want[l] = true
					}
					got := linkSet(t, page, d.Links)
					if selfRef {
						delete(want, page)
						delete(got, page)
					}
					compareSets(t, page, "link", got, want)
					if d.Text == "" {
						t.Errorf("%s: no text", page)
					}
				}})
			}
		}
	}
	if formats&Sitemap != 0 {
		host := w.OrdinaryHosts()[0]
		pages := map[string]bool{}
		for _, p := range w.PagesOf(host) {
			pages[p] = true
		}
		out = append(out,
			sample{name: "sitemap.xml", format: Sitemap, resp: get(w.URL(host, "/sitemap.xml")), check: func(t *testing.T, d *fetch.Document) {
				got := map[string]bool{}
				for _, l := range d.Links {
					got[l.URL.String()] = true
					if l.Tag != "loc" || l.Rel != "" {
						t.Errorf("sitemap.xml: link %s with Tag %q, Rel %q; want loc and none", l.URL, l.Tag, l.Rel)
					}
				}
				compareSets(t, "sitemap.xml", "entry", got, pages)
			}},
			sample{name: "sitemap_index.xml", format: Sitemap, resp: get(w.URL(host, "/sitemap_index.xml")), check: func(t *testing.T, d *fetch.Document) {
				if len(d.Links) != 2 {
					t.Errorf("sitemap_index.xml: %d entries, want 2", len(d.Links))
				}
				for _, l := range d.Links {
					if l.Tag != "loc" || !l.HasRel("sitemap") {
						t.Errorf("sitemap_index.xml: entry %s with Tag %q, Rel %q; want loc and sitemap", l.URL, l.Tag, l.Rel)
					}
				}
			}},
			sample{name: "pages-2.xml.gz", format: Sitemap, resp: get(w.URL(host, "/sitemaps/pages-2.xml.gz")), check: func(t *testing.T, d *fetch.Document) {
				if len(d.Links) == 0 {
					t.Error("pages-2.xml.gz: no entries")
				}
				for _, l := range d.Links {
					if !pages[l.URL.String()] {
						t.Errorf("pages-2.xml.gz: %s is not a page of %s", l.URL, host)
					}
				}
			}},
		)
	}
	return out
}

func testDocuments(t *testing.T, p fetch.Parser, _ Harness, samples []sample) {
	for _, s := range samples {
		d, err := parse(t, p, s.name, s.resp)
		if err != nil {
			t.Errorf("%s: %v", s.name, err)
			continue
		}
		checkDocument(t, s.name, s.resp, d)
		if s.format == HTML && (d.Title != strings.Join(strings.Fields(d.Title), " ") || strings.Contains(d.Text, "  ")) {
			t.Errorf("%s: whitespace not collapsed: title %q, text %.60q", s.name, d.Title, d.Text)
		}
		if s.check != nil {
			s.check(t, d)
		}
	}
}

// truncatedCopy returns a copy of resp marked Truncated.
func truncatedCopy(resp *fetch.Response) *fetch.Response {
	c := *resp
	c.Truncated = true
	return &c
}

func testTruncated(t *testing.T, p fetch.Parser, _ Harness, samples []sample) {
	done := map[Format]bool{}
	for _, s := range samples {
		if done[s.format] {
			continue
		}
		done[s.format] = true
		resp := truncatedCopy(s.resp)
		if d, err := parse(t, p, s.name, resp); err == nil && !d.Truncated {
			t.Errorf("%s: the response is truncated, the Document is not", s.name)
		}
	}
}

// Garbage returns the suite's malformed bodies for the formats in f:
// empty, random and NUL bytes, invalid UTF-8, a gzip header cut short,
// runs of "<" and "&#x", and per format deep nesting, huge attributes and
// URLs, broken hosts, bad schemes in base URLs, entity expansion. No
// parser may panic on them; they also make good fuzz seeds. Each call
// returns new slices, the same bytes every time.
func Garbage(f Format) [][]byte {
	var out [][]byte
	for _, one := range []Format{HTML, Sitemap, Feed} {
		if f&one != 0 {
			out = append(out, garbage(one)...)
		}
	}
	return out
}

// garbage returns the malformed bodies of one format.
func garbage(f Format) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	bodies := [][]byte{
		nil,
		{},
		random,
		bytes.Repeat([]byte{0}, 100),
		[]byte("\xff\xfe\xfd invalid \xc3\x28 utf-8 \xed\xa0\x80"),
		{0x1f, 0x8b, 0x08, 0x00, 0x00}, // a gzip header cut short
		bytes.Repeat([]byte("<"), 5000),
		[]byte(strings.Repeat("&#x", 1000)),
	}
	switch f {
	case HTML:
		bodies = append(bodies,
			[]byte(strings.Repeat("<div>", 20000)),
			[]byte(`<a href="`+strings.Repeat("x", 100000)+`">long</a>`),
			[]byte(`<a href="http://[::1">bad host</a><a href="http://a b/">space</a><a href="%zz">escape</a><a href="http://a.test:99999/">port</a>`),
			[]byte(`<base href="javascript:x"><a href="y">base with a bad scheme</a>`),
			[]byte(`<html><head><title>cut`),
			[]byte(`<meta http-equiv="refresh" content="0; url=">`+`<meta http-equiv=refresh content="x;url='`),
			[]byte("<script>"+strings.Repeat("</scrip", 2000)),
		)
	case Sitemap:
		bodies = append(bodies,
			[]byte(`<?xml version="1.0"?><urlset><url><loc>`+strings.Repeat("a", 100000)),
			[]byte(`<urlset><url><loc>javascript:x</loc></url><url><loc>/relative</loc></url><url><loc>http://[::1</loc></url></urlset>`),
			[]byte(`<?xml version="1.0"?>`+strings.Repeat("<urlset>", 10000)),
			[]byte("http://a.test/\n\x00\nnot a url\nhttp://[::1\n"),
		)
	case Feed:
		bodies = append(bodies,
			[]byte(`<rss><channel>`+strings.Repeat("<item>", 10000)),
			[]byte(`<rss><channel><item><link>javascript:x</link><enclosure url="data:x"/></item><item><link>http://[::1</link></item>`),
			[]byte(`<feed xmlns="http://www.w3.org/2005/Atom" xml:base="javascript:x"><entry><link href="y"/></entry></feed>`),
			[]byte(`<!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><rss><channel><title>&b;&b;&b;</title></channel></rss>`),
		)
	}
	return bodies
}

// contentTypes are the types the suite labels a format's documents with.
func contentTypes(f Format) []string {
	switch f {
	case HTML:
		return []string{"text/html", "application/xhtml+xml"}
	case Sitemap:
		return []string{"application/xml", "application/gzip"}
	case Feed:
		return []string{"application/rss+xml", "application/atom+xml"}
	}
	return nil
}

// response builds a response as the fetcher would deliver it.
func response(rawURL, contentType string, body []byte) *fetch.Response {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	return &fetch.Response{URL: u, Status: http.StatusOK, Header: h, Body: body, ContentType: fetch.MediaType(contentType)}
}

func testGarbage(t *testing.T, p fetch.Parser, h Harness, _ []sample) {
	for _, f := range []Format{HTML, Sitemap, Feed} {
		if h.Formats&f == 0 {
			continue
		}
		for _, ct := range contentTypes(f) {
			for i, body := range garbage(f) {
				name := fmt.Sprintf("%s garbage %d", ct, i)
				resp := response("http://garbage.test/dir/sitemap-or-page", ct, body)
				d, err := parse(t, p, name, resp)
				if err == nil {
					checkDocument(t, name, resp, d)
				}
			}
		}
	}
}

// testOtherXML: XML that is neither a sitemap nor a feed, labeled as XML,
// is refused by sitemap and feed parsers with a *fetch.Error.
func testOtherXML(t *testing.T, p fetch.Parser, h Harness, _ []sample) {
	if h.Formats&(Sitemap|Feed) == 0 {
		t.Skip("the parser reads no XML format")
	}
	for _, body := range []string{
		`<?xml version="1.0"?><html><body><a href="http://a.test/">x</a></body></html>`,
		`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"></svg>`,
	} {
		ct := "application/rss+xml"
		if h.Formats&Sitemap != 0 {
			ct = "application/xml"
		}
		resp := response("http://xml.test/doc.xml", ct, []byte(body))
		if d, err := parse(t, p, body, resp); err == nil {
			t.Errorf("%.40s as %s: a Document with %d links, want a *fetch.Error", body, ct, len(d.Links))
		}
	}
}

// testNoURL: a response without a URL makes no parser panic; an error is
// a *fetch.Error.
func testNoURL(t *testing.T, p fetch.Parser, _ Harness, samples []sample) {
	for _, s := range samples[:min(len(samples), 5)] {
		c := *s.resp
		c.URL = nil
		parse(t, p, s.name+" without URL", &c)
	}
}

func testUnsupported(t *testing.T, p fetch.Parser, h Harness, _ []sample) {
	if !h.Dispatch {
		t.Skip("the parser does not pick by content type")
	}
	for _, ct := range []string{"image/png", "application/pdf", "application/json", "application/octet-stream", "text/plain", "text/csv", "video/mp4"} {
		resp := response("http://types.test/file", ct, []byte("<html><a href='http://a.test/'>x</a></html>"))
		d, err := parse(t, p, ct, resp)
		var fe *fetch.Error
		if !errors.Is(err, fetch.ErrUnsupportedType) || !errors.As(err, &fe) || d != nil {
			t.Errorf("%s: %v, %v; want a *fetch.Error wrapping ErrUnsupportedType", ct, d, err)
		}
	}
}

func testConcurrent(t *testing.T, p fetch.Parser, _ Harness, samples []sample) {
	want := make([]*fetch.Document, len(samples))
	for i, s := range samples {
		want[i], _ = parse(t, p, s.name, s.resp)
	}
	const workers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := range workers {
		wg.Go(func() {
			for i := range samples {
				k := (i + w*7) % len(samples)
				d, err := p.Parse(samples[k].resp)
				if (err == nil) != (want[k] != nil) || !reflect.DeepEqual(d, want[k]) {
					mu.Lock()
					failures = append(failures, samples[k].name)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d concurrent parses differ from the sequential ones, e.g. %s", len(failures), failures[0])
	}
}
