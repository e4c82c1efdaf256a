package fetch

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

const urlsetXML = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>http://www.example.com/</loc>
    <lastmod>2005-01-01</lastmod>
    <changefreq>Monthly</changefreq>
    <priority>0.8</priority>
  </url>
  <url><loc> http://www.example.com/catalog?item=12&amp;desc=vacation_hawaii </loc><changefreq>weekly</changefreq>
    <image:image><image:loc>http://img.example.com/a.jpg</image:loc></image:image></url>
  <url><loc>http://www.example.com/catalog?item=73&amp;desc=vacation_new_zealand</loc>
    <lastmod>2004-12-23T18:00:15+00:00</lastmod><priority>1.5</priority></url>
  <url><loc>/relative/page</loc><lastmod>2004-11-23T18:00Z</lastmod></url>
  <url><loc>mailto:x@example.com</loc></url>
  <url><lastmod>2004-11-23</lastmod></url>
</urlset>`

const indexXML = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
   <sitemap><loc>http://www.example.com/sitemap1.xml.gz</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>
   <sitemap><loc>http://www.example.com/sitemap2.xml.gz</loc></sitemap>
</sitemapindex>`

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestSitemap(t *testing.T) {
	base := mustURL(t, "http://www.example.com/sitemap.xml")
	var s Sitemap
	for _, body := range [][]byte{[]byte(urlsetXML), gz(urlsetXML), []byte("\xef\xbb\xbf\n " + urlsetXML)} {
		sd, err := s.ParseBytes(body, base)
		if err != nil {
			t.Fatal(err)
		}
		want := []SitemapEntry{
			{URL: mustURL(t, "http://www.example.com/"), LastMod: time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC), ChangeFreq: "monthly", Priority: 0.8},
			{URL: mustURL(t, "http://www.example.com/catalog?item=12&desc=vacation_hawaii"), ChangeFreq: "weekly", Priority: 0.5},
			{URL: mustURL(t, "http://www.example.com/catalog?item=73&desc=vacation_new_zealand"), LastMod: time.Date(2004, 12, 23, 18, 0, 15, 0, time.UTC), Priority: 0.5},
			{URL: mustURL(t, "http://www.example.com/relative/page"), LastMod: time.Date(2004, 11, 23, 18, 0, 0, 0, time.UTC), Priority: 0.5},
		}
		if sd.Index || sd.Truncated || len(sd.Entries) != len(want) {
			t.Fatalf("index %v truncated %v entries %d", sd.Index, sd.Truncated, len(sd.Entries))
		}
		for i, w := range want {
			g := sd.Entries[i]
			if g.URL.String() != w.URL.String() || !g.LastMod.Equal(w.LastMod) || g.ChangeFreq != w.ChangeFreq || g.Priority != w.Priority {
				t.Errorf("entry %d = %+v, want %+v", i, g, w)
			}
		}
	}
	sd, err := s.ParseBytes(gz(indexXML), base)
	if err != nil || !sd.Index || len(sd.Entries) != 2 || sd.Entries[1].URL.String() != "http://www.example.com/sitemap2.xml.gz" {
		t.Fatalf("index: %+v, %v", sd, err)
	}
}

func TestSitemapText(t *testing.T) {
	var s Sitemap
	sd, err := s.ParseBytes([]byte("http://a.example/1\r\n\n# comment\n  https://a.example/2  \nnot a url\nftp://a.example/3\nhttp://a.example/ü\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range sd.Entries {
		got = append(got, e.URL.String())
	}
	if strings.Join(got, " ") != "http://a.example/1 https://a.example/2 http://a.example/%C3%BC" {
		t.Errorf("text sitemap = %q", got)
	}
}

func TestSitemapLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<urlset>`)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "<url><loc>http://a.example/%d</loc></url>\n", i)
	}
	b.WriteString(`</urlset>`)
	s := Sitemap{MaxEntries: 10}
	sd, err := s.ParseBytes([]byte(b.String()), nil)
	if err != nil || len(sd.Entries) != 10 || !sd.Truncated {
		t.Errorf("MaxEntries: %d entries, truncated %v, %v", len(sd.Entries), sd.Truncated, err)
	}
	// A size cap cuts the XML; the entries before the cut are kept.
	for _, body := range [][]byte{[]byte(b.String()), gz(b.String())} {
		s = Sitemap{MaxSize: 1000}
		sd, err = s.ParseBytes(body, nil)
		if err != nil || len(sd.Entries) == 0 || len(sd.Entries) > 30 || !sd.Truncated {
			t.Errorf("MaxSize: %d entries, truncated %v, %v", len(sd.Entries), sd.Truncated, err)
		}
	}
	// A gzip bomb stops at MaxSize.
	s = Sitemap{MaxSize: 1 << 20}
	bomb := gz("<urlset>" + strings.Repeat(" ", 2<<20))
	sd, err = s.ParseBytes(bomb, nil)
	if err != nil || !sd.Truncated {
		t.Errorf("bomb: %+v, %v", sd, err)
	}
}

func TestSitemapErrors(t *testing.T) {
	var s Sitemap
	for _, body := range []string{
		`<?xml version="1.0"?><rss><channel><item><link>http://a/</link></item></channel></rss>`,
		`<html><body>not a sitemap</body></html>`,
		`<?xml version="1.0"?>`,
	} {
		if _, err := s.ParseBytes([]byte(body), nil); !errors.Is(err, ErrNotSitemap) {
			t.Errorf("%.40q: %v, want ErrNotSitemap", body, err)
		}
	}
	if _, err := s.ParseBytes([]byte{0x1f, 0x8b, 1, 2, 3}, nil); err == nil {
		t.Error("corrupt gzip: no error")
	}
	if sd, err := s.ParseBytes(nil, nil); err != nil || len(sd.Entries) != 0 {
		t.Errorf("empty: %+v, %v", sd, err)
	}
	_, err := s.Parse(&Response{URL: mustURL(t, "http://a/rss.xml"), Body: []byte("<rss/>")})
	wantKind(t, err, KindProtocol, ErrNotSitemap)
}

// TestWebSitemaps fetches and parses the sitemaps of a simulated host: the
// urlset lists exactly the host's pages, the index lists the two others, and
// the gzip file decodes.
func TestWebSitemaps(t *testing.T) {
	w, f := newWeb(t, fetchtest.Config{Seed: 1, Hosts: 2})
	host := w.OrdinaryHosts()[0]
	var p ByType
	parse := func(path string) *Document {
		t.Helper()
		resp, err := get(t, f, w.URL(host, path))
		if err != nil || resp.Status != 200 {
			t.Fatalf("%s: %v, %v", path, resp, err)
		}
		d, err := p.Parse(resp)
		if err != nil {
			t.Fatalf("%s (%s): %v", path, resp.ContentType, err)
		}
		return d
	}
	d := parse("/sitemap.xml")
	got := map[string]bool{}
	for _, l := range d.Links {
		got[l.URL.String()] = true
	}
	for _, page := range w.PagesOf(host) {
		if !got[page] {
			t.Errorf("sitemap misses %s", page)
		}
	}
	if len(got) > len(w.PagesOf(host)) {
		t.Errorf("sitemap has %d entries, host %d pages", len(got), len(w.PagesOf(host)))
	}
	idx := parse("/sitemap_index.xml")
	if len(idx.Links) != 2 || idx.Links[0].Rel != "sitemap" {
		t.Errorf("index = %+v", idx.Links)
	}
	for _, l := range idx.Links {
		if d := parse(l.URL.Path); len(d.Links) == 0 {
			t.Errorf("%s: empty", l.URL)
		}
	}
}

func FuzzSitemap(f *testing.F) {
	f.Add([]byte(urlsetXML))
	f.Add([]byte(indexXML))
	f.Add(gz(urlsetXML))
	f.Add([]byte("http://a.example/\nhttps://b.example/x\n"))
	f.Add([]byte(`<urlset><url><loc>http://a/&#x1;</loc><lastmod>2024-13-45</lastmod><priority>NaN</priority></url>`))
	base := mustURL(f, "http://www.example.com/sitemap.xml")
	f.Fuzz(func(t *testing.T, body []byte) {
		s := Sitemap{MaxEntries: 100, MaxSize: 1 << 16}
		sd, err := s.ParseBytes(body, base)
		if err != nil {
			return
		}
		if len(sd.Entries) > 100 {
			t.Fatalf("%d entries over the cap", len(sd.Entries))
		}
		for _, e := range sd.Entries {
			if !e.URL.IsAbs() || (e.URL.Scheme != "http" && e.URL.Scheme != "https") || e.Priority < 0 || e.Priority > 1 {
				t.Fatalf("bad entry %+v", e)
			}
		}
	})
}

func BenchmarkSitemap(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&sb, "<url><loc>http://www.example.com/section/page-%d.html</loc><lastmod>2024-05-%02dT10:00:00+00:00</lastmod><changefreq>daily</changefreq><priority>0.6</priority></url>\n", i, i%28+1)
	}
	sb.WriteString(`</urlset>`)
	body := []byte(sb.String())
	var s Sitemap
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		sd, err := s.ParseBytes(body, nil)
		if err != nil || len(sd.Entries) != 1000 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
