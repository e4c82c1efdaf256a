package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

func TestTrapRule(t *testing.T) {
	def, err := (*TrapOptions)(nil).resolved()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    TrapOptions
		r    KeyRecord
		cut  bool
	}{
		{"new host", def, KeyRecord{}, false},
		{"distinct pages, however many", def, KeyRecord{Pages: 1 << 40}, false},
		{"a few duplicates", def, KeyRecord{Pages: 1, Alike: 16}, false},
		{"mostly alike", def, KeyRecord{Pages: 1, Alike: 17}, true},
		{"alike, but not twice the distinct pages", def, KeyRecord{Pages: 50, Alike: 100}, false},
		{"alike, more than twice the distinct pages", def, KeyRecord{Pages: 50, Alike: 101}, true},
		{"all alike", def, KeyRecord{Alike: 17}, true},
		{"rule off", TrapOptions{AlikePages: -1, AlikeRatio: 2}, KeyRecord{Alike: 1 << 40}, false},
		{"ratio 0: the count alone", TrapOptions{AlikePages: 3, AlikeRatio: 0}, KeyRecord{Pages: 100, Alike: 4}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.o.cut(tt.r); got != tt.cut {
				t.Errorf("cut(%+v) = %v, want %v", tt.r, got, tt.cut)
			}
		})
	}
}

func TestTrapOptionsValidated(t *testing.T) {
	for _, ratio := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: fetch.Static{}, Traps: &TrapOptions{AlikeRatio: ratio}})
		if !errors.Is(err, ErrConfig) {
			t.Errorf("AlikeRatio %v: err %v, want ErrConfig", ratio, err)
		}
	}
	if _, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: fetch.Static{}, Traps: &TrapOptions{PagesPerHost: -1}}); !errors.Is(err, ErrConfig) {
		t.Errorf("PagesPerHost -1: err %v, want ErrConfig", err)
	}
	for _, sfx := range []string{"", ".sim.test", "sim.test.", "Sim.test", "sim.test:80"} {
		if _, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: fetch.Static{}, PrivateSuffixes: []string{sfx}}); !errors.Is(err, ErrConfig) {
			t.Errorf("PrivateSuffixes %q: err %v, want ErrConfig", sfx, err)
		}
	}
}

// TestDomainRule: a registrable domain gets DomainHosts hosts, then one
// more per PagesPerHost pages of new content.
func TestDomainRule(t *testing.T) {
	def, _ := (*TrapOptions)(nil).resolved()
	for _, tt := range []struct {
		name         string
		o            TrapOptions
		hosts, pages int64
		full         bool
	}{
		{"a new domain", def, 0, 0, false},
		{"below the floor", def, 9, 0, false},
		{"at the floor, no pages", def, 10, 0, true},
		{"pages grow the allowance", def, 10, 16, false},
		{"a big site", def, 500, 10000, false},
		{"an explosion: 3 pages a host", def, 13, 39, true},
		{"rule off", TrapOptions{DomainHosts: -1, PagesPerHost: 16}, 1 << 20, 0, false},
	} {
		if got := tt.o.domainFull(tt.hosts, tt.pages); got != tt.full {
			t.Errorf("%s: domainFull(%d hosts, %d pages) = %v, want %v", tt.name, tt.hosts, tt.pages, got, tt.full)
		}
	}
}

func TestDomainOf(t *testing.T) {
	c := &Crawler{cfg: Config{PrivateSuffixes: []string{"sim.test", "hosting.example"}}}
	for host, want := range map[string]string{
		"www.cs.stanford.edu":      "stanford.edu",
		"a.b.example.co.uk:8080":   "example.co.uk",
		"h001.sim.test:41234":      "h001.sim.test",
		"www.alias.sim.test:41234": "alias.sim.test",
		"x1a.explode.test:41234":   "explode.test",
		"joe.hosting.example":      "joe.hosting.example",
		"hosting.example":          "hosting.example",
		"127.0.0.1:8080":           "127.0.0.1",
		"[::1]:8080":               "[::1]:8080",
		"blog.example.com.":        "example.com",
	} {
		if got := c.domainOf(host); got != want {
			t.Errorf("domainOf(%q) = %q, want %q", host, got, want)
		}
	}
}

// TestTrapsCostLittle crawls a web with a calendar, a session-id and a
// directory-depth trap and a subdomain explosion: each costs at most 2%
// of the crawl's requests, every reachable real page is still fetched,
// and no host is cut but the traps and hosts that served nothing but
// copies of another's pages.
func TestTrapsCostLittle(t *testing.T) {
	if testing.Short() {
		t.Skip("a crawl of 200 hosts")
	}
	const explode = "explode.test"
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 200, MeanPages: 20, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond, SubdomainTrap: explode})
	defer web.Close()
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Workers = 64
		cfg.DelayFactor = -1
		cfg.MinDelay = 5 * time.Millisecond
		cfg.MaxDelay = 20 * time.Millisecond
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	log := web.Log()
	byHost := map[string]int{}
	exploded, explodeHosts := 0, map[string]bool{}
	for _, r := range log {
		byHost[r.Host]++
		if strings.HasSuffix(r.Host, "."+explode) {
			exploded++
			explodeHosts[r.Host] = true
		}
	}
	if share := float64(exploded) / float64(len(log)); share > 0.02 || exploded == 0 {
		t.Errorf("the subdomain explosion cost %d of %d requests (%.1f%%) on %d hosts, want > 0 and ≤ 2%%", exploded, len(log), 100*share, len(explodeHosts))
	}
	if s.FilteredBy["domain trap"] == 0 {
		t.Errorf("no link refused by the domain rule: %v", s.FilteredBy)
	}
	for _, trap := range web.Traps() {
		u, _ := url.Parse(trap)
		h := u.Hostname()
		if share := float64(byHost[h]) / float64(len(log)); share > 0.02 {
			t.Errorf("trap %s cost %d of %d requests (%.1f%%), want ≤ 2%%", h, byHost[h], len(log), 100*share)
		}
	}
	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d reachable pages never requested, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	traps := map[string]bool{}
	for _, trap := range web.Traps() {
		u, _ := url.Parse(trap)
		traps[u.Hostname()] = true
	}
	mirrored := map[string]bool{} // hosts whose pages have exact copies elsewhere
	for _, cl := range web.ExactDuplicates() {
		for _, u := range cl {
			pu, _ := url.Parse(u)
			mirrored[pu.Hostname()] = true
		}
	}
	cuts := 0
	c.cutHosts.Range(func(k, _ any) bool {
		cuts++
		h := strings.TrimPrefix(k.(string), "h:")
		if !traps[h] && !mirrored[h] {
			t.Errorf("host %s was cut, but it is no trap and serves pages of its own", h)
		}
		return true
	})
	if cuts == 0 || s.Outcomes[Abandoned] == 0 {
		t.Errorf("no host cut (%d) or no URL abandoned: %s", cuts, s.Summary())
	}
	t.Logf("%d requests; traps: calendar %d, session %d, deep %d, subdomain explosion %d on %d hosts; %d hosts cut, %d URLs abandoned, %d links refused by the domain rule",
		len(log), byHost[web.Host(fetchtest.CalendarTrap)], byHost[web.Host(fetchtest.SessionTrap)], byHost[web.Host(fetchtest.DeepTrap)],
		exploded, len(explodeHosts), cuts, s.Outcomes[Abandoned], s.FilteredBy["domain trap"])
}

// copyTrap is a host whose every page has the same text and links two
// new pages, and a second host whose pages are all distinct.
func copyTrap() (fetch.Fetcher, *sync.Map) {
	requests := new(sync.Map)
	text := strings.Repeat("this page is the same whatever its number says ", 20)
	return fetch.FetcherFunc(func(_ context.Context, req *fetch.Request) (*fetch.Response, error) {
		u := req.URL
		n, _ := requests.LoadOrStore(u.Host, new(int64))
		*n.(*int64)++
		if u.Path == "/robots.txt" {
			return &fetch.Response{URL: u, Status: 404, Header: http.Header{}}, nil
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(u.Path, "/"))
		var body string
		switch u.Host {
		case "trap.test":
			body = fmt.Sprintf(`<p>%s</p><a href="/%d">a</a><a href="/%d">b</a><a href="http://fine.test/%d">x</a>`, text, 2*i+1, 2*i+2, i)
		default:
			body = fmt.Sprintf(`<p>page %d %s</p>`, i, strings.Repeat(strconv.Itoa(i*7919)+" words of its own ", 30))
		}
		return &fetch.Response{URL: u, Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(body)}, nil
	}), requests
}

// TestTrapCutSurvivesResume: a host cut before a stop stays cut after the
// resume, and its queued URLs are abandoned without a request but those
// that tell the resumed run: its robots.txt and one page.
func TestTrapCutSurvivesResume(t *testing.T) {
	f, requests := copyTrap()
	state := NewMemState()
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	var mu sync.Mutex
	var cut bool
	logger := newRecordingLogger(func(msg string) {
		if strings.Contains(msg, "spider trap") {
			mu.Lock()
			cut = true
			mu.Unlock()
			once.Do(cancel)
		}
	})
	s := runConfig(t, ctx, Config{Seeds: []string{"http://trap.test/0"}, Fetcher: f, Workers: 1, DelayFactor: -1, State: state, Logger: logger})
	cancel()
	if !cut {
		t.Fatalf("the trap was not cut: %s", s.Summary())
	}
	trapBefore := *mustLoad(requests, "trap.test")
	// robots.txt, the first page, the two it found (a page of new content
	// found them: not counted), 17 alike pages and one in flight.
	if trapBefore > 22 {
		t.Errorf("%d requests to the trap before the cut, want ≤ 22 (17 alike pages counted, 3 more pages and robots.txt)", trapBefore)
	}

	s = runConfig(t, context.Background(), Config{Fetcher: f, Workers: 1, DelayFactor: -1, State: state, Logger: quietLogger()})
	if extra := *mustLoad(requests, "trap.test") - trapBefore; extra > 2 {
		t.Errorf("the resumed run made %d requests to the cut host, want at most 2", extra)
	}
	if s.Outcomes[Abandoned] == 0 {
		t.Errorf("the resumed run abandoned nothing: %s", s.Summary())
	}
	if fine := *mustLoad(requests, "fine.test"); fine == 0 {
		t.Errorf("the distinct host was never fetched")
	}
}

func mustLoad(m *sync.Map, k string) *int64 {
	v, ok := m.Load(k)
	if !ok {
		return new(int64)
	}
	return v.(*int64)
}

// recordingHandler calls fn with the message of every record logged.
type recordingHandler struct{ fn func(string) }

func (h recordingHandler) Enabled(context.Context, slog.Level) bool      { return true }
func (h recordingHandler) Handle(_ context.Context, r slog.Record) error { h.fn(r.Message); return nil }
func (h recordingHandler) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h recordingHandler) WithGroup(string) slog.Handler                 { return h }

func newRecordingLogger(fn func(string)) *slog.Logger { return slog.New(recordingHandler{fn}) }

// TestTrapCutThroughRedirects: a trap whose every link answers with a
// redirect to its alike page is cut as one without: the redirect passes
// on that an alike page found it.
func TestTrapCutThroughRedirects(t *testing.T) {
	var requests atomic.Int64
	text := strings.Repeat("this page is the same whatever its number says ", 20)
	f := fetch.FetcherFunc(func(_ context.Context, req *fetch.Request) (*fetch.Response, error) {
		u := req.URL
		requests.Add(1)
		switch p := u.Path; {
		case p == "/robots.txt":
			return &fetch.Response{URL: u, Status: 404, Header: http.Header{}}, nil
		case strings.HasPrefix(p, "/go/"):
			to := *u
			to.Path = "/p/" + strings.TrimPrefix(p, "/go/")
			return &fetch.Response{URL: u, Status: 302, Location: &to, Header: http.Header{"Location": {to.String()}}}, nil
		case strings.HasPrefix(p, "/p/"):
			i, _ := strconv.Atoi(strings.TrimPrefix(p, "/p/"))
			body := fmt.Sprintf(`<p>%s</p><a href="/go/%d">a</a><a href="/go/%d">b</a>`, text, 2*i+1, 2*i+2)
			return &fetch.Response{URL: u, Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(body)}, nil
		}
		return &fetch.Response{URL: u, Status: 404, Header: http.Header{}}, nil
	})
	// Without URL rules: they learn /go/ → /p/ from the redirects and
	// then rewrite the links themselves.
	s := runConfig(t, context.Background(), Config{Seeds: []string{"http://trap.test/p/0"}, Fetcher: f, Workers: 1, DelayFactor: -1,
		MaxPagesPerHost: 400, NoURLRules: true, Logger: quietLogger()})
	if s.FilteredBy["trap host"] == 0 && s.Outcomes[Abandoned] == 0 {
		t.Fatalf("the trap was never cut (%d requests): %s", requests.Load(), s.Summary())
	}
	// Each alike page costs itself and its redirect; the first
	// generation goes uncounted.
	if n := requests.Load(); n > 60 {
		t.Errorf("%d requests before the cut, want at most 60", n)
	}
	t.Logf("cut after %d requests", requests.Load())
}

// TestTrapSoftNotFoundCut: a page of new content linking 300 URLs that
// all answer one "not found" page with status 200 (a soft 404) is cut
// after 17 of them: exact copies that the URL rules do not explain count
// against the host wherever they were found; near-duplicates need a
// chain of alike pages.
func TestTrapSoftNotFoundCut(t *testing.T) {
	var requests atomic.Int64
	f := fetch.FetcherFunc(func(_ context.Context, req *fetch.Request) (*fetch.Response, error) {
		u := req.URL
		requests.Add(1)
		var body string
		switch u.Path {
		case "/robots.txt":
			return &fetch.Response{URL: u, Status: 404, Header: http.Header{}}, nil
		case "/":
			var b strings.Builder
			b.WriteString("<p>an index of old articles, most of them gone</p>")
			for i := range 300 {
				fmt.Fprintf(&b, `<a href="/a/%d">article %d</a>`, i, i)
			}
			body = b.String()
		default:
			body = "<p>" + strings.Repeat("sorry, the page you asked for is not here any more ", 10) + "</p>"
		}
		return &fetch.Response{URL: u, Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(body)}, nil
	})
	s := runConfig(t, context.Background(), Config{Seeds: []string{"http://gone.test/"}, Fetcher: f, Workers: 1, DelayFactor: -1,
		Logger: quietLogger()})
	if n := requests.Load(); n > 25 {
		t.Errorf("%d requests, want at most 25 (robots.txt, the index, 17 copies and a few in flight): %s", n, s.Summary())
	}
	if s.Outcomes[Abandoned] == 0 {
		t.Errorf("nothing abandoned: %s", s.Summary())
	}
}

// templateSite serves a host whose summary page "/" lists n class pages
// of one template, near-duplicates of one another, each holding the only
// link to a page of its own (/use/i): a javadoc package. It counts the
// requests per path.
func templateSite(n int) (fetch.Fetcher, *sync.Map) {
	requests := new(sync.Map)
	template := strings.Repeat("returns the value of the field or the default when the field is not set ", 12)
	return fetch.FetcherFunc(func(_ context.Context, req *fetch.Request) (*fetch.Response, error) {
		u := req.URL
		c, _ := requests.LoadOrStore(u.Path, new(int64))
		*c.(*int64)++
		var b strings.Builder
		switch name, isClass := strings.CutPrefix(u.Path, "/c/"); {
		case u.Path == "/robots.txt":
			return &fetch.Response{URL: u, Status: 404, Header: http.Header{}}, nil
		case u.Path == "/":
			b.WriteString("<p>package summary, " + strconv.Itoa(n) + " classes</p>")
			for i := range n {
				fmt.Fprintf(&b, `<a href="/c/%d">class %d</a>`, i, i)
			}
		case isClass:
			fmt.Fprintf(&b, `<p>class %s. %s</p><a href="/">package</a><a href="/use/%s">use</a>`, name, template, name)
		case strings.HasPrefix(u.Path, "/use/"):
			i, _ := strconv.Atoi(strings.TrimPrefix(u.Path, "/use/"))
			fmt.Fprintf(&b, `<p>uses %d: %s</p>`, i, strings.Repeat(strconv.Itoa(i*7919)+" appears in its own words ", 20))
		default:
			return &fetch.Response{URL: u, Status: 404, Header: http.Header{}}, nil
		}
		return &fetch.Response{URL: u, Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(b.String())}, nil
	}), requests
}

// TestTrapTemplateNotCut crawls a javadoc-like package of 100 class pages,
// near-duplicates found by its summary page, 100 times the 16 alike pages
// that cut a trap and twice its other pages when they are fetched: the
// host is not cut, since a page of new content found them, and every
// page is fetched. With every alike page counted, as a trap's are, it
// was cut after 17 class pages.
func TestTrapTemplateNotCut(t *testing.T) {
	const n = 100
	f, requests := templateSite(n)
	s := runConfig(t, context.Background(), Config{Seeds: []string{"http://pkg.test/"}, Fetcher: f, Workers: 1, DelayFactor: -1, Logger: quietLogger()})
	if s.Outcomes[Abandoned] > 0 || s.FilteredBy["trap host"] > 0 {
		t.Errorf("the template host was cut: %s", s.Summary())
	}
	for i := range n {
		for _, p := range []string{"/c/" + strconv.Itoa(i), "/use/" + strconv.Itoa(i)} {
			if *mustLoad(requests, p) == 0 {
				t.Errorf("%s never fetched", p)
			}
		}
	}
	if s.Outcomes[DuplicateContent] < n/2 {
		t.Errorf("only %d near-duplicates: the class pages are not alike, the test tests nothing: %s", s.Outcomes[DuplicateContent], s.Summary())
	}
}

// TestAlikeFound checks the memory of URLs found by alike pages: only
// the finding page's own host, each URL taken once, and every page
// counted once the set is full.
func TestAlikeFound(t *testing.T) {
	var a alikeFound
	if a.take("http://a.test/x") {
		t.Error("an empty set has a URL")
	}
	a.add("http://a.test/p", []frontier.URL{{URL: "http://a.test/x"}, {URL: "http://b.test/y"}, {URL: "http://a.test:8080/z"}})
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"http://a.test/x", true},
		{"http://a.test/x", false},     // taken
		{"http://b.test/y", false},     // another host
		{"http://a.test:8080/z", true}, // the port is not part of the host key
		{"http://a.test/other", false},
	} {
		if got := a.take(tc.url); got != tc.want {
			t.Errorf("take(%s) = %v, want %v", tc.url, got, tc.want)
		}
	}
	full := alikeFound{m: make(map[uint64]struct{}, maxAlikeFound)}
	for i := range maxAlikeFound {
		full.m[uint64(i)] = struct{}{}
	}
	full.add("http://a.test/p", []frontier.URL{{URL: "http://a.test/new"}})
	if !full.take("http://a.test/never-found") {
		t.Error("a full set does not count every alike page")
	}
	// Fetched down to half the bound: the set remembers again.
	for i := range maxAlikeFound / 2 {
		delete(full.m, uint64(i))
	}
	if !full.take("http://a.test/never-found") {
		t.Error("the overflow ended before the set was down to half")
	}
	delete(full.m, uint64(maxAlikeFound/2))
	if full.take("http://a.test/never-found") {
		t.Error("the overflow did not end at half the bound")
	}
}
