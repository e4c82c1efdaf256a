package crawlkit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/warc"
)

// TestWARCSinkArchivesEveryExchange crawls with a WARC sink and reads the
// archive back: every page is there with its metadata record, and so are
// the exchanges that did not become pages — robots.txt, redirects, error
// statuses — so that a replay sees what the crawl saw.
func TestWARCSinkArchivesEveryExchange(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 9, Hosts: 4, MeanPages: 5, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	dir := t.TempDir()
	ws, err := NewWARCSink(&warc.WriterOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var pages fetchedPages
	var mu sync.Mutex
	bodies := map[string][]byte{} // page URL → body as the crawler kept it
	keep := SinkFunc(func(_ context.Context, p *Page) error {
		mu.Lock()
		bodies[p.URL] = p.Response.Body
		mu.Unlock()
		return nil
	})
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Sinks = []Sink{ws, &pages, keep}
		cfg.MaxPagesPerHost = 20
		cfg.MaxRetries = -1
	})
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	statuses := map[string]int{} // target URI → status of its response record
	metadata, gzipped := 0, 0
	for _, rec := range readWARC(t, ws.Files()) {
		switch rec.Type() {
		case warc.TypeResponse:
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), nil)
			if err != nil {
				t.Fatalf("response record of %s: %v", rec.TargetURI(), err)
			}
			payload, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			statuses[rec.TargetURI()] = resp.StatusCode
			if got, want := rec.Header.Get(warc.FieldPayloadDigest), warc.Digest(warc.HTTPPayload(rec.Block)); got != want {
				t.Errorf("%s: payload digest %s, want %s", rec.TargetURI(), got, want)
			}
			body, ok := bodies[rec.TargetURI()]
			if !ok {
				break
			}
			// The record holds what the server sent: gzip, in the
			// page's own charset; decoded, it is the crawler's body.
			if resp.Header.Get("Content-Encoding") == "gzip" {
				gzipped++
				zr, err := gzip.NewReader(bytes.NewReader(payload))
				if err != nil {
					t.Fatalf("%s: %v", rec.TargetURI(), err)
				}
				if payload, err = io.ReadAll(zr); err != nil {
					t.Fatalf("%s: %v", rec.TargetURI(), err)
				}
			}
			if utf8, _ := fetch.ToUTF8(payload, resp.Header.Get("Content-Type")); !bytes.Equal(utf8, body) {
				t.Errorf("%s: archived body (%d bytes) decodes to other bytes than the crawled page (%d)", rec.TargetURI(), len(utf8), len(body))
			}
		case warc.TypeMetadata:
			metadata++
		}
	}
	for _, u := range pages.urls {
		if statuses[u] != 200 {
			t.Errorf("page %s archived with status %d", u, statuses[u])
		}
	}
	if gzipped == 0 {
		t.Error("no page archived gzip-encoded as the server sent it")
	}
	if metadata != len(pages.urls) {
		t.Errorf("%d metadata records for %d pages", metadata, len(pages.urls))
	}
	var robots, redirects, errorsArchived int
	for u, st := range statuses {
		switch {
		case strings.HasSuffix(u, "/robots.txt"):
			robots++
		case st >= 300 && st < 400:
			redirects++
		case st >= 400:
			errorsArchived++
		}
	}
	if robots == 0 || uint64(redirects) < s.Outcomes[Redirected] || errorsArchived == 0 {
		t.Errorf("archived %d robots.txt, %d redirects (crawl had %d), %d error answers", robots, redirects, s.Outcomes[Redirected], errorsArchived)
	}
}

// TestWARCSinkTruncated: a body cut at the fetcher's size limit is
// archived as far as it was read, as the server sent it (gzip and all,
// with the server's Content-Length), in a response record marked
// WARC-Truncated: length; replaying the archive gives the same truncated
// response the crawler had.
func TestWARCSinkTruncated(t *testing.T) {
	page := bytes.Repeat([]byte("<p>A long page, cut by the fetcher's size limit.</p>\n"), 4000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(page)
	zw.Close()
	var zl bytes.Buffer // Content-Encoding deflate is the zlib format (RFC 9110 §8.4.1.2)
	zlw := zlib.NewWriter(&zl)
	zlw.Write(page)
	zlw.Close()
	noise := make([]byte, 64<<10) // incompressible: the wire is cut too
	rand.NewChaCha8([32]byte{2}).Read(noise)
	var gzNoise bytes.Buffer
	zw = gzip.NewWriter(&gzNoise)
	zw.Write(noise)
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(gz.Len()))
			w.Write(gz.Bytes())
		case "/deflate":
			w.Header().Set("Content-Encoding", "deflate")
			w.Header().Set("Content-Length", strconv.Itoa(zl.Len()))
			w.Write(zl.Bytes())
		case "/noise":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(gzNoise.Len()))
			w.Write(gzNoise.Bytes())
		case "/chunked":
			w.Write(page) // no Content-Length: chunked
		case "/short":
			io.WriteString(w, "<p>whole</p>")
		}
	}))
	defer srv.Close()
	const limit = 16 << 10
	f := fetch.NewHTTP(&fetch.Options{KeepWire: true, MaxBodySize: limit, AllowPrivate: true})
	ws, err := NewWARCSink(&warc.WriterOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// path → whether the stored body is cut: the compressible gzip body
	// is cut once decoded, but all its wire bytes were read.
	cut := map[string]bool{"/gzip": false, "/deflate": false, "/noise": true, "/chunked": true, "/short": false}
	fetched := map[string]*fetch.Response{}
	for _, path := range []string{"/gzip", "/deflate", "/noise", "/chunked", "/short"} {
		u, _ := url.Parse(srv.URL + path)
		resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Truncated != (path != "/short") || resp.Wire == nil || resp.Header.Get("Content-Length") == "" && path != "/chunked" {
			t.Fatalf("%s: truncated %v, %d wire bytes: the test needs a cut body with its wire bytes", path, resp.Truncated, len(resp.Wire))
		}
		fetched[u.String()] = resp
		if err := ws.Write(context.Background(), &Page{URL: u.String(), Fetched: time.Now(), Response: resp}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}

	seen := 0
	for _, rec := range readWARC(t, ws.Files()) {
		if rec.Type() != warc.TypeResponse {
			continue
		}
		seen++
		resp := fetched[rec.TargetURI()]
		u, _ := url.Parse(rec.TargetURI())
		want := ""
		if cut[u.Path] {
			want = warc.TruncatedLength
		}
		if got := rec.Header.Get(warc.FieldTruncated); got != want {
			t.Errorf("%s: WARC-Truncated %q, want %q", rec.TargetURI(), got, want)
		}
		if payload := warc.HTTPPayload(rec.Block); !bytes.Equal(payload, resp.Wire) {
			t.Errorf("%s: payload of %d bytes, want the %d wire bytes", rec.TargetURI(), len(payload), len(resp.Wire))
		}
		hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), nil)
		if err != nil {
			t.Fatalf("%s: %v", rec.TargetURI(), err)
		}
		hr.Body.Close()
		switch u.Path {
		case "/gzip", "/deflate", "/noise", "/short":
			// Whole or not, the stored message announces what the
			// server sent, and the encoding it sent it in.
			sent, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
			if hr.ContentLength != sent || hr.Header.Get("Content-Encoding") != resp.Header.Get("Content-Encoding") {
				t.Errorf("%s: Content-Length %d, Content-Encoding %q: want the server's", u.Path, hr.ContentLength, hr.Header.Get("Content-Encoding"))
			}
		case "/chunked":
			if hr.ContentLength != -1 || len(hr.TransferEncoding) != 0 {
				t.Errorf("chunked: Content-Length %d, Transfer-Encoding %v: want neither", hr.ContentLength, hr.TransferEncoding)
			}
		}
	}
	if seen != len(fetched) {
		t.Fatalf("%d response records, want %d", seen, len(fetched))
	}

	r, err := warc.OpenReplay(ws.Files(), &warc.ReplayOptions{MaxBodySize: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for raw, resp := range fetched {
		u, _ := url.Parse(raw)
		got, err := r.Fetch(context.Background(), &fetch.Request{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		// The replay decodes what the crawler kept exactly as the crawler
		// did, a compressed stream cut short included.
		if got.Truncated != resp.Truncated || !bytes.Equal(got.Body, resp.Body) {
			t.Errorf("%s: replayed truncated %v, %d bytes; crawled truncated %v, %d bytes", raw, got.Truncated, len(got.Body), resp.Truncated, len(resp.Body))
		}
	}
}

// readWARC reads every record of files, in order.
func readWARC(t *testing.T, files []string) []*warc.Record {
	t.Helper()
	var recs []*warc.Record
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := warc.NewReader(fh, nil)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range rd.All() {
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			recs = append(recs, rec)
		}
		fh.Close()
	}
	return recs
}

// TestWARCSinkRendered archives a page a browser rendered: the response
// record holds what the server sent, and a conversion record after it,
// referring to it, the document the page's text and links came from; a
// page that was not rendered gets none.
func TestWARCSinkRendered(t *testing.T) {
	ws, err := NewWARCSink(&warc.WriterOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	static := []byte("<html><body><div id=app></div><script src=/app.js></script></body></html>")
	dom := []byte("<html><head></head><body><div id=\"app\"><a href=\"/p/1\">one</a></div><script src=\"/app.js\"></script></body></html>")
	rendered := testPage("http://app.sim.test/", 1)
	rendered.Response.Wire = static // the body as the server sent it
	rendered.Response.Body, rendered.Response.Rendered = dom, true
	plain := testPage("http://app.sim.test/about", 0)
	for _, p := range []*Page{rendered, plain} {
		if err := ws.Write(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	byID := map[string]*warc.Record{}
	var conversions []*warc.Record
	for _, rec := range readWARC(t, ws.Files()) {
		byID[rec.ID()] = rec
		if rec.Type() == warc.TypeConversion {
			conversions = append(conversions, rec)
		}
	}
	if len(conversions) != 1 {
		t.Fatalf("%d conversion records, want 1 (the rendered page's)", len(conversions))
	}
	c := conversions[0]
	resp := byID[c.Header.Get(warc.FieldRefersTo)]
	if resp == nil || resp.Type() != warc.TypeResponse || resp.TargetURI() != rendered.URL {
		t.Fatalf("the conversion refers to %q, not the rendered page's response", c.Header.Get(warc.FieldRefersTo))
	}
	if !bytes.Equal(c.Block, dom) || c.TargetURI() != rendered.URL || !strings.HasPrefix(c.Header.Get(warc.FieldContentType), "text/html") {
		t.Errorf("conversion record of %s, %s: %q", c.TargetURI(), c.Header.Get(warc.FieldContentType), c.Block)
	}
	if !bytes.Equal(warc.HTTPPayload(resp.Block), static) {
		t.Errorf("the response record holds %q, not what the server sent", warc.HTTPPayload(resp.Block))
	}
}
