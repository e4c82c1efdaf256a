package crawlkit

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// aliasCrawl crawls the Aliases site of a fresh simulated web from its
// entry, with cfg changed by change, and returns the web (closed by the
// test's cleanup), the crawler and its stats.
func aliasCrawl(t *testing.T, ctx context.Context, web *fetchtest.Web, change func(*Config)) (*Crawler, Stats) {
	t.Helper()
	entry := web.URL(web.Host(fetchtest.Aliases), "/")
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Seeds = []string{entry}
		cfg.MaxRetries = -1
		if change != nil {
			change(cfg)
		}
	})
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func aliasWeb(t *testing.T) *fetchtest.Web { return aliasWebScale(t, 1) }

// aliasWebScale is aliasWeb with Config.AliasScale scale.
func aliasWebScale(t *testing.T, scale int) *fetchtest.Web {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 11, Hosts: 3, MeanPages: 4, Aliases: true, AliasScale: scale,
		ChangePeriods: []time.Duration{0}, CrawlDelay: time.Millisecond, RetryAfter: time.Millisecond})
	t.Cleanup(web.Close)
	return web
}

// TestURLRulesLoseNoPage crawls the Aliases site with and without learned
// URL rewrite rules (the default, and Config.NoURLRules): with them every distinct page is still fetched under
// some URL (the decoys ?page=, ?lang= and the /v2/ files of its own
// included), fewer fetches return content already seen, the URLs the
// rules dropped are counted, and the rules are exported.
func TestURLRulesLoseNoPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := aliasWeb(t)
	aliasCrawl(t, ctx, base, func(cfg *Config) { cfg.NoURLRules = true })
	baseDistinct, baseIdentical := base.AliasFetches(base.Log())
	if n := len(base.PagesOf(base.Host(fetchtest.Aliases))); len(baseDistinct) != n {
		t.Errorf("without the rules: coverage %d/%d distinct pages", len(baseDistinct), n)
	}

	web := aliasWeb(t)
	c, s := aliasCrawl(t, ctx, web, nil)
	host := web.Host(fetchtest.Aliases)
	entry := web.URL(host, "/")
	if missed := web.Missed("crawlkit", nil, entry); len(missed) > 0 {
		t.Errorf("%d of the site's %d distinct pages never fetched under any URL: %v", len(missed), len(web.PagesOf(host)), missed)
	}
	distinct, identical := web.AliasFetches(web.Log())
	if len(distinct) != len(web.PagesOf(host)) {
		t.Errorf("coverage %d/%d distinct pages", len(distinct), len(web.PagesOf(host)))
	}
	// 52-59% fewer when measured (212-215 and 88-102). The /v2/ decoy alone
	// keeps about 25 (its files must all be fetched to find the five of
	// its own), and /current/ about 30: a prefix's parked files are
	// fetched at the end (dust.Learner.ReleaseUnproven). At ten times the
	// size the share is larger (TestURLRulesAtScale).
	if identical > baseIdentical*3/5 {
		t.Errorf("identical-content fetches: %d with the rules, %d without; want at least 40%% fewer", identical, baseIdentical)
	}
	st := c.URLRules().Stats()
	if st.Active == 0 || s.FilteredBy["url rule"]+s.Outcomes[Parked] == 0 {
		t.Errorf("no rule active (%+v) or no URL parked: %s", st, s.Summary())
	}
	t.Logf("identical-content fetches: %d without the rules, %d with (%.0f%% fewer); %d URLs parked at admission, %d when leased; rules %+v",
		baseIdentical, identical, 100*(1-float64(identical)/float64(max(1, baseIdentical))), s.FilteredBy["url rule"], s.Outcomes[Parked], st)
	for _, r := range c.URLRules().Rules() {
		t.Logf("rule: %v", r)
	}
}

// TestURLRulesAtScale crawls the Aliases site at ten times its size
// (fetchtest.Config.AliasScale: 250 articles, 120 API classes with their
// frameset variants, the same 30-file manuals and /v2/ decoy) as the crawl
// was before learned rules and the trap defence (both off), with the
// trap defence alone, and with both (the defaults). There the aliases
// outnumber the evidence the rules need, as on real sites: at least 80%
// fewer identical-content fetches than before (93-95% when measured),
// and every distinct page fetched, the decoy's files included (a package
// of 120 near-duplicate class pages is not a trap).
func TestURLRulesAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("three crawls of 600 pages and their aliases")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const scale = 10
	var identical [3]int
	for i, change := range []func(*Config){
		func(cfg *Config) { cfg.NoURLRules, cfg.Traps = true, &TrapOptions{AlikePages: -1} }, // before
		func(cfg *Config) { cfg.NoURLRules = true },                                          // the trap defence alone
		nil, // both
	} {
		web := aliasWebScale(t, scale)
		c, s := aliasCrawl(t, ctx, web, change)
		host := web.Host(fetchtest.Aliases)
		for _, m := range web.Missed("crawlkit", nil, web.URL(host, "/")) {
			t.Errorf("crawl %d: never fetched under any URL: %s", i, m)
		}
		_, identical[i] = web.AliasFetches(web.Log())
		if i == 2 {
			if n := s.Outcomes[Abandoned]; n > 0 {
				t.Errorf("%d URLs abandoned: the trap defence cut the site: %s", n, s.Summary())
			}
			t.Logf("%d distinct pages; rules %+v", len(web.PagesOf(host)), c.URLRules().Stats())
			// A canonical URL whose page was fetched under an alias
			// before the rule was learned is parked on it
			// (dust.Learner.Served): 3-8 fetched all the same when
			// measured (a rule learned after the canonical URL was
			// leased, or a validation), once 30 under the load of the
			// whole suite; 32-69 before.
			n := canonicalAfterAlias(web)
			t.Logf("%d canonical URLs fetched after an alias of theirs", n)
			if n > 40 || c.URLRules().Stats().Served == 0 {
				t.Errorf("%d canonical URLs fetched after an alias of theirs, %d parked on one", n, c.URLRules().Stats().Served)
			}
		}
	}
	fewer := func(n int) float64 { return 100 * (1 - float64(n)/float64(max(1, identical[0]))) }
	if identical[2]*5 > identical[0] {
		t.Errorf("identical-content fetches: %d with the rules, %d before; want at least 80%% fewer", identical[2], identical[0])
	}
	t.Logf("identical-content fetches: %d before, %d with the trap defence alone (%.1f%% fewer), %d with the rules too (%.1f%% fewer)",
		identical[0], identical[1], fewer(identical[1]), identical[2], fewer(identical[2]))
}

// TestURLRulesSurviveResume stops a crawl of the Aliases site with rules
// on once it has parked URLs and resumes it on the same State: the
// resumed crawl starts with the saved rules, parks its parked URLs again,
// and still fetches every distinct page, with the trap defence on: the
// duplicates the saved rules explain do not count against the site.
func TestURLRulesSurviveResume(t *testing.T) {
	web := aliasWeb(t)
	state := NewMemState()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first atomic.Pointer[Crawler]
	var stopped atomic.Bool
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Seeds = []string{web.URL(web.Host(fetchtest.Aliases), "/")}
		cfg.MaxRetries = -1
		cfg.State = state
		cfg.OnPage = func(*Page) {
			if c := first.Load(); c != nil && c.URLRules().Stats().Parked > 0 && stopped.CompareAndSwap(false, true) {
				cancel()
			}
		}
	})
	first.Store(c)
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !stopped.Load() {
		t.Fatal("the crawl ended before it parked a URL")
	}
	saved, err := state.Rules()
	if err != nil || saved == nil {
		t.Fatalf("no rules saved: %v", err)
	}
	parked := 0
	if _, err := state.Load(context.Background(), func(p Pending) error {
		if p.Parked != "" {
			parked++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if parked == 0 {
		t.Fatal("no parked URL among the pending ones")
	}
	second, s2 := aliasCrawl(t, context.Background(), web, func(cfg *Config) {
		cfg.State = state
	})
	st := second.URLRules().Stats()
	if want := c.URLRules().Stats().Activated; st.Activated < want {
		t.Errorf("the resumed crawl has %d rules activated, the first %d", st.Activated, want)
	}
	host := web.Host(fetchtest.Aliases)
	if missed := web.Missed("crawlkit", nil, web.URL(host, "/")); len(missed) > 0 {
		t.Errorf("%d distinct pages never fetched after the resume: %v", len(missed), missed)
	}
	t.Logf("first run stopped with %d URLs parked; the second started with them parked again (%d now): %s", parked, st.Parked, s2.Summary())
}

// TestURLRulesAccounting checks the crawl's accounting with the rules at
// work, a depth limit included: every queued URL reaches one outcome
// (Parked among them), and every link, canonical form a rule added and
// released URL ends Filtered, DuplicateURL or Queued.
func TestURLRulesAccounting(t *testing.T) {
	for _, depth := range []int{0, 3} {
		web := aliasWeb(t)
		_, s := aliasCrawl(t, context.Background(), web, func(cfg *Config) { cfg.MaxDepth = depth })
		if got, want := s.Finished(), s.Outcomes[Queued]; got != want {
			t.Errorf("MaxDepth %d: finished %d URLs, queued %d: %s", depth, got, want, s.Summary())
		}
		if got := s.Outcomes[Filtered] + s.Outcomes[DuplicateURL] + s.Outcomes[Queued] - s.Seeds; got != s.Links {
			t.Errorf("MaxDepth %d: links %d, but filtered+duplicate+queued-seeds = %d: %s", depth, s.Links, got, s.Summary())
		}
		if s.FilteredBy["url rule"]+s.Outcomes[Parked] == 0 {
			t.Errorf("MaxDepth %d: no URL parked: %s", depth, s.Summary())
		}
	}
}

// TestURLRulesCanonicalFails crawls the Aliases site with its bare host
// answering 404 under /news/, while its www alias serves those pages:
// the host-alias rule, learned on the other paths, maps the www news
// URLs to bare-host URLs that give no page. Those failures release the
// URLs parked on them, which are fetched under www, so no page is lost;
// the failed forms are counted.
func TestURLRulesCanonicalFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	web := aliasWeb(t)
	host := web.Host(fetchtest.Aliases)
	bare := strings.Split(host, ":")[0]
	var refused atomic.Int64
	c, s := aliasCrawl(t, ctx, web, func(cfg *Config) {
		cfg.WrapFetcher = func(f fetch.Fetcher) (fetch.Fetcher, error) {
			return fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
				if req.URL.Hostname() == bare && strings.HasPrefix(req.URL.Path, "/news/") {
					refused.Add(1)
					return &fetch.Response{URL: req.URL, Status: 404, Header: http.Header{}}, nil
				}
				return f.Fetch(ctx, req)
			}), nil
		}
	})
	st := c.URLRules().Stats()
	var news []string
	for _, p := range web.PagesOf(host) {
		if strings.Contains(p, "/news/") {
			news = append(news, p)
		}
	}
	missed := web.Missed("crawlkit", nil, web.URL(host, "/"))
	t.Logf("%d bare-host news fetches answered 404; %d canonical forms failed, %d URLs released; %d pages missed of %d; %s",
		refused.Load(), st.Failed, st.Released, len(missed), len(web.PagesOf(host)), s.Summary())
	for _, m := range missed {
		t.Errorf("never fetched under any URL: %s", m)
	}
	if st.Failed == 0 || refused.Load() == 0 || len(news) == 0 {
		t.Errorf("the test checks nothing: %d failed forms, %d refused fetches, %d news pages", st.Failed, refused.Load(), len(news))
	}
}

// decoySite serves /v3/ and /v2/, n files each linked in order from the
// directory's index; /v2/ serves /v3/'s bytes for every file but the last,
// which is its own. It counts the requests per path.
func decoySite(n int) (fetch.Fetcher, *sync.Map) {
	requests := new(sync.Map)
	return fetch.FetcherFunc(func(_ context.Context, req *fetch.Request) (*fetch.Response, error) {
		u := req.URL
		c, _ := requests.LoadOrStore(u.Path, new(int64))
		*c.(*int64)++
		var b strings.Builder
		dir, file, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		k, err := strconv.Atoi(strings.TrimSuffix(file, ".html"))
		switch {
		case u.Path == "/":
			b.WriteString(`<p>versions</p><a href="/v3/">latest</a> <a href="/v2/">version 2</a>`)
		case (dir == "v2" || dir == "v3") && file == "":
			b.WriteString("<p>contents of the manual</p>")
			for i := range n {
				fmt.Fprintf(&b, `<a href="%d.html">chapter %d</a>`, i, i)
			}
		case (dir == "v2" || dir == "v3") && err == nil && k >= 0 && k < n:
			own := ""
			if dir == "v2" && k == n-1 {
				own = " in version 2 this chapter reads otherwise"
			}
			fmt.Fprintf(&b, "<p>chapter %d %s%s</p>", k, strings.Repeat(strconv.Itoa(k*7919)+" words of the chapter ", 30), own)
		default:
			return &fetch.Response{URL: u, Status: 404, Header: http.Header{}}, nil
		}
		return &fetch.Response{URL: u, Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(b.String())}, nil
	}), requests
}

// TestURLRulesDecoyFileFetched crawls a /v2/ directory whose files are
// /v3/'s but for its last: the prefix rule learned on the others parks
// the last among the rest, and no validation reaches it (one in
// ValidateEvery, chosen by its URL's hash). The crawl gives those back
// when it has nothing else to do, and the file of its own is fetched,
// which withdraws the rule. Without that the page was lost.
func TestURLRulesDecoyFileFetched(t *testing.T) {
	for _, tc := range []struct {
		name       string
		state      func() State
		continuous bool
	}{
		{"no State", func() State { return nil }, false},
		{"MemState", func() State { return NewMemState() }, false},  // queued from the pending records
		{"continuous", func() State { return NewMemState() }, true}, // when nothing is due
	} {
		t.Run(tc.name, func(t *testing.T) { testDecoyFileFetched(t, tc.state(), tc.continuous) })
	}
}

func testDecoyFileFetched(t *testing.T, state State, continuous bool) {
	const n = 30 // the hash of /v2/29.html does not choose it for a validation
	f, requests := decoySite(n)
	own := "/v2/" + strconv.Itoa(n-1) + ".html"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := New(Config{Seeds: []string{"http://decoy.test/"}, Fetcher: f, Workers: 1, DelayFactor: -1, State: state,
		Continuous: continuous, Logger: quietLogger(), OnPage: func(p *Page) {
			if continuous && strings.HasSuffix(p.URL, own) {
				cancel() // a continuous crawl runs until stopped
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := c.URLRules().Stats()
	if *mustLoad(requests, own) == 0 {
		t.Fatalf("the /v2/ file of its own was never fetched; rules %+v: %s", st, s.Summary())
	}
	if st.Unproven == 0 {
		t.Errorf("nothing given back at the end: the test tests nothing (rules %+v)", st)
	}
	v2 := 0
	for i := range n {
		v2 += int(*mustLoad(requests, "/v2/"+strconv.Itoa(i)+".html"))
	}
	t.Logf("%d of /v2/'s %d files fetched, %d given back at the end; rules %+v", v2, n, st.Unproven, st)
	for _, r := range c.URLRules().Rules() {
		t.Logf("rule: %v", r)
	}
}

// canonicalAfterAlias counts the fetches of the Aliases site that got a
// page under its canonical URL after it had been fetched under an alias.
func canonicalAfterAlias(web *fetchtest.Web) int {
	log := web.Log()
	sort.Slice(log, func(i, j int) bool { return log[i].Start.Before(log[j].Start) })
	entry, _ := url.Parse(web.URL(web.Host(fetchtest.Aliases), "/"))
	port := entry.Port()
	seen := make(map[string]bool)
	n := 0
	for _, r := range log {
		if r.Method != "GET" || r.Status != 200 {
			continue
		}
		u := "http://" + r.Host + ":" + port + r.Path
		c, ok := web.Canonical(u)
		if !ok {
			continue
		}
		if seen[c] && u == c {
			n++
		}
		seen[c] = true
	}
	return n
}
