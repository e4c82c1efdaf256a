package crawlkit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
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
	ws, err := NewWARCSink(warc.WriterOptions{Dir: dir})
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
	for _, f := range ws.Files() {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := warc.NewReader(fh, warc.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range rd.All() {
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
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
		fh.Close()
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
