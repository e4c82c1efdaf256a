package crawlkit

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// isSitemapPath reports whether a request path is one of the simulated
// web's sitemaps.
func isSitemapPath(p string) bool {
	return strings.HasPrefix(p, "/sitemap") || strings.HasPrefix(p, "/sitemaps/")
}

// requested returns the set of URLs of the web's request log, in the
// ground truth's form.
func requested(web *fetchtest.Web) map[string]int {
	out := map[string]int{}
	for _, r := range web.Log() {
		out["http://"+r.Host+":"+web.Port()+r.Path]++
	}
	return out
}

// sitemapOnlyMissed returns the sitemap-only pages robots.txt lets agent
// fetch that neither they nor an exact duplicate (a mirror's copy) were
// requested.
func sitemapOnlyMissed(web *fetchtest.Web, agent string) (missed []string, expected int) {
	req := requested(web)
	dupOf := map[string][]string{}
	for _, cl := range web.ExactDuplicates() {
		for _, u := range cl {
			dupOf[u] = cl
		}
	}
	for _, u := range web.SitemapOnlyPages() {
		if !web.Allowed(agent, u) {
			continue
		}
		expected++
		found := req[u] > 0
		for _, d := range dupOf[u] {
			found = found || req[d] > 0
		}
		if !found {
			missed = append(missed, u)
		}
	}
	return missed, expected
}

// TestSitemapOnlyPagesFound crawls a web whose hosts have pages only
// their sitemaps list: every one robots.txt allows is fetched, through
// the sitemaps robots.txt names or, where it names none, /sitemap.xml.
// Sitemaps are requests like any: never two in flight to a host, the
// politeness gap before and after each. They are not pages: no sink
// sees one, and they are counted apart.
func TestSitemapOnlyPagesFound(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 11, Hosts: 12, MeanPages: 6, ChangePeriods: []time.Duration{0},
		SitemapOnly: true, Latency: 2 * time.Millisecond, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	var mu sync.Mutex
	var sinkURLs []string
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.MaxRetries = -1 // retries are not the subject, and take seconds
		cfg.Sinks = []Sink{SinkFunc(func(_ context.Context, p *Page) error {
			mu.Lock()
			sinkURLs = append(sinkURLs, p.URL)
			mu.Unlock()
			return nil
		})}
	})
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	missed, expected := sitemapOnlyMissed(web, "crawlkit")
	if expected < 12 || len(missed) > 0 {
		t.Errorf("%d of %d sitemap-only pages missed, e.g. %v\n%s", len(missed), expected, missed[:min(3, len(missed))], s.Summary())
	}
	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d reachable pages never requested, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}

	log := web.Log()
	for host, n := range fetchtest.MaxConcurrency(log) {
		if n > 1 {
			t.Errorf("%s: %d requests in flight at once, want 1", host, n)
		}
	}
	checkGaps(t, log, 2)
	sitemaps := 0
	for _, r := range log {
		if isSitemapPath(r.Path) {
			sitemaps++
		}
	}
	// The index's two children are sitemaps too.
	if got := s.Outcomes[SitemapRead] + s.Outcomes[SitemapFailed] + s.Outcomes[Redirected]; sitemaps == 0 || got < uint64(sitemaps) {
		t.Errorf("%d sitemap requests in the log, %d sitemap outcomes counted", sitemaps, got)
	}
	if s.Outcomes[SitemapRead] == 0 {
		t.Errorf("no sitemap read:\n%s", s.Summary())
	}
	mu.Lock()
	defer mu.Unlock()
	if uint64(len(sinkURLs)) != s.Outcomes[Fetched] {
		t.Errorf("%d pages in the sink, %d fetched", len(sinkURLs), s.Outcomes[Fetched])
	}
	for _, u := range sinkURLs {
		if p, _ := url.Parse(u); isSitemapPath(p.Path) {
			t.Errorf("the sitemap %s reached the sinks as a page", u)
		}
	}
	answered := uint64(0) // 200 answers that are neither robots.txt nor sitemaps
	for _, r := range log {
		if r.Status == 200 && !isSitemapPath(r.Path) && !strings.HasSuffix(r.Path, "robots.txt") {
			answered++
		}
	}
	if s.Pages() != answered {
		t.Errorf("%d pages counted, %d answered 200 that are not sitemaps or robots.txt", s.Pages(), answered)
	}
}

// TestNoSitemaps: with NoSitemaps no sitemap is requested and the
// sitemap-only pages stay unfound.
func TestNoSitemaps(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 11, Hosts: 6, MeanPages: 4, ChangePeriods: []time.Duration{0},
		SitemapOnly: true, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	c := newTestCrawler(t, web, func(cfg *Config) { cfg.NoSitemaps, cfg.MaxRetries = true, -1 })
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range web.Log() {
		if isSitemapPath(r.Path) {
			t.Errorf("%s%s requested with NoSitemaps", r.Host, r.Path)
		}
	}
	if missed, expected := sitemapOnlyMissed(web, "crawlkit"); len(missed) != expected {
		t.Errorf("%d of %d sitemap-only pages found without sitemaps", expected-len(missed), expected)
	}
	if s.Outcomes[SitemapRead]+s.Outcomes[SitemapFailed] != 0 {
		t.Errorf("sitemap outcomes counted with NoSitemaps:\n%s", s.Summary())
	}
}

// TestSitemapsResume stops a crawl after a few pages, when sitemaps are
// queued and not yet fetched, and resumes it on the same State: the
// sitemaps are pending like any URL, so each is fetched once over both
// runs, and every sitemap-only page is found.
func TestSitemapsResume(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 11, Hosts: 8, MeanPages: 5, ChangePeriods: []time.Duration{0},
		SitemapOnly: true, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	state := NewMemState()
	first := newTestCrawler(t, web, func(cfg *Config) {
		cfg.State = state
		cfg.MaxPages = 4
		cfg.MaxRetries = -1
	})
	s1, err := first.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pendingSitemaps := 0
	if _, err := state.Load(context.Background(), func(p Pending) error {
		if p.URL.Sitemap > 0 {
			pendingSitemaps++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if pendingSitemaps == 0 {
		t.Fatalf("no sitemap pending after the first run (%d read):\n%s", s1.Outcomes[SitemapRead], s1.Summary())
	}
	second := newTestCrawler(t, web, func(cfg *Config) { cfg.State, cfg.MaxRetries = state, -1 })
	s2, err := second.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for u, n := range requested(web) {
		if p, _ := url.Parse(u); isSitemapPath(p.Path) && n > 1 {
			t.Errorf("%s requested %d times over the two runs", u, n)
		}
	}
	if s2.Outcomes[SitemapRead] <= s1.Outcomes[SitemapRead] {
		t.Errorf("the second run read no sitemap: %d, then %d", s1.Outcomes[SitemapRead], s2.Outcomes[SitemapRead])
	}
	if missed, expected := sitemapOnlyMissed(web, "crawlkit"); len(missed) > 0 {
		t.Errorf("%d of %d sitemap-only pages missed after the resume, e.g. %v", len(missed), expected, missed[0])
	}
}

// sitemapSite serves a robots.txt naming a sitemap index, an index
// listing two sitemaps and a nested index, and urlsets.
func sitemapSite(files map[string]string) fetch.Fetcher {
	return fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		r := &fetch.Response{URL: req.URL, Status: 404, Header: map[string][]string{}}
		if body, ok := files[req.URL.Path]; ok {
			r.Status, r.Body = 200, []byte(body)
			r.ContentType = "application/xml"
			if strings.HasSuffix(req.URL.Path, ".txt") {
				r.ContentType = "text/plain"
			}
			if strings.HasSuffix(req.URL.Path, ".html") {
				r.ContentType = "text/html"
			}
		}
		return r, nil
	})
}

// TestSitemapLimits: the levels of sitemap indexes, the entries of an
// index and entries outside the sitemap's site are bounded and counted.
func TestSitemapLimits(t *testing.T) {
	index := func(locs ...string) string {
		var b strings.Builder
		b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, l := range locs {
			b.WriteString("<sitemap><loc>" + l + "</loc></sitemap>")
		}
		return b.String() + "</sitemapindex>"
	}
	files := map[string]string{
		"/robots.txt": "User-agent: *\nDisallow: /private\nSitemap: http://a.test/s1.xml\nSitemap: http://other.test/s.xml\n",
		"/s1.xml":     index("http://a.test/s2.xml", "http://a.test/urls.xml.gz", "http://a.test/x1.xml", "http://a.test/x2.xml"),
		"/s2.xml":     index("http://a.test/s3.xml"),
		"/s3.xml":     index("http://a.test/s4.xml"), // level 3 lists level 4: refused
		"/urls.xml.gz": `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
			`<url><loc>http://a.test/p1.html</loc><lastmod>2026-01-02</lastmod><changefreq>daily</changefreq></url>` +
			`<url><loc>http://elsewhere.test/spam.html</loc></url>` +
			`<url><loc>http://a.test/private/x.html</loc></url></urlset>`,
		"/":        "<title>home</title><p>home page</p>",
		"/p1.html": "<title>p1</title><p>only in a sitemap</p>",
	}
	var mu sync.Mutex
	var got []frontier.URL
	prio := frontier.PrioritizerFunc(func(u *frontier.URL, levels int) int {
		mu.Lock()
		got = append(got, *u)
		mu.Unlock()
		return 0
	})
	c, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: sitemapSite(files), Workers: 2, DelayFactor: -1,
		Logger: quietLogger(), Prioritizer: prio, Sitemaps: &SitemapOptions{MaxIndexEntries: 3}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.FilteredBy["sitemap level"] != 1 || s.FilteredBy["sitemap domain"] != 2 || s.LinksDropped != 1 {
		t.Errorf("filtered %v, dropped %d; want 1 by level, 2 by domain (a sitemap, an entry), 1 index entry dropped\n%s",
			s.FilteredBy, s.LinksDropped, s.Summary())
	}
	// s1, s2, s3, urls.xml.gz read; x1.xml answers 404 (x2.xml is past
	// the cap of 3).
	if s.Outcomes[SitemapRead] != 4 || s.Outcomes[SitemapFailed] != 1 || s.Outcomes[Fetched] != 2 || s.Outcomes[RobotsDenied] != 1 {
		t.Errorf("want 4 sitemaps read, 1 failed, 2 pages, 1 robots denial:\n%s", s.Summary())
	}
	mu.Lock()
	defer mu.Unlock()
	var p1 *frontier.URL
	levels := map[string]int{}
	for i := range got {
		levels[got[i].URL] = got[i].Sitemap
		if strings.HasSuffix(got[i].URL, "/p1.html") {
			p1 = &got[i]
		}
	}
	if p1 == nil || p1.ChangeFreq != frontier.FreqDaily || !p1.LastMod.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) || p1.Depth != 1 {
		t.Errorf("the prioritizer saw p1 as %+v, want its lastmod, changefreq daily, depth 1", p1)
	}
	for u, want := range map[string]int{"http://a.test/s1.xml": 1, "http://a.test/s2.xml": 2, "http://a.test/s3.xml": 3, "http://a.test/urls.xml.gz": 2} {
		if levels[u] != want {
			t.Errorf("%s queued at sitemap level %d, want %d", u, levels[u], want)
		}
	}
}

func TestSitemapOptionsValidated(t *testing.T) {
	for _, o := range []SitemapOptions{{MaxLevel: -1}, {MaxLevel: 256}, {MaxEntries: -1}, {MaxIndexEntries: -2}} {
		if _, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: fetch.Static{}, Sitemaps: &o}); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", o, err)
		}
	}
}

// TestSitemapLastModBringsRevisitForward: in a continuous crawl, a page
// a sitemap says changes yearly is not revisited for long; once the
// sitemap, revisited, gives it a <lastmod> later than its fetch, it is
// fetched again at once, and only once.
func TestSitemapLastModBringsRevisitForward(t *testing.T) {
	var (
		mu      sync.Mutex
		lastmod time.Time
		fetches int
	)
	site := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		r := &fetch.Response{URL: req.URL, Status: 200, Header: map[string][]string{}, ContentType: "text/html"}
		mu.Lock()
		defer mu.Unlock()
		switch req.URL.Path {
		case "/robots.txt":
			r.ContentType, r.Body = "text/plain", []byte("Sitemap: http://a.test/s.xml\n")
		case "/s.xml":
			mod := ""
			if !lastmod.IsZero() {
				mod = "<lastmod>" + lastmod.Format(time.RFC3339Nano) + "</lastmod>"
			}
			r.ContentType = "application/xml"
			r.Body = []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a.test/p.html</loc>` +
				mod + `<changefreq>yearly</changefreq></url></urlset>`)
		case "/":
			r.Body = []byte("<title>home</title><p>nothing links to p</p>")
		case "/p.html":
			fetches++
			if fetches == 1 {
				lastmod = time.Now().Add(time.Millisecond) // changed just after this fetch
			}
			r.Body = []byte("<title>p</title><p>only the sitemap knows p</p>")
		default:
			r.Status = 404
		}
		return r, nil
	})
	c, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: site, Workers: 2, DelayFactor: -1, Logger: quietLogger(),
		State: NewMemState(), Continuous: true, MinRevisit: 100 * time.Millisecond, MaxRevisit: time.Hour, MaxDuration: 1200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fetches != 2 {
		t.Errorf("p fetched %d times, want 2: once, and once more after the sitemap's lastmod", fetches)
	}
}

// TestStaleCopy: of the two leases of a revisit brought forward, the one
// whose Due is not the recorded one is dropped, once.
func TestStaleCopy(t *testing.T) {
	c := &Crawler{}
	now := time.Now()
	news := c.rescheduled([]Pending{{URL: frontier.URL{URL: "http://a.test/p", Due: now}}})
	if len(news) != 1 {
		t.Fatalf("rescheduled %d, want 1", len(news))
	}
	if again := c.rescheduled([]Pending{{URL: frontier.URL{URL: "http://a.test/p", Due: now.Add(time.Second)}}}); len(again) != 0 {
		t.Errorf("brought forward twice while its old copy is out: %v", again)
	}
	lease := func(due time.Time) *frontier.Lease {
		return &frontier.Lease{URL: frontier.URL{URL: "http://a.test/p", Due: due}}
	}
	if c.staleCopy(lease(now)) {
		t.Error("the new copy was taken for the stale one")
	}
	if !c.staleCopy(lease(now.Add(time.Hour))) {
		t.Error("the old copy was not dropped")
	}
	if c.staleCopy(lease(now.Add(2 * time.Hour))) {
		t.Error("a later revisit was dropped too")
	}
}

func TestHintedInterval(t *testing.T) {
	c := &Crawler{cfg: Config{MinRevisit: time.Minute, MaxRevisit: 30 * 24 * time.Hour}}
	day := 24 * time.Hour
	for _, tc := range []struct {
		name string
		f    frontier.ChangeFreq
		h    frontier.History
		d    time.Duration // from the change history
		want time.Duration
	}{
		{"no hint", frontier.FreqUnknown, frontier.History{Fetches: 3}, 5 * day, 5 * day},
		{"first visit: the period", frontier.FreqDaily, frontier.History{}, time.Minute, day},
		{"later: at most the period", frontier.FreqDaily, frontier.History{Fetches: 3}, 5 * day, day},
		{"later: the estimate when shorter", frontier.FreqWeekly, frontier.History{Fetches: 3}, 2 * day, 2 * day},
		{"always", frontier.FreqAlways, frontier.History{Fetches: 3}, 5 * day, time.Minute},
		{"yearly, capped", frontier.FreqYearly, frontier.History{}, time.Minute, 30 * day},
		{"never, unchanged", frontier.FreqNever, frontier.History{Fetches: 3}, time.Hour, 30 * day},
		{"never, but changed", frontier.FreqNever, frontier.History{Fetches: 3, Changes: 1}, time.Hour, time.Hour},
	} {
		if got := c.hintedInterval(frontier.URL{ChangeFreq: tc.f, History: tc.h}, tc.d); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
