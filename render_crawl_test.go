package crawlkit

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/fetch/render"
)

// TestRenderedCrawl crawls a web with a script-built application and shop
// twice. The static crawl never finds the pages only scripts link to; the
// crawl that renders where the adaptive policy says finds every one of
// them, and the browser's own requests keep robots.txt (the tracker the
// application's script asks for is refused) and one request at a time
// per host, as the server's log shows.
func TestRenderedCrawl(t *testing.T) {
	if render.FindBrowser() == "" {
		t.Skip("no Chromium or Chrome found (install Debian's chromium package, or set CRAWLKIT_CHROMIUM): the rendering crawl is not tested")
	}
	if testing.Short() {
		t.Skip("-short: a crawl in a browser")
	}
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 3, MeanPages: 4, MaxPages: 6, ChangePeriods: []time.Duration{0},
		Scripts: true, Mirrors: -1, NearDuplicates: -1, CrawlDelay: 5 * time.Millisecond, RetryAfter: 5 * time.Millisecond})
	defer web.Close()
	only := web.RenderOnly("crawlkit")
	if len(only) == 0 {
		t.Fatal("the web has no page only scripts link to: the test checks nothing")
	}
	crawl := func(rendered bool) (map[string]bool, Stats, *render.Fetcher) {
		var rf *render.Fetcher
		var mu sync.Mutex
		got := map[string]bool{}
		c := newTestCrawler(t, web, func(cfg *Config) {
			cfg.MaxRetries = -1
			cfg.OnPage = func(p *Page) { // from many workers at once
				mu.Lock()
				got[p.URL] = true
				mu.Unlock()
			}
			if rendered {
				cfg.WrapFetcher = func(f fetch.Fetcher) (fetch.Fetcher, error) {
					var err error
					rf, err = render.New(&render.Options{Static: f, Policy: render.Adaptive{}, Tabs: 2, PageTimeout: 10 * time.Second})
					return rf, err
				}
			}
		})
		start := len(web.Log())
		s, err := c.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		log := web.Log()[start:]
		for host, n := range fetchtest.MaxConcurrency(log) {
			if n > 1 {
				t.Errorf("rendered %v: host %s saw %d requests at once", rendered, host, n)
			}
		}
		return got, s, rf
	}
	static, _, _ := crawl(false)
	for _, p := range only {
		if static[p] {
			t.Errorf("the static crawl fetched %s, which only scripts link to", p)
		}
	}
	pages, s, rf := crawl(true)
	var missed []string
	for _, p := range only {
		if !pages[p] {
			missed = append(missed, p)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("the rendering crawl missed %d of %d script-only pages, first %s", len(missed), len(only), missed[0])
	}
	if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
		t.Errorf("%d requests robots.txt forbids, first %s%s", len(v), v[0].Host, v[0].Path)
	}
	rs := rf.Stats()
	t.Logf("static %d pages; rendered %d pages (%d rendered, %d left static by the policy), %d subrequests admitted, %d refused; %d script-only pages",
		len(static), len(pages), rs.Rendered, rs.PolicySkip, s.Subrequests, s.SubrequestsRefused, len(only))
	if s.Subrequests == 0 || s.SubrequestsRefused == 0 {
		t.Errorf("subrequests: %d admitted, %d refused; want some of each (the tracker robots.txt forbids)", s.Subrequests, s.SubrequestsRefused)
	}
	if rs.PolicySkip == 0 {
		t.Error("the adaptive policy rendered every page")
	}
}
