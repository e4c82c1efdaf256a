package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func feedFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "feeds", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestFeedParseBytes(t *testing.T) {
	base, _ := url.Parse("http://feed.example/dir/feed.xml")
	type entry struct {
		url, title, summary string
		published, updated  string
		enclosures          int
	}
	tests := []struct {
		file      string
		format    string
		title     string
		updated   string
		links     []string // feed links as "rel url"
		entries   []entry
		malformed bool
	}{
		{
			file: "rss2.xml", format: "rss", title: "River News — Daily", updated: "2026-11-22T09:30:00Z",
			links: []string{"alternate http://news.example/", "next http://feed.example/feed.xml?page=2"},
			entries: []entry{
				{url: "http://news.example/2026/11/flood.html", title: "Flood on the river", summary: "The river rose & the town flooded.", published: "2026-11-22T08:00:00-05:00"},
				{url: "http://feed.example/2026/11/relative.html", title: "Relative link", published: "2026-11-21T17:45:00-05:00", enclosures: 1},
				{url: "http://news.example/2026/11/guid.html", title: "Permalink guid only", summary: "Full text", published: "2026-11-20T12:00:00Z"},
				{title: "No link at all", summary: "kept for its text"},
				{title: "Script link"},
			},
		},
		{
			file: "atom.xml", format: "atom", title: "Mountain Blog", updated: "2026-11-22T10:00:00+01:00",
			links: []string{"alternate http://blog.example/", "prev-archive http://blog.example/base/archive/2026-10.xml"},
			entries: []entry{
				{url: "http://blog.example/base/posts/climb.html", title: "Climbing high", summary: "Up the north face.", published: "2026-11-21T08:00:00Z", updated: "2026-11-21T09:30:00.5Z", enclosures: 1},
				{url: "http://other.example/dir/page.html", title: "Default rel", summary: "Snow on the peak.", updated: "2026-11-20T00:00:00Z"},
			},
		},
		{
			file: "rss1.xml", format: "rdf", title: "RDF Site", links: []string{"alternate http://rdf.example/"},
			entries: []entry{{url: "http://rdf.example/a", title: "First RDF item", published: "2026-11-19T00:00:00Z"}},
		},
		{
			file: "latin1.xml", format: "rss", title: "Café news",
			entries: []entry{{url: "http://cafe.example/creme", title: "Crème brûlée", published: "2026-11-02T10:00:00+01:00"}},
		},
		{
			file: "unclosed.xml", format: "rss", title: "Broken feed", malformed: true,
			entries: []entry{
				{url: "http://broken.example/1", title: "One"},
				{url: "http://broken.example/2", title: "Two"},
				{url: "http://broken.example/3", title: "Three bold"},
				{url: "http://broken.example/4", title: "Four"},
			},
		},
		{
			file: "baddates.xml", format: "rss", title: "Dates",
			entries: []entry{
				{url: "http://d.example/a", title: "a"},
				{url: "http://d.example/b", title: "b"},
				{url: "http://d.example/c", title: "c", published: "2026-11-22T08:00:00-08:00"},
				{url: "http://d.example/d", title: "d", published: "2026-11-22T08:00:00Z"},
				{url: "http://d.example/e", title: "e"},
				{url: "http://d.example/f", title: "f", published: "2026-11-22T08:00:00+02:00"},
			},
		},
		{
			file: "entities.xml", format: "rss", title: "Fish & Chips\u00a0© &bogus; AT&T",
			entries: []entry{
				{url: "http://e.example/?a=1&b=2", title: "Tom &amp; Jerry — ☃ &#99999999;"},
				{url: "http://e.example/ctl", title: "Control char"},
			},
		},
		{
			file: "invalidutf8.xml", format: "rss", title: "Bad \ufffd bytes",
			entries: []entry{{url: "http://u.example/1", title: "ok \ufffd"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			fd, err := (&Feed{}).ParseBytes(feedFile(t, tt.file), base)
			if err != nil {
				t.Fatal(err)
			}
			if fd.Format != tt.format || fd.Title != strings.Join(strings.Fields(tt.title), " ") || fd.Malformed != tt.malformed || fd.Truncated {
				t.Errorf("format %q title %q malformed %v truncated %v", fd.Format, fd.Title, fd.Malformed, fd.Truncated)
			}
			if tt.updated != "" && !fd.Updated.Equal(date(tt.updated)) || tt.updated == "" && !fd.Updated.IsZero() {
				t.Errorf("updated %v, want %q", fd.Updated, tt.updated)
			}
			var links []string
			for _, l := range fd.Links {
				links = append(links, l.Rel+" "+l.URL.String())
			}
			if fmt.Sprint(links) != fmt.Sprint(tt.links) {
				t.Errorf("links %v, want %v", links, tt.links)
			}
			if len(fd.Entries) != len(tt.entries) {
				t.Fatalf("%d entries, want %d", len(fd.Entries), len(tt.entries))
			}
			for i, w := range tt.entries {
				e := fd.Entries[i]
				u := ""
				if e.URL != nil {
					u = e.URL.String()
				}
				if u != w.url || e.Title != w.title || e.Summary != w.summary || len(e.Enclosures) != w.enclosures {
					t.Errorf("entry %d: %q %q %q %d enclosures, want %+v", i, u, e.Title, e.Summary, len(e.Enclosures), w)
				}
				for _, d := range []struct {
					got  time.Time
					want string
				}{{e.Published, w.published}, {e.Updated, w.updated}} {
					if d.want == "" && !d.got.IsZero() || d.want != "" && !d.got.Equal(date(d.want)) {
						t.Errorf("entry %d: date %v, want %q", i, d.got, d.want)
					}
				}
			}
		})
	}
}

func TestFeedNotFeed(t *testing.T) {
	tests := []struct {
		name string
		body string
		want error
	}{
		{"html root", string(feedFile(t, "notfeed.xml")), ErrNotFeed},
		{"urlset", `<urlset><url><loc>http://a/</loc></url></urlset>`, ErrNotFeed},
		{"empty", ``, ErrNotFeed},
		{"text", `just words`, ErrNotFeed},
	}
	for _, tt := range tests {
		_, err := (&Feed{}).ParseBytes([]byte(tt.body), nil)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// Broken before the root element: the decoder's error.
	if _, err := (&Feed{}).ParseBytes([]byte(`<?xml version="1.0"?><!-- never closed`), nil); err == nil || errors.Is(err, ErrNotFeed) {
		t.Errorf("broken prolog: %v", err)
	}
}

// TestFeedLimits: huge input is capped, deep nesting stops, entries are
// capped; each says so.
func TestFeedLimits(t *testing.T) {
	var huge bytes.Buffer
	huge.WriteString(`<rss><channel><title>big</title>`)
	for i := 0; huge.Len() < 3<<20; i++ {
		fmt.Fprintf(&huge, "<item><title>t%d</title><link>http://h.example/%d</link><description>%s</description></item>\n", i, i, strings.Repeat("word ", 50))
	}
	huge.WriteString(`</channel></rss>`)
	tests := []struct {
		name                 string
		feed                 Feed
		body                 []byte
		maxEntries           int
		truncated, malformed bool
	}{
		{"size cap", Feed{MaxSize: 1 << 20}, huge.Bytes(), 5000, true, true},
		{"entry cap", Feed{MaxEntries: 10}, huge.Bytes(), 10, true, false},
		{"nesting bomb", Feed{}, []byte("<rss><channel><item><title>x</title><link>http://n.example/</link>" + strings.Repeat("<a>", 1<<20)), 1, false, true},
		{"text cap", Feed{MaxText: 100}, []byte("<rss><channel><item><title>" + strings.Repeat("é", 200) + "</title></item></channel></rss>"), 1, false, false},
	}
	for _, tt := range tests {
		start := time.Now()
		fd, err := tt.feed.ParseBytes(tt.body, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(fd.Entries) == 0 || len(fd.Entries) > tt.maxEntries || fd.Truncated != tt.truncated || fd.Malformed != tt.malformed {
			t.Errorf("%s: %d entries truncated %v malformed %v", tt.name, len(fd.Entries), fd.Truncated, fd.Malformed)
		}
		for _, e := range fd.Entries {
			if len(e.Title) > 100 && tt.feed.MaxText == 100 || !utf8Valid(e.Title) {
				t.Errorf("%s: title of %d bytes", tt.name, len(e.Title))
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s took %v", tt.name, d)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

func TestFeedDates(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Sun, 22 Nov 2026 08:00:00 GMT", "2026-11-22T08:00:00Z"},
		{"Sun, 22 Nov 2026 08:00:00 +0000", "2026-11-22T08:00:00Z"},
		{"Sun, 2 Nov 2026 08:00:00 EDT", "2026-11-02T08:00:00-04:00"},
		{"  Sun,  22 Nov 2026\n08:00:00 UT ", "2026-11-22T08:00:00Z"},
		{"22 Nov 2026 08:00 +0100", "2026-11-22T08:00:00+01:00"},
		{"Sun, 22 Nov 26 08:00:00 +0000", "2026-11-22T08:00:00Z"},
		{"2026-11-22T08:00:00Z", "2026-11-22T08:00:00Z"},
		{"2026-11-22T08:00:00.123+05:30", "2026-11-22T08:00:00.123+05:30"},
		{"2026-11-22T08:00Z", "2026-11-22T08:00:00Z"},
		{"2026-11-22", "2026-11-22T00:00:00Z"},
		{"Sun, 22 Nov 2026", "2026-11-22T00:00:00Z"},
		{"", ""},
		{"tomorrow", ""},
		{"2026-13-45", ""},
		{"1600-01-01", ""},
		{strings.Repeat("9", 1000), ""},
	}
	for _, tt := range tests {
		got := parseFeedDate(tt.in)
		if tt.want == "" && !got.IsZero() || tt.want != "" && !got.Equal(date(tt.want)) {
			t.Errorf("parseFeedDate(%q) = %v, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFeedParseDocument(t *testing.T) {
	u, _ := url.Parse("http://feed.example/feed.xml")
	resp := &Response{URL: u, Status: 200, ContentType: "application/rss+xml", Body: feedFile(t, "rss2.xml")}
	doc, err := (&Feed{}).Parse(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range doc.Links {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", l.Tag, l.Rel, l.Text, l.URL))
	}
	want := []string{
		"link|alternate||http://news.example/",
		"link|next||http://feed.example/feed.xml?page=2",
		"item|alternate|Flood on the river|http://news.example/2026/11/flood.html",
		"item|alternate|Relative link|http://feed.example/2026/11/relative.html",
		"item|enclosure|Relative link|http://news.example/audio/river.mp3",
		"item|alternate|Permalink guid only|http://news.example/2026/11/guid.html",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("links\n got %q\nwant %q", got, want)
	}
	if doc.Title != "River News — Daily" || !strings.Contains(doc.Text, "Flood on the river The river rose & the town flooded.") || strings.Contains(doc.Text, "x()") {
		t.Errorf("title %q text %q", doc.Title, doc.Text)
	}
	resp.Body = []byte("<html></html>")
	var fe *Error
	if _, err := (&Feed{}).Parse(resp); !errors.As(err, &fe) || !errors.Is(err, ErrNotFeed) || fe.Kind != KindProtocol {
		t.Errorf("not a feed: %v", err)
	}
}

// FuzzFeed: no input panics, hangs or yields links that are not absolute
// http(s) URLs or text that is not valid UTF-8.
func FuzzFeed(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "feeds", "*.xml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	base, _ := url.Parse("http://fuzz.example/feed")
	f.Fuzz(func(t *testing.T, body []byte) {
		p := &Feed{MaxSize: 1 << 16, MaxEntries: 100, MaxText: 1 << 12}
		u := *base
		doc, err := p.Parse(&Response{URL: &u, Body: body})
		if err != nil {
			if !errors.Is(err, ErrNotFeed) && !strings.Contains(err.Error(), "feed") {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(doc.Links) > 100 || len(doc.Text) > 1<<12 || !utf8Valid(doc.Text) || !utf8Valid(doc.Title) {
			t.Fatalf("%d links, %d bytes of text, valid %v", len(doc.Links), len(doc.Text), utf8Valid(doc.Text))
		}
		for _, l := range doc.Links {
			if l.URL == nil || !l.URL.IsAbs() || (l.URL.Scheme != "http" && l.URL.Scheme != "https") {
				t.Fatalf("link %v", l.URL)
			}
		}
	})
}

func BenchmarkFeed(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`<?xml version="1.0"?><rss version="2.0"><channel><title>bench</title>`)
	for i := range 200 {
		fmt.Fprintf(&buf, "<item><title>Entry %d about rivers</title><link>http://b.example/%d</link><pubDate>Sun, 22 Nov 2026 08:00:00 GMT</pubDate><description><![CDATA[<p>Some <b>summary</b> text of entry %d.</p>]]></description></item>\n", i, i, i)
	}
	buf.WriteString(`</channel></rss>`)
	u, _ := url.Parse("http://b.example/feed")
	resp := &Response{URL: u, Body: buf.Bytes()}
	var p Feed
	b.ReportAllocs()
	b.SetBytes(int64(buf.Len()))
	start := time.Now()
	entries := 0
	for b.Loop() {
		doc, err := p.Parse(resp)
		if err != nil {
			b.Fatal(err)
		}
		entries += len(doc.Links)
	}
	b.ReportMetric(float64(entries)/time.Since(start).Seconds(), "entries/s")
}
