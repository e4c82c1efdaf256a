package crawlkit

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestCancelAndResume stops a crawl in mid-flight by cancelling its
// context and runs a new Crawler on the same CheckpointDir: the second run
// continues where the first stopped, so no page is requested twice but
// those in flight at the stop, and every reachable page is requested.
func TestCancelAndResume(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 10, MeanPages: 10, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	dir := t.TempDir()
	const workers = 8

	ctx, cancel := context.WithCancel(context.Background())
	var pages atomic.Int64
	first := newTestCrawler(t, web, func(cfg *Config) {
		cfg.CheckpointDir = dir
		cfg.CheckpointInterval = 200 * time.Millisecond
		cfg.Workers = workers
		cfg.MaxPagesPerHost = 40
		cfg.OnPage = func(*Page) {
			if pages.Add(1) == 60 {
				cancel()
			}
		}
	})
	s1, err := first.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Pages() >= uint64(len(web.Pages())) {
		t.Fatalf("the first run was not stopped early: %d pages", s1.Pages())
	}
	atStop := len(web.Log())

	second := newTestCrawler(t, web, func(cfg *Config) {
		cfg.CheckpointDir = dir
		cfg.Workers = workers
		cfg.MaxPagesPerHost = 40
	})
	s2, err := second.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first run %d requests, both %d; second run stats: %s", atStop, len(web.Log()), s2.String())
	if s2.Outcomes[Fetched] <= s1.Outcomes[Fetched] {
		t.Errorf("the second run fetched nothing new: %d then %d", s1.Outcomes[Fetched], s2.Outcomes[Fetched])
	}

	type key struct{ host, path string }
	times, retried := map[key]int{}, map[key]bool{}
	for _, r := range web.Log() {
		if r.Path == "/robots.txt" || r.Status == 429 || r.Status == 503 {
			retried[key{r.Host, r.Path}] = true
		}
		times[key{r.Host, r.Path}]++
	}
	twice := 0
	for k, n := range times {
		if n > 1 && !retried[k] {
			twice += n - 1
		}
	}
	if twice > workers {
		t.Errorf("%d pages requested twice, more than the %d in flight", twice, workers)
	}

	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d reachable pages never requested across the stop, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}

	// A third run on the finished directory has nothing to do.
	third := newTestCrawler(t, web, func(cfg *Config) { cfg.CheckpointDir = dir })
	before := len(web.Log())
	if _, err := third.Run(context.Background()); err != nil && err != ErrNoSeeds {
		t.Fatal(err)
	}
	if n := len(web.Log()) - before; n > 0 {
		t.Errorf("a run over a finished crawl made %d requests", n)
	}
}
