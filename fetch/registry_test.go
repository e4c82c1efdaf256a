package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
)

func response(t testing.TB, rawURL, contentType string, body []byte) *fetch.Response {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return &fetch.Response{URL: u, Status: 200, ContentType: contentType, Header: http.Header{}, Body: body}
}

func TestRegistryDefaults(t *testing.T) {
	rss, err := os.ReadFile(filepath.Join("testdata", "feeds", "rss2.xml"))
	if err != nil {
		t.Fatal(err)
	}
	atom, err := os.ReadFile(filepath.Join("testdata", "feeds", "atom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	sitemap := []byte(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://s.example/a</loc></url></urlset>`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(sitemap)
	zw.Close()
	html := []byte(`<title>Page</title><a href="/x">x</a>`)
	tests := []struct {
		name, url, ct string
		body          []byte
		firstLink     string // the Tag of the first link names the parser: a, link/item/entry, loc
		unsupported   bool
	}{
		{"html", "http://h.example/", "text/html", html, "a", false},
		{"xhtml", "http://h.example/", "application/xhtml+xml", html, "a", false},
		{"rss by type", "http://h.example/feed", "application/rss+xml", rss, "link", false},
		{"atom by type", "http://h.example/feed", "application/atom+xml", atom, "link", false},
		{"rss as xml", "http://h.example/feed", "application/xml", rss, "link", false},
		{"atom as text/xml", "http://h.example/feed", "text/xml", atom, "link", false},
		{"sitemap as xml", "http://h.example/sitemap.xml", "application/xml", sitemap, "loc", false},
		{"sitemap as text/xml", "http://h.example/sitemap.xml", "text/xml", sitemap, "loc", false},
		{"gzip sitemap", "http://h.example/sitemap.xml.gz", "application/x-gzip", gz.Bytes(), "loc", false},
		{"gzip sitemap as xml", "http://h.example/sitemap.xml.gz", "application/xml", gz.Bytes(), "loc", false},
		{"text sitemap", "http://h.example/sitemap.txt", "text/plain", []byte("http://s.example/a\n"), "loc", false},
		{"header only", "http://h.example/", "", html, "a", false},
		{"other xml", "http://h.example/x.xml", "application/xml", []byte(`<svg/>`), "", true},
		{"plain text", "http://h.example/readme.txt", "text/plain", []byte("hello"), "", true},
		{"pdf", "http://h.example/a.pdf", "application/pdf", []byte("%PDF"), "", true},
	}
	var r fetch.Registry
	for _, tt := range tests {
		resp := response(t, tt.url, tt.ct, tt.body)
		if tt.ct == "" {
			resp.Header.Set("Content-Type", "Text/HTML; charset=utf-8")
		}
		doc, err := r.Parse(resp)
		if tt.unsupported {
			var fe *fetch.Error
			if !errors.Is(err, fetch.ErrUnsupportedType) || !errors.As(err, &fe) {
				t.Errorf("%s: %v, want ErrUnsupportedType", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(doc.Links) == 0 || doc.Links[0].Tag != tt.firstLink {
			t.Errorf("%s: links %v, want the first from a %q tag", tt.name, doc.Links, tt.firstLink)
		}
	}
}

func TestRegistryRegister(t *testing.T) {
	named := func(name string) fetch.Parser {
		return fetch.ParserFunc(func(resp *fetch.Response) (*fetch.Document, error) {
			return &fetch.Document{URL: resp.URL, Title: name}, nil
		})
	}
	var r fetch.Registry
	r.Register("Application/JSON; charset=utf-8", named("json"))
	r.Register("image/*", named("image"))
	r.Register("text/html", named("my html"))
	r.Register("application/rss+xml", nil)
	tests := []struct{ ct, want string }{
		{"application/json", "json"},
		{"image/png", "image"},
		{"text/html", "my html"},
		{"application/rss+xml", ""},
		{"application/atom+xml", "Mountain Blog"},
	}
	atom, _ := os.ReadFile(filepath.Join("testdata", "feeds", "atom.xml"))
	for _, tt := range tests {
		doc, err := r.Parse(response(t, "http://r.example/", tt.ct, atom))
		switch {
		case tt.want == "":
			if !errors.Is(err, fetch.ErrUnsupportedType) {
				t.Errorf("%s: %v, want unsupported", tt.ct, err)
			}
		case err != nil || doc.Title != tt.want:
			t.Errorf("%s: %v %v, want %q", tt.ct, doc, err, tt.want)
		}
	}
	// Register while parsing: the race detector checks the locking.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 50 {
				if i == 0 {
					r.Register(fmt.Sprintf("application/x-%d", j), named("x"))
					continue
				}
				r.Parse(response(t, "http://r.example/", "application/json", nil))
			}
		})
	}
	wg.Wait()
}

// jsonFeed parses JSON Feed (https://jsonfeed.org), a format the Registry
// does not know: each item's url becomes a link whose text is its title.
func jsonFeed(resp *fetch.Response) (*fetch.Document, error) {
	var feed struct {
		Title string `json:"title"`
		Items []struct {
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"items"`
	}
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		return nil, &fetch.Error{Op: "parse", Kind: fetch.KindProtocol, URL: resp.URL.String(), Err: err}
	}
	doc := &fetch.Document{URL: resp.URL, Base: resp.URL, Title: feed.Title}
	for _, it := range feed.Items {
		if u, err := resp.URL.Parse(it.URL); err == nil {
			doc.Links = append(doc.Links, fetch.Link{URL: u, Text: it.Title, Rel: "alternate", Tag: "item"})
		}
	}
	return doc, nil
}

// ExampleRegistry adds a parser for a new format to the registry the
// crawler uses (crawlkit.Config.Parser): RSS and Atom are built in,
// JSON Feed is registered.
func ExampleRegistry() {
	var r fetch.Registry
	r.Register("application/feed+json", fetch.ParserFunc(jsonFeed))

	u, _ := url.Parse("http://news.example/feed.json")
	for _, resp := range []*fetch.Response{
		{URL: u, ContentType: "application/feed+json", Body: []byte(`{"title":"News","items":[{"url":"/a","title":"Alpha"}]}`)},
		{URL: u, ContentType: "application/atom+xml", Body: []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title>
			<entry><title>Beta</title><link href="/b"/><updated>2026-11-22T10:00:00Z</updated></entry></feed>`)},
		{URL: u, ContentType: "application/pdf"},
	} {
		doc, err := r.Parse(resp)
		if err != nil {
			fmt.Println(resp.ContentType, "error:", errors.Is(err, fetch.ErrUnsupportedType))
			continue
		}
		for _, l := range doc.Links {
			fmt.Printf("%s %q: %s %q (%s)\n", resp.ContentType, doc.Title, l.URL, l.Text, l.Tag)
		}
	}
	// Output:
	// application/feed+json "News": http://news.example/a "Alpha" (item)
	// application/atom+xml "Blog": http://news.example/b "Beta" (entry)
	// application/pdf error: true
}

func ExampleFeed_ParseBytes() {
	body := []byte(`<rss version="2.0"><channel><title>River News</title>
		<item><title>Flood</title><link>/flood</link><pubDate>Sun, 22 Nov 2026 08:00:00 EST</pubDate></item>
		<item><title>Drought<link>/drought</link></item>`) // broken off
	base, _ := url.Parse("http://news.example/rss")
	fd, err := (&fetch.Feed{}).ParseBytes(body, base)
	if err != nil {
		panic(err)
	}
	fmt.Println(fd.Format, fd.Title, "malformed:", fd.Malformed)
	for _, e := range fd.Entries {
		fmt.Println(e.URL, e.Title, e.Published.UTC())
	}
	// Output:
	// rss River News malformed: true
	// http://news.example/flood Flood 2026-11-22 13:00:00 +0000 UTC
	// http://news.example/drought Drought 0001-01-01 00:00:00 +0000 UTC
}

// TestRegistryCrawlFollowsFeeds runs the crawler over a small site whose
// articles are linked only from its RSS feed and the Atom feed the RSS feed
// pages to: with the Registry the crawler reaches them, with the HTML and
// sitemap parsers alone (ByType) it does not.
func TestRegistryCrawlFollowsFeeds(t *testing.T) {
	page := func(body string) *fetch.Response {
		return &fetch.Response{Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(body)}
	}
	site := fetch.Static{
		"http://news.test/": page(`<title>News</title><link rel="alternate" type="application/rss+xml" href="/feed.xml">`),
		"http://news.test/feed.xml": {Status: 200, ContentType: "application/rss+xml", Header: http.Header{}, Body: []byte(`<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>News feed</title>
			<atom:link rel="next" href="/feed2.xml"/>
			<item><title>A</title><link>/a</link></item><item><title>B</title><link>/b</link></item></channel></rss>`)},
		"http://news.test/feed2.xml": {Status: 200, ContentType: "text/xml", Header: http.Header{}, Body: []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><title>Older</title>
			<entry><title>C</title><link href="/c"/></entry></feed>`)},
		"http://news.test/a": page(`<title>A</title>article a`),
		"http://news.test/b": page(`<title>B</title>article b`),
		"http://news.test/c": page(`<title>C</title>article c`),
	}
	for _, tt := range []struct {
		name   string
		parser fetch.Parser
		want   string
	}{
		{"registry", &fetch.Registry{}, "[http://news.test/ http://news.test/a http://news.test/b http://news.test/c http://news.test/feed.xml http://news.test/feed2.xml]"},
		{"bytype", &fetch.ByType{}, "[http://news.test/]"},
	} {
		var (
			mu    sync.Mutex
			pages []string
		)
		c, err := crawlkit.New(crawlkit.Config{
			Seeds: []string{"http://news.test/"}, Fetcher: site, Parser: tt.parser, Workers: 2,
			DelayFactor: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			OnPage: func(p *crawlkit.Page) {
				mu.Lock()
				pages = append(pages, p.URL)
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		sort.Strings(pages)
		if got := fmt.Sprint(pages); got != tt.want {
			t.Errorf("%s: crawled %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestContentTypeOf(t *testing.T) {
	html := []byte("<!DOCTYPE html><title>x</title>")
	for _, tt := range []struct {
		ct   string
		body []byte
		want string
	}{
		{"text/html; charset=utf-8", nil, "text/html"},
		{"Text/HTML", nil, "text/html"},
		{"text/html; charset", nil, "text/html"}, // a parameter mime rejects
		{"application/rss+xml;;", nil, "application/rss+xml"},
		{"text html", nil, ""},           // not a media type, nothing to sniff
		{"text html", html, "text/html"}, // sniffed, as browsers do
		{"", html, "text/html"},
		{"", []byte("%PDF-1.4"), "application/pdf"},
		{"", nil, ""},
		{"image/png", html, "image/png"}, // a valid type is taken as given
	} {
		if got := fetch.ContentTypeOf(tt.ct, tt.body); got != tt.want {
			t.Errorf("ContentTypeOf(%q, %q) = %q, want %q", tt.ct, tt.body, got, tt.want)
		}
		if strings.ContainsAny(fetch.MediaType(tt.ct), "; ") {
			t.Errorf("MediaType(%q) = %q", tt.ct, fetch.MediaType(tt.ct))
		}
	}
}
