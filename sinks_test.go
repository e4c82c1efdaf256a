package crawlkit

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Sinks = []Sink{ws, &pages}
		cfg.MaxPagesPerHost = 20
		cfg.MaxRetries = -1
	})
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	statuses := map[string]int{} // target URI → status of its response record
	metadata := 0
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
				resp.Body.Close()
				statuses[rec.TargetURI()] = resp.StatusCode
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
