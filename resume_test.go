package crawlkit

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestCancelAndResume stops a crawl in mid-flight by cancelling its
// context and runs a new Crawler on the same State: the second run
// continues where the first stopped, so no page is requested twice but
// those in flight at the stop, and every reachable page is requested.
func TestCancelAndResume(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 10, MeanPages: 10, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	state := NewMemState()
	const workers = 8

	ctx, cancel := context.WithCancel(context.Background())
	var pages atomic.Int64
	first := newTestCrawler(t, web, func(cfg *Config) {
		cfg.State = state
		cfg.Workers = workers
		cfg.MaxPagesPerHost = 40
		cfg.OnPage = func(*Page) {
			if pages.Add(1) == 25 {
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
		cfg.State = state
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

	if s2.Pages() < s1.Pages() || s2.Elapsed <= s1.Elapsed || s2.Seeds != s1.Seeds {
		t.Errorf("the counters did not carry on: first %s, then %s", s1.String(), s2.String())
	}

	// A third run on the finished state has nothing to do.
	third := newTestCrawler(t, web, func(cfg *Config) { cfg.State = state })
	before := len(web.Log())
	if _, err := third.Run(context.Background()); err != nil && err != ErrNoSeeds {
		t.Fatal(err)
	}
	if n := len(web.Log()) - before; n > 0 {
		t.Errorf("a run over a finished crawl made %d requests", n)
	}
}

// runResumable crawls site from seeds with one worker and state; with
// stopAfterOne the crawl is cancelled after its first page.
func runResumable(t *testing.T, site fetch.Fetcher, state State, seeds []string, stopAfterOne bool) Stats {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Seeds: seeds, Fetcher: site, Workers: 1, DelayFactor: -1, State: state, Logger: quietLogger()}
	if stopAfterOne {
		cfg.OnPage = func(*Page) { cancel() }
	}
	return runConfig(t, ctx, cfg)
}

// runConfig runs a crawler made from cfg until ctx is done or the crawl
// ends, failing the test on an error.
func runConfig(t *testing.T, ctx context.Context, cfg Config) Stats {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestResumeKnowsContent: a page whose text was fetched before the stop
// is a duplicate after the resume (the content-seen set is the State's),
// and a page recorded by a killed run and fetched again is not a
// duplicate of itself.
func TestResumeKnowsContent(t *testing.T) {
	page := func(body string) *fetch.Response {
		return &fetch.Response{Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(body)}
	}
	same := strings.Repeat("the same words on two different hosts, ", 30)
	site := fetch.Static{
		"http://a.test/":     page(`<title>A</title><p>` + same + `</p><a href="/next">next</a>`),
		"http://a.test/next": page(`<title>Next</title><p>another page altogether</p><a href="http://b.test/copy">copy</a>`),
		"http://b.test/copy": page(`<title>Copy</title><p>` + same + `</p>`),
	}
	state := NewMemState()
	run := func(seeds []string, stopAfterOne bool) Stats {
		return runResumable(t, site, state, seeds, stopAfterOne)
	}
	if s := run([]string{"http://a.test/"}, true); s.Outcomes[Fetched] != 1 {
		t.Fatalf("first run: %s", s.String())
	}
	s := run(nil, false)
	if s.Outcomes[DuplicateContent] != 1 {
		t.Errorf("resumed run: the copy of a page fetched before the stop was not a duplicate: %s", s.String())
	}

	// A killed run recorded http://a.test/ but committed no outcome: the
	// resumed run fetches it again and must keep it.
	state = NewMemState()
	c, err := state.ContentSeen()
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := (&fetch.HTML{}).Parse(&fetch.Response{URL: &url.URL{Scheme: "http", Host: "a.test", Path: "/"}, Status: 200, Body: site["http://a.test/"].Body})
	if _, err := c.Seen(context.Background(), dedup.Doc{URL: "http://a.test/", Text: []byte(doc.Text)}); err != nil {
		t.Fatal(err)
	}
	if s := run([]string{"http://a.test/"}, false); s.Outcomes[DuplicateContent] != 1 || s.Outcomes[Fetched] != 2 {
		t.Errorf("after a kill: %s; want a.test and its next page fetched, the copy a duplicate", s.String())
	}
}

// TestResumeKnowsBodies: the exact fingerprints of bodies without text
// are the State's too, so a copy of a PDF fetched before the stop is a
// duplicate after it.
func TestResumeKnowsBodies(t *testing.T) {
	pdf := []byte("%PDF-1.4\n" + strings.Repeat("\x00\x01binary stream\xff", 40))
	doc := func() *fetch.Response {
		return &fetch.Response{Status: 200, ContentType: "application/pdf", Header: http.Header{}, Body: pdf}
	}
	site := fetch.Static{
		"http://a.test/report": doc(),
		"http://b.test/copy":   doc(),
	}
	state := NewMemState()
	run := func(seeds []string, stopAfterOne bool) Stats {
		return runResumable(t, site, state, seeds, stopAfterOne)
	}
	if s := run([]string{"http://a.test/report", "http://b.test/copy"}, true); s.Outcomes[Fetched] != 1 {
		t.Fatalf("first run: %s", s.String())
	}
	if s := run(nil, false); s.Outcomes[DuplicateContent] != 1 || s.Outcomes[Fetched] != 1 {
		t.Errorf("resumed run: %s; want the other copy a duplicate", s.String())
	}
}

// TestRevisitForgetsOldBody: in a continuous crawl, a PDF that changed
// retires its old fingerprint, so another URL serving the old bytes later
// is a new document, not a duplicate of what the first one no longer is.
func TestRevisitForgetsOldBody(t *testing.T) {
	oldPDF := []byte("%PDF-1.4\n" + strings.Repeat("\x00old version\xff", 40))
	newPDF := []byte("%PDF-1.4\n" + strings.Repeat("\x00new version\xff", 40))
	var mu sync.Mutex
	fetches := map[string]int{}
	site := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		u := req.URL.String()
		mu.Lock()
		fetches[u]++
		n, reportFetches := fetches[u], fetches["http://a.test/report"]
		mu.Unlock()
		r := &fetch.Response{URL: req.URL, Status: 200, Header: http.Header{}, ContentType: "application/pdf"}
		switch u {
		case "http://a.test/":
			// The index links the old version's new home only once the
			// report has been fetched again (and changed).
			r.ContentType = "text/html"
			links := `<a href="/report">report</a>`
			if reportFetches >= 2 {
				links += `<a href="http://b.test/archive">archive</a>`
			}
			r.Body = []byte(`<title>Index</title><p>` + strings.Repeat("reports of the year ", 20) + `</p>` + links)
		case "http://a.test/report":
			r.Body = newPDF
			if n == 1 {
				r.Body = oldPDF
			}
		case "http://b.test/archive":
			r.Body = oldPDF
		default:
			r.Status = 404
		}
		return r, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var archived atomic.Bool
	cfg := Config{Seeds: []string{"http://a.test/"}, Fetcher: site, Workers: 2, DelayFactor: -1, Logger: quietLogger(),
		Continuous: true, MinRevisit: 20 * time.Millisecond, MaxRevisit: 50 * time.Millisecond,
		OnPage: func(p *Page) {
			if p.URL == "http://b.test/archive" {
				archived.Store(true)
				cancel()
			}
		}}
	s := runConfig(t, ctx, cfg)
	if !archived.Load() {
		t.Errorf("http://b.test/archive, with the bytes a.test/report no longer has, was not kept: %s", s.String())
	}
}

// TestAddWhileRunLoadsState: with a State, URLs added before Run and
// while it loads the State (a cluster node's inbox delivers them at any
// time) are all crawled; under -race this also checks that Add does not
// commit while Run is loading.
func TestAddWhileRunLoadsState(t *testing.T) {
	site := fetch.Static{}
	var urls []string
	for i := range 40 {
		u := fmt.Sprintf("http://h%d.test/", i)
		urls = append(urls, u)
		site[u] = &fetch.Response{Status: 200, ContentType: "text/html", Header: http.Header{},
			Body: []byte(fmt.Sprintf("<title>%d</title><p>page number %d of many, with words of its own %d</p>", i, i, i*i))}
	}
	// A splitter that owns every host and calls the crawl idle only once
	// all URLs were added, as a cluster node does while its inbox holds
	// URLs.
	sp := &localSplitter{}
	c, err := New(Config{Fetcher: site, Workers: 4, DelayFactor: -1, State: NewMemState(), Logger: quietLogger(),
		Splitter: sp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Add(ctx, frontier.URL{URL: urls[0]}); err != nil { // before Run
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, u := range urls[1:] {
			if err := c.Add(ctx, frontier.URL{URL: u}); err != nil {
				t.Error(err)
			}
		}
		sp.done.Store(true)
	})
	s, err := c.Run(ctx)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcomes[Fetched] != uint64(len(urls)) {
		t.Errorf("fetched %d of %d added URLs: %s", s.Outcomes[Fetched], len(urls), s.String())
	}
}

// localSplitter owns every host; it is idle once done is set.
type localSplitter struct{ done atomic.Bool }

func (*localSplitter) Local(string) bool                          { return true }
func (*localSplitter) Send(context.Context, []frontier.URL) error { return nil }
func (s *localSplitter) Idle() bool                               { return s.done.Load() }

// TestResumeKeepsGaps: a resumed crawl contacts no host before its saved
// next contact, nor before the time a contact left uncommitted by the
// last run asks, while a contact the last run did commit holds nothing
// back; a host reached only by a new link is held too.
func TestResumeKeepsGaps(t *testing.T) {
	ctx := context.Background()
	state := NewMemState()
	start := time.Now()
	const gapA, untilB = 300 * time.Millisecond, 400 * time.Millisecond
	pending := func(u string) Pending { return Pending{URL: frontier.URL{URL: u}} }
	if err := state.Commit(ctx, &Txn{
		Add: []Pending{pending("http://a.test/"), pending("http://b.test/"), pending("http://c.test/")},
		Keys: []KeyDelta{
			{Key: "h:a.test", Admitted: 1, Next: start.Add(gapA), Gap: gapA},
			{Key: "h:c.test", Admitted: 1, Next: start.Add(10 * time.Millisecond), Gap: 10 * time.Millisecond},
			{Key: "h:d.test", Next: start.Add(gapA), Gap: gapA}, // contacted before, nothing pending
		},
	}); err != nil {
		t.Fatal(err)
	}
	// b.test was being contacted at the kill; c.test's contact was
	// committed since (its gap starts after it).
	state.Contacting(0, Contact{Key: "h:b.test", At: start, Until: start.Add(untilB)})
	state.Contacting(1, Contact{Key: "h:c.test", At: start.Add(-time.Second), Until: start.Add(10 * time.Second)})

	var mu sync.Mutex
	first := map[string]time.Time{}
	site := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		mu.Lock()
		if _, ok := first[req.URL.Host]; !ok {
			first[req.URL.Host] = time.Now()
		}
		mu.Unlock()
		r := &fetch.Response{URL: req.URL, Status: 404, Header: http.Header{}}
		if req.URL.Path == "/" {
			r.Status, r.ContentType = 200, "text/html"
			r.Body = []byte(`<title>` + req.URL.Host + `</title><p>words of ` + req.URL.Host + `</p><a href="http://d.test/">d</a>`)
		}
		return r, nil
	})
	runConfig(t, ctx, Config{Fetcher: site, Workers: 4, DelayFactor: -1, State: state, Logger: quietLogger()})
	mu.Lock()
	defer mu.Unlock()
	for _, tc := range []struct {
		host   string
		min    time.Duration
		maxLag time.Duration
	}{
		{"a.test", gapA, 0},
		{"b.test", untilB, 0},
		{"c.test", 0, 2 * time.Second},
		{"d.test", gapA, 0},
	} {
		at, ok := first[tc.host]
		if !ok {
			t.Errorf("%s never contacted", tc.host)
			continue
		}
		if d := at.Sub(start); d < tc.min {
			t.Errorf("%s first contacted %v after the start, want ≥ %v", tc.host, d, tc.min)
		} else if tc.maxLag > 0 && d > tc.maxLag {
			t.Errorf("%s first contacted %v after the start: held back by a contact that was committed", tc.host, d)
		}
	}
}
