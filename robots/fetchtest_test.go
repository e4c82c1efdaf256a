package robots_test

import (
	"context"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/robots"
)

// TestCacheOnSimulatedWeb runs 1,000 concurrent callers over the 100 hosts of
// a simulated web (every robots.txt variant: prefixes, overrides, wildcards,
// Crawl-delay, 404, 5xx, redirects, per-agent groups). Every answer must agree
// with the web's ground truth, and its request log must show exactly one
// robots.txt fetch per host per expiry.
func TestCacheOnSimulatedWeb(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 100, Mirrors: -1, NearDuplicates: -1, ChangePeriods: []time.Duration{0}})
	defer w.Close()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }

	const agent = "crawlkit"
	c := robots.NewCache(&robots.Options{Fetch: robots.HTTPFetch(w.Client(), agent+"/1.0"), Agent: agent, Now: clock})
	defer c.Close()

	hosts := w.OrdinaryHosts()
	if len(hosts) != 100 {
		t.Fatalf("%d hosts", len(hosts))
	}
	// Pages plus the paths the robots variants single out.
	probes := []string{"/", "/private/a", "/shop/b", "/archive/x", "/archive/2019/y", "/docs/a.pdf", "/a.pdf",
		"/search?q=1&sort=asc", "/search?q=1", "/x/guide/y", "/blog/post", "/robots.txt"}
	var urls []string
	for _, h := range hosts {
		pages := w.PagesOf(h)
		urls = append(urls, pages[:min(len(pages), 8)]...)
		for _, p := range probes {
			urls = append(urls, w.URL(h, p))
		}
	}

	truth := make([]bool, len(urls))
	for i, u := range urls {
		truth[i] = w.Allowed(agent, u)
	}
	run := func() {
		t.Helper()
		var wg sync.WaitGroup
		var wrong, errs atomic.Int32
		for g := range 1000 {
			wg.Go(func() {
				// Every URL is checked, by callers spread over all hosts.
				for i := g; i < len(urls); i += 1000 {
					u, _ := url.Parse(urls[i])
					ok, err := c.Allowed(context.Background(), u)
					if err != nil {
						errs.Add(1)
					} else if ok != truth[i] {
						wrong.Add(1)
						t.Errorf("Allowed(%s) = %v, ground truth %v (variant %s)", urls[i], ok, !ok, w.RobotsVariant(u.Hostname()))
					}
				}
			})
		}
		wg.Wait()
		if errs.Load() > 0 || wrong.Load() > 0 {
			t.Fatalf("%d errors, %d wrong answers", errs.Load(), wrong.Load())
		}
	}
	fetchesPerHost := func() map[string]int {
		n := map[string]int{}
		for _, r := range w.Log() {
			if r.Path == "/robots.txt" {
				n[r.Host]++
			}
		}
		return n
	}

	run()
	got := fetchesPerHost()
	for _, h := range hosts {
		if got[h] != 1 {
			t.Errorf("%s: robots.txt fetched %d times, want 1", h, got[h])
		}
	}
	if len(got) != len(hosts) {
		t.Errorf("robots.txt fetched for %d hosts, want %d", len(got), len(hosts))
	}
	if st := c.Stats(); st.Fetches != int64(len(hosts)) || st.Hits+st.Waits != int64(len(urls)-len(hosts)) {
		t.Errorf("Stats = %+v: want %d fetches and %d other answers (robots.txt URLs need none)", st, len(hosts), len(urls)-len(hosts))
	}
	// Crawl-delay reaches politeness.
	for _, h := range hosts {
		if w.RobotsVariant(h) == "crawl-delay" {
			if d, _ := c.Delay(h + ":" + w.Port()); d != w.CrawlDelay(h) {
				t.Errorf("Delay(%s) = %v, want %v", h, d, w.CrawlDelay(h))
			}
		}
	}

	// After expiry, exactly one more fetch per host.
	w.ResetLog()
	mu.Lock()
	now = now.Add(24 * time.Hour)
	mu.Unlock()
	run()
	got = fetchesPerHost()
	for _, h := range hosts {
		if got[h] != 1 {
			t.Errorf("after expiry %s: robots.txt fetched %d times, want 1", h, got[h])
		}
	}
	if n := fetchtest.MaxConcurrency(w.Log()); len(n) > 0 {
		for h, m := range n {
			if m > 1 {
				t.Errorf("%s: %d concurrent requests", h, m)
			}
		}
	}
}
