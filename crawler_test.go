package crawlkit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// webResolver maps every host of the simulated web to 127.0.0.1, so the
// real HTTP fetcher dials the fetchtest server.
func webResolver() dns.Resolver {
	return dns.ResolverFunc(func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fetchedPages collects the URLs handed to the sinks.
type fetchedPages struct {
	mu   sync.Mutex
	urls []string
}

func (f *fetchedPages) Write(_ context.Context, p *Page) error {
	f.mu.Lock()
	f.urls = append(f.urls, p.URL)
	f.mu.Unlock()
	return nil
}
func (f *fetchedPages) Close() error { return nil }

func newTestCrawler(t *testing.T, web *fetchtest.Web, mod func(*Config)) *Crawler {
	t.Helper()
	cfg := Config{
		Seeds:        web.Seeds(),
		Resolver:     webResolver(),
		AllowPrivate: true,
		Workers:      16,
		DelayFactor:  2,
		Logger:       quietLogger(),
		// Each simulated site is a registrable domain of its own, as
		// sites on the web are.
		PrivateSuffixes: []string{web.Domain()},
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkGaps checks the politeness gaps in a request log: after a request
// that took d on the server, the host's next request starts at least
// k × d later (the crawler measures d on its side, which is longer). It
// returns the log by host, each in order.
func checkGaps(t *testing.T, log []fetchtest.Request, k float64) map[string][]fetchtest.Request {
	t.Helper()
	byHost := map[string][]fetchtest.Request{}
	for _, r := range log {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	for host, rs := range byHost {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		for i := 1; i < len(rs); i++ {
			prev := rs[i-1]
			want := time.Duration(k*0.9*float64(prev.End.Sub(prev.Start))) - 500*time.Microsecond
			if gap := rs[i].Start.Sub(prev.End); gap < want {
				t.Errorf("%s: %s started %v after %s ended, want ≥ %v", host, rs[i].Path, gap, prev.Path, want)
			}
		}
	}
	return byHost
}

// TestRobotsRedirectHopsArePolite: the hops of a redirected robots.txt
// (/robots.txt → /robots-moved.txt → /site/robots.txt) are requests to
// the host like any other, each after the politeness gap of the one
// before. Every response takes 10 ms, so a hop made at once breaks the
// gap by far.
func TestRobotsRedirectHopsArePolite(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 12, MeanPages: 4, ChangePeriods: []time.Duration{0},
		Latency: 10 * time.Millisecond, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.MaxPagesPerHost = 3
		cfg.MaxRetries = -1
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	hops := 0
	for _, r := range web.Log() {
		if r.Path == "/robots-moved.txt" {
			hops++
		}
	}
	if hops == 0 {
		t.Fatal("no host of this web redirects its robots.txt: the test checks nothing")
	}
	checkGaps(t, web.Log(), 2)
}

// TestCrawlMatchesGroundTruth is the end-to-end test of the crawl loop on
// the simulated web: every page reachable from the seeds and allowed by
// robots.txt is fetched (as a page or recognised as a duplicate), nothing
// robots.txt forbids is requested, no host sees two requests at once, and
// every URL ends in exactly one outcome. Two hosts answer their first
// robots.txt request 503 (BusyRobots): their pages are found all the same.
func TestCrawlMatchesGroundTruth(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 12, MeanPages: 10, ChangePeriods: []time.Duration{0},
		CrawlDelay: 50 * time.Millisecond, RetryAfter: 50 * time.Millisecond, BusyRobots: 4})
	defer web.Close()
	var pages fetchedPages
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Sinks = []Sink{&pages}
		cfg.MaxPagesPerHost = 60 // bounds the traps
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", s.Summary())

	if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
		t.Errorf("%d requests robots.txt forbade, first %+v", len(v), v[0])
	}
	for host, n := range fetchtest.MaxConcurrency(web.Log()) {
		if n > 1 {
			t.Errorf("host %s saw %d concurrent requests", host, n)
		}
	}

	byHost := checkGaps(t, web.Log(), 2)

	// Spider traps cost at most the host budget.
	for _, trap := range web.Traps() {
		pu, _ := url.Parse(trap)
		if n := len(byHost[pu.Hostname()]); n > 60+2 {
			t.Errorf("trap %s: %d requests, budget 60", trap, n)
		}
	}

	// Every reachable page was requested.
	missing := missingPages(web)

	if len(missing) > 0 {
		t.Errorf("%d reachable pages never requested, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}

	// Each URL was requested once, but for retries of 429 and 503 (a
	// robots.txt's too: its host's URLs wait for it).
	type key struct{ host, path string }
	times := map[key]int{}
	retried := map[key]bool{}
	for _, r := range web.Log() {
		k := key{r.Host, r.Path}
		times[k]++
		if r.Status == 429 || r.Status == 503 {
			retried[k] = true
		}
	}
	for k, n := range times {
		if n > 1 && !retried[k] {
			t.Errorf("%s%s requested %d times", k.host, k.path, n)
		}
	}

	// Duplicates against the ground truth: of each cluster of
	// byte-identical pages at most one reaches the sinks.
	sunk := map[string]bool{}
	for _, u := range pages.urls {
		sunk[u] = true
	}
	for _, cl := range web.ExactDuplicates() {
		n := 0
		for _, u := range cl {
			if cu, _ := urlnorm.Canonical(u); sunk[cu] {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%d pages of duplicate cluster %v reached the sinks", n, cl)
		}
	}

	// Near-duplicates (the same article with another date line and ads)
	// are caught by MinHash: one page per cluster reaches the sinks.
	for _, cl := range web.NearDuplicates() {
		n := 0
		for _, u := range cl {
			if cu, _ := urlnorm.Canonical(u); sunk[cu] {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%d pages of near-duplicate cluster %v reached the sinks", n, cl)
		}
	}

	// No page was handed to the sinks twice.
	slices.Sort(pages.urls)
	if d := slices.Compact(slices.Clone(pages.urls)); len(d) != len(pages.urls) {
		t.Errorf("sinks got %d pages, %d distinct", len(pages.urls), len(d))
	}

	// Accounting: every queued URL reached exactly one outcome.
	if got, want := s.Finished(), s.Outcomes[Queued]; got != want {
		t.Errorf("finished %d URLs, queued %d: %s", got, want, s.Summary())
	}
	if got := s.Outcomes[Filtered] + s.Outcomes[DuplicateURL] + s.Outcomes[Queued] - s.Seeds; got != s.Links {
		t.Errorf("links %d, but filtered+duplicate+queued-seeds = %d", s.Links, got)
	}
	if s.Outcomes[DuplicateContent] == 0 {
		t.Errorf("no duplicate content found on a web with mirrors")
	}
	if s.Outcomes[RobotsDenied] == 0 {
		t.Errorf("no URL denied by robots.txt on a web with Disallow rules")
	}
	if !strings.Contains(s.Summary(), "fetched") {
		t.Errorf("summary lacks outcomes")
	}
}

// TestContinuousRevisitsChangingPagesMoreOften: in continuous mode a page
// that changes is fetched again sooner than one that never does (the
// change rate estimate of Cho and Garcia-Molina sets the interval).
func TestContinuousRevisitsChangingPagesMoreOften(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 12, Hosts: 6, MeanPages: 10, Mirrors: -1, NearDuplicates: -1,
		ChangePeriods: []time.Duration{0, 150 * time.Millisecond}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Continuous = true
		cfg.MinRevisit = 100 * time.Millisecond
		cfg.MaxRevisit = time.Hour
		cfg.MaxDuration = 4 * time.Second
		cfg.DelayFactor = 1
		cfg.MaxPagesPerHost = 30
	})
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	count := map[time.Duration][]int{}
	perURL := map[string]int{}
	for _, r := range web.Log() {
		perURL[web.URL(r.Host, r.Path)]++
	}
	for u, n := range perURL {
		if web.Status(u) != 200 || web.IsTrap(u) || !strings.HasSuffix(u, ".html") {
			continue
		}
		p := web.ChangePeriod(u)
		count[p] = append(count[p], n)
	}
	mean := func(xs []int) float64 {
		sum := 0
		for _, x := range xs {
			sum += x
		}
		return float64(sum) / float64(max(1, len(xs)))
	}
	still, changing := mean(count[0]), mean(count[150*time.Millisecond])
	t.Logf("fetches per page: never changing %.1f (%d pages), changing every 150ms %.1f (%d pages); unchanged outcomes %d",
		still, len(count[0]), changing, len(count[150*time.Millisecond]), s.Outcomes[Unchanged])
	if len(count[0]) == 0 || len(count[150*time.Millisecond]) == 0 {
		t.Fatalf("the web lacks one kind of page: %v", count)
	}
	if changing < 2*still {
		t.Errorf("changing pages fetched %.1f times on average, unchanging %.1f: want at least twice as often", changing, still)
	}
}

// missingPages returns the pages reachable from the seeds under
// robots.txt that were not requested, neither themselves nor an exact
// duplicate: of a mirror and its original, whichever home page comes first
// is crawled, and the links of the other, a duplicate, are not followed
// (IIR §20.2.1). URLs the default filters refuse (images, PDFs) are not
// expected.
func missingPages(web *fetchtest.Web) []string {
	filters := frontier.DefaultFilters()
	return web.Missed("crawlkit", func(u string) bool {
		pu, err := url.Parse(u)
		return err != nil || filters.Filter(pu) != nil
	})
}

// TestOPICPrioritizer runs the crawl with OPIC: the crawler hands each
// fetched page's links to OPIC.Fetched, so cash flows from the seeds
// to the pages they link to.
func TestOPICPrioritizer(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 4, MeanPages: 6, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	opic := frontier.NewOPIC()
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Prioritizer = opic
		cfg.MaxPagesPerHost = 30
		cfg.MaxRetries = -1
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A page one link from a seed starts with no cash of its own: all it
	// has came through Fetched.
	seed := web.Seeds()[0]
	child, _ := urlnorm.Canonical(web.Links(seed)[0])
	if imp := opic.Importance(child) + opic.Cash(child); imp <= 0 {
		t.Errorf("%s, linked from seed %s, has no cash or importance after the crawl: Fetched was not called", child, seed)
	}
	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d pages missed under OPIC, e.g. %v", len(missing), missing[:min(3, len(missing))])
	}
}

// TestStatsDuringRun: Stats may be called from any goroutine at any time,
// also while Run starts (a cluster node answers status requests before its
// crawl begins); under -race this test finds an unguarded field.
func TestStatsDuringRun(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 2, MeanPages: 3, ChangePeriods: []time.Duration{0}})
	defer web.Close()
	c := newTestCrawler(t, web, func(cfg *Config) { cfg.MaxPagesPerHost = 3 })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if s := c.Stats(); s.Elapsed < 0 {
				t.Errorf("negative elapsed time %v", s.Elapsed)
			}
		}
	})
	time.Sleep(time.Millisecond) // let Stats run before Run starts, too
	s, err := c.Run(context.Background())
	close(stop)
	wg.Wait()
	if err != nil || s.Elapsed <= 0 {
		t.Fatalf("Run: %v, elapsed %v", err, s.Elapsed)
	}
}

// TestRetryAfter: delay-seconds of any size is a delay (capped at a day,
// which MaxDelay caps again), never "no delay"; a date in the past, a
// negative number or junk is none.
// TestCrawlFindsNoscriptLinks: with scripting off, as a crawler is, a
// link inside <noscript> is a link: the javadoc pages reached only that
// way are fetched, and the crawl misses nothing.
func TestCrawlFindsNoscriptLinks(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: 3, MeanPages: 4, Javadoc: true, ChangePeriods: []time.Duration{0},
		CrawlDelay: time.Millisecond, RetryAfter: time.Millisecond})
	defer web.Close()
	var mu sync.Mutex
	fetched := map[string]bool{}
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.MaxPagesPerHost = 40
		cfg.MaxRetries = -1
		cfg.OnPage = func(p *Page) {
			mu.Lock()
			fetched[p.URL] = true
			mu.Unlock()
		}
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range fetchtest.JavadocNoscriptOnly() {
		if u := web.URL(web.Host(fetchtest.Javadoc), p); !fetched[u] {
			t.Errorf("%s, linked only inside <noscript>, was not fetched", u)
		}
	}
	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d reachable pages never requested, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
}

// TestLinkCapCounted: a page with more links than MaxLinksPerPage yields
// the first ones, and the rest are counted, not silently lost.
func TestLinkCapCounted(t *testing.T) {
	var body strings.Builder
	body.WriteString("<title>index</title><p>all the pages of the site</p>")
	for i := range 300 {
		fmt.Fprintf(&body, `<a href="/p%d">page %d</a>`, i, i)
	}
	site := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		r := &fetch.Response{URL: req.URL, Status: 404, Header: http.Header{}}
		if req.URL.Path == "/" {
			r.Status, r.ContentType, r.Body = 200, "text/html", []byte(body.String())
		}
		return r, nil
	})
	c, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: site, Workers: 4, DelayFactor: -1, MaxLinksPerPage: 120,
		MaxPages: 1, Logger: quietLogger(), NoSitemaps: true}) // the links of the page alone
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Links != 120 || s.LinksDropped != 180 || s.PagesLinkCapped != 1 {
		t.Errorf("links %d, dropped %d on %d pages; want 120, 180 on 1", s.Links, s.LinksDropped, s.PagesLinkCapped)
	}
	if !strings.Contains(s.Summary(), "180 more past the per-page cap") {
		t.Errorf("the summary does not say links were dropped:\n%s", s.Summary())
	}
}
