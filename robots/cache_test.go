package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable time source for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// site is a scripted FetchFunc: it answers each URL from a map the test can
// change, and counts requests per URL.
type site struct {
	mu    sync.Mutex
	resp  map[string]*Response // by URL; missing means 404
	err   map[string]error
	calls map[string]int
	delay time.Duration
}

func newSite() *site {
	return &site{resp: map[string]*Response{}, err: map[string]error{}, calls: map[string]int{}}
}

func (s *site) set(u string, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.err, u)
	s.resp[u] = &Response{Status: status, Body: []byte(body)}
}

func (s *site) redirect(u string, status int, loc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resp[u] = &Response{Status: status, Location: loc}
}

func (s *site) fail(u string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err[u] = err
}

func (s *site) count(u string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[u]
}

func (s *site) fetch(ctx context.Context, u string) (*Response, error) {
	s.mu.Lock()
	s.calls[u]++
	r, err, delay := s.resp[u], s.err[u], s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	if r == nil {
		return &Response{Status: 404}, nil
	}
	return r, nil
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func allowed(t *testing.T, c *Cache, u string) bool {
	t.Helper()
	ok, err := c.Allowed(context.Background(), mustURL(t, u))
	if err != nil {
		t.Fatalf("Allowed(%s): %v", u, err)
	}
	return ok
}

const disallowX = "User-agent: *\nDisallow: /x\n"

func TestCacheRedirects(t *testing.T) {
	for hops := 0; hops <= 6; hops++ {
		t.Run(fmt.Sprint(hops, " hops"), func(t *testing.T) {
			s := newSite()
			c := NewCache(&Options{Fetch: s.fetch})
			defer c.Close()
			from := "http://a.test/robots.txt"
			for i := 1; i <= hops; i++ {
				// Relative, absolute and cross-host Locations alternate.
				to := fmt.Sprintf("http://b%d.test/r%d.txt", i, i)
				loc := to
				if i%2 == 1 && i > 1 {
					to = fmt.Sprintf("http://b%d.test/rel%d.txt", i-1, i)
					loc = fmt.Sprintf("/rel%d.txt", i)
				}
				s.redirect(from, []int{301, 302, 303, 307, 308}[i%5], loc)
				from = to
			}
			s.set(from, 200, disallowX)
			// Up to 5 redirects the file applies; beyond, it is unavailable.
			want := hops > 5
			if got := allowed(t, c, "http://a.test/x"); got != want {
				t.Errorf("Allowed(/x) after %d redirects = %v, want %v", hops, got, want)
			}
		})
	}
	t.Run("without Location", func(t *testing.T) {
		s := newSite()
		s.redirect("http://a.test/robots.txt", 302, "")
		c := NewCache(&Options{Fetch: s.fetch})
		defer c.Close()
		if !allowed(t, c, "http://a.test/x") {
			t.Error("3xx without Location not treated as unavailable")
		}
	})
}

func TestCacheStatusClasses(t *testing.T) {
	tests := []struct {
		status int
		err    error
		want   bool // Allowed("/y"), a path the file allows
	}{
		{200, nil, true}, {404, nil, true}, {403, nil, true}, {401, nil, true},
		{429, nil, false}, {500, nil, false}, {503, nil, false},
		{0, errors.New("connection refused"), false},
	}
	for _, tt := range tests {
		s := newSite()
		s.set("https://a.test/robots.txt", tt.status, disallowX)
		if tt.err != nil {
			s.fail("https://a.test/robots.txt", tt.err)
		}
		c := NewCache(&Options{Fetch: s.fetch})
		if got := allowed(t, c, "https://a.test/y"); got != tt.want {
			t.Errorf("status %d err %v: Allowed(/y) = %v, want %v", tt.status, tt.err, got, tt.want)
		}
		c.Close()
	}
}

func TestCacheTTL(t *testing.T) {
	s := newSite()
	clk := newClock()
	const robots = "http://a.test/robots.txt"
	s.set(robots, 200, disallowX)
	c := NewCache(&Options{Fetch: s.fetch, Now: clk.Now})
	defer c.Close()
	for range 3 {
		allowed(t, c, "http://a.test/y")
	}
	clk.Advance(24*time.Hour - time.Second)
	allowed(t, c, "http://a.test/y")
	if n := s.count(robots); n != 1 {
		t.Fatalf("%d fetches within 24 h, want 1", n)
	}
	s.set(robots, 200, "User-agent: *\nDisallow: /y\n")
	clk.Advance(time.Second)
	if allowed(t, c, "http://a.test/y") {
		t.Error("rules not refreshed after 24 h")
	}
	if n := s.count(robots); n != 2 {
		t.Fatalf("%d fetches after 24 h, want 2", n)
	}
}

func TestCacheUsesCachedCopyWhileFailing(t *testing.T) {
	s := newSite()
	clk := newClock()
	const robots = "http://a.test/robots.txt"
	s.set(robots, 200, disallowX)
	c := NewCache(&Options{Fetch: s.fetch, Now: clk.Now})
	defer c.Close()
	if allowed(t, c, "http://a.test/x") || !allowed(t, c, "http://a.test/y") {
		t.Fatal("initial rules wrong")
	}
	s.set(robots, 503, "")
	for day := 0; day < 40; day++ {
		clk.Advance(24 * time.Hour)
		if allowed(t, c, "http://a.test/x") || !allowed(t, c, "http://a.test/y") {
			t.Fatalf("day %d of failures: cached copy not used", day)
		}
	}
	if st := c.Stats(); st.Unreachable != 40 || st.Stale != 40 || st.Fallbacks != 0 {
		t.Errorf("Stats = %+v, want 40 failures answered from the cached copy", st)
	}
	// Recovery installs the new file.
	s.set(robots, 200, "User-agent: *\nDisallow: /y\n")
	clk.Advance(10 * time.Minute)
	if !allowed(t, c, "http://a.test/x") || allowed(t, c, "http://a.test/y") {
		t.Fatal("recovered rules not used")
	}
}

// TestCacheErrorTTL follows a run of failures: each is kept ErrorRetry
// doubled per failure in a row, up to ErrorTTL, and Check tells how many
// there have been and when the next attempt comes; a success starts the
// schedule over.
func TestCacheErrorTTL(t *testing.T) {
	const robots = "http://a.test/robots.txt"
	for _, c := range []struct {
		name        string
		retry, ttl  time.Duration
		waits       []time.Duration // between one attempt and the next
		afterRepair time.Duration   // the first wait of the next run
	}{
		{"doubling", time.Second, 10 * time.Second,
			[]time.Duration{1, 2, 4, 8, 10, 10}, 1},
		{"default", 0, 0,
			[]time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600}, 1},
		{"flat", time.Minute, time.Minute,
			[]time.Duration{60, 60, 60}, 60},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSite()
			clk := newClock()
			s.set(robots, 503, "")
			cache := NewCache(&Options{Fetch: s.fetch, Now: clk.Now, ErrorRetry: c.retry, ErrorTTL: c.ttl})
			defer cache.Close()
			check := func() Verdict {
				t.Helper()
				v, err := cache.Check(context.Background(), mustURL(t, "http://a.test/y"))
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			v := check()
			for i, w := range c.waits {
				w *= time.Second
				if !v.Unreachable || v.Allowed || v.Status != 503 || v.Failures != i+1 || !v.RetryAt.Equal(clk.Now().Add(w)) {
					t.Fatalf("after failure %d: %+v, want unreachable, Status 503, Failures %d, RetryAt in %v", i+1, v, i+1, w)
				}
				clk.Advance(w - time.Millisecond)
				if v := check(); v.Fetched || v.Failures != i+1 {
					t.Fatalf("failure %d: fetched again before its %v were up", i+1, w)
				}
				clk.Advance(time.Millisecond)
				if v = check(); !v.Fetched {
					t.Fatalf("failure %d: not fetched again after %v", i+1, w)
				}
			}
			if n := s.count(robots); n != len(c.waits)+1 {
				t.Fatalf("%d fetches, want %d", n, len(c.waits)+1)
			}
			// Repaired, expired, failing again: the schedule starts over
			// (the copy fetched in between stands in, so the host is not
			// unreachable).
			s.set(robots, 200, "")
			clk.Advance(time.Hour)
			if v := check(); !v.Fetched || !v.Allowed || v.Unreachable || v.Failures != 0 {
				t.Fatalf("repaired: %+v", v)
			}
			s.set(robots, 500, "")
			clk.Advance(25 * time.Hour)
			if v := check(); !v.Fetched || !v.Allowed || v.Unreachable {
				t.Fatalf("failing again: %+v, want the copy fetched before", v)
			}
			clk.Advance(c.afterRepair*time.Second - time.Millisecond)
			if check().Fetched {
				t.Fatal("failing again: fetched before the first wait was up")
			}
			clk.Advance(time.Millisecond)
			if !check().Fetched {
				t.Fatalf("failing again: not fetched after %v", c.afterRepair*time.Second)
			}
		})
	}
}

// TestCacheErrorRetryAfter: a failed answer's Retry-After is waited out
// when it is longer than the failure's own wait, and only then.
func TestCacheErrorRetryAfter(t *testing.T) {
	const robots = "http://a.test/robots.txt"
	for _, c := range []struct {
		asked, want time.Duration
	}{
		{0, time.Second},
		{500 * time.Millisecond, time.Second},
		{90 * time.Second, 90 * time.Second},
		{48 * time.Hour, 24 * time.Hour},
	} {
		s := newSite()
		clk := newClock()
		s.resp[robots] = &Response{Status: 429, RetryAfter: c.asked}
		cache := NewCache(&Options{Fetch: s.fetch, Now: clk.Now})
		v, err := cache.Check(context.Background(), mustURL(t, "http://a.test/y"))
		if err != nil || !v.Unreachable || !v.RetryAt.Equal(clk.Now().Add(c.want)) {
			t.Errorf("Retry-After %v: %+v, %v; want the next attempt in %v", c.asked, v, err, c.want)
		}
		clk.Advance(c.want - time.Millisecond)
		allowed(t, cache, "http://a.test/y")
		clk.Advance(time.Millisecond)
		allowed(t, cache, "http://a.test/y")
		if n := s.count(robots); n != 2 {
			t.Errorf("Retry-After %v: %d fetches, want 2 (the second after %v)", c.asked, n, c.want)
		}
		cache.Close()
	}
}

func TestCacheUnreachableFallback(t *testing.T) {
	s := newSite()
	clk := newClock()
	const robots = "http://a.test/robots.txt"
	s.fail(robots, errors.New("no route to host"))
	c := NewCache(&Options{Fetch: s.fetch, Now: clk.Now, ErrorTTL: time.Hour})
	defer c.Close()
	for h := 0; h < 30*24; h++ {
		if allowed(t, c, "http://a.test/y") {
			t.Fatalf("allowed after %d h of failures, before the 30 days", h)
		}
		clk.Advance(time.Hour)
	}
	// 30 days of failures: the host is treated as having no robots.txt.
	if !allowed(t, c, "http://a.test/y") {
		t.Error("no fallback after 30 days unreachable")
	}
	if st := c.Stats(); st.Fallbacks != 1 || st.Unreachable != 30*24+1 || st.Stale != 0 {
		t.Errorf("Stats = %+v, want 721 failures, the last one a fallback", st)
	}
	// A success resets the failure run.
	s.set(robots, 200, disallowX)
	clk.Advance(time.Hour)
	if allowed(t, c, "http://a.test/x") {
		t.Error("rules after recovery not applied")
	}
}

func TestCacheOneFetchPerHost(t *testing.T) {
	s := newSite()
	s.delay = 20 * time.Millisecond
	for i := range 5 {
		s.set(fmt.Sprintf("http://h%d.test/robots.txt", i), 200, disallowX)
	}
	c := NewCache(&Options{Fetch: s.fetch})
	defer c.Close()
	var wg sync.WaitGroup
	var wrong atomic.Int32
	for i := range 200 {
		wg.Go(func() {
			u := fmt.Sprintf("http://h%d.test/x/%d", i%5, i)
			if ok, err := c.Allowed(context.Background(), mustURL(t, u)); err != nil || ok {
				wrong.Add(1)
			}
		})
	}
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d wrong answers", n)
	}
	for i := range 5 {
		if n := s.count(fmt.Sprintf("http://h%d.test/robots.txt", i)); n != 1 {
			t.Errorf("host %d fetched %d times, want 1", i, n)
		}
	}
}

func TestCacheCallerContext(t *testing.T) {
	s := newSite()
	s.delay = 50 * time.Millisecond
	s.set("http://a.test/robots.txt", 200, disallowX)
	c := NewCache(&Options{Fetch: s.fetch})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err := c.Allowed(ctx, mustURL(t, "http://a.test/x"))
	var re *Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &re) || re.Host != "http://a.test" {
		t.Fatalf("err = %v, want *Error wrapping DeadlineExceeded", err)
	}
	// The fetch was not abandoned: a patient caller gets its result.
	if allowed(t, c, "http://a.test/x") {
		t.Error("rules not applied")
	}
	if n := s.count("http://a.test/robots.txt"); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

func TestCacheClose(t *testing.T) {
	s := newSite()
	s.delay = time.Hour
	c := NewCache(&Options{Fetch: s.fetch})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Allowed(context.Background(), mustURL(t, "http://a.test/x"))
		errc <- err
	}()
	for s.count("http://a.test/robots.txt") == 0 {
		time.Sleep(time.Millisecond)
	}
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("waiter got %v, want ErrClosed", err)
	}
	if _, err := c.Allowed(context.Background(), mustURL(t, "http://a.test/x")); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	c.Close() // idempotent
}

func TestCacheLRU(t *testing.T) {
	s := newSite()
	c := NewCache(&Options{Fetch: s.fetch, MaxEntries: 2})
	defer c.Close()
	allowed(t, c, "http://a.test/")
	allowed(t, c, "http://b.test/")
	allowed(t, c, "http://a.test/") // a is now the most recent
	allowed(t, c, "http://c.test/") // evicts b
	if n := c.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
	allowed(t, c, "http://a.test/")
	allowed(t, c, "http://b.test/")
	if a, b := s.count("http://a.test/robots.txt"), s.count("http://b.test/robots.txt"); a != 1 || b != 2 {
		t.Errorf("fetches a=%d b=%d, want 1 and 2 (b evicted)", a, b)
	}
	if st := c.Stats(); st.Evictions != 2 || st.Fetches != 4 || st.Hits != 2 || st.Unavailable != 4 {
		t.Errorf("Stats = %+v, want 2 evictions, 4 fetches (all 404), 2 hits", st)
	}
}

func TestCacheKeys(t *testing.T) {
	s := newSite()
	s.set("http://a.test/robots.txt", 200, disallowX)
	s.set("https://a.test/robots.txt", 200, "User-agent: *\nDisallow: /y\n")
	c := NewCache(&Options{Fetch: s.fetch})
	defer c.Close()
	// Scheme and port are part of the key; default ports and case are not.
	if allowed(t, c, "http://a.test/x") || !allowed(t, c, "https://a.test/x") {
		t.Error("http and https rules mixed up")
	}
	allowed(t, c, "HTTP://A.TEST:80/x")
	allowed(t, c, "https://a.test:443/x")
	if n := c.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
	allowed(t, c, "http://a.test:8080/x")
	if n := c.Len(); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}
	// /robots.txt itself needs no fetch.
	if !allowed(t, c, "http://z.test/robots.txt") || s.count("http://z.test/robots.txt") != 0 {
		t.Error("/robots.txt not allowed without fetching")
	}
}

func TestCacheDelay(t *testing.T) {
	s := newSite()
	s.set("http://slow.test/robots.txt", 200, "User-agent: *\nCrawl-delay: 3600\n")
	s.set("https://slow.test/robots.txt", 200, "User-agent: *\nCrawl-delay: 5\n")
	s.set("http://mid.test/robots.txt", 200, "User-agent: *\nCrawl-delay: 5\nDisallow: /tmp\n\nUser-agent: mybot\nCrawl-delay: 2.5\nDisallow: /tmp\n")
	c := NewCache(&Options{Fetch: s.fetch, Agent: "MyBot"})
	defer c.Close()
	for _, h := range []string{"http://slow.test/", "https://slow.test/", "http://mid.test/"} {
		allowed(t, c, h)
	}
	tests := []struct {
		host   string
		want   time.Duration
		capped bool
	}{
		{"slow.test", time.Minute, true}, // 3600 s is deferred to the 60 s cap, not dropped
		{"SLOW.test", time.Minute, true},
		{"mid.test", 2500 * time.Millisecond, false}, // its own group, not "*"
		{"unknown.test", 0, false},
	}
	for _, tt := range tests {
		if d, capped := c.Delay(tt.host); d != tt.want || capped != tt.capped {
			t.Errorf("Delay(%s) = %v, %v; want %v, %v", tt.host, d, capped, tt.want, tt.capped)
		}
	}
	// The slow host is still crawlable.
	if !allowed(t, c, "http://slow.test/page") {
		t.Error("slow host dropped")
	}
}

func TestCacheBadURLs(t *testing.T) {
	c := NewCache(&Options{Fetch: newSite().fetch})
	defer c.Close()
	tests := []struct {
		u    *url.URL
		want error
	}{
		{nil, ErrNoHost},
		{mustURL(t, "ftp://a.test/x"), ErrScheme},
		{mustURL(t, "mailto:a@b.test"), ErrScheme},
		{mustURL(t, "http:///x"), ErrNoHost},
	}
	for _, tt := range tests {
		_, err := c.Allowed(context.Background(), tt.u)
		var re *Error
		if !errors.Is(err, tt.want) || !errors.As(err, &re) || !strings.HasPrefix(err.Error(), "robots: allowed") {
			t.Errorf("Allowed(%v) = %v, want %v", tt.u, err, tt.want)
		}
		if _, err := c.Get(context.Background(), tt.u); !errors.Is(err, tt.want) {
			t.Errorf("Get(%v) = %v, want %v", tt.u, err, tt.want)
		}
	}
}

func TestCacheRequestURI(t *testing.T) {
	s := newSite()
	s.set("http://a.test/robots.txt", 200, "User-agent: *\nDisallow: /x\nDisallow: /*?s=\nDisallow: /$\nAllow: /p%2Fq\nDisallow: /p\n")
	c := NewCache(&Options{Fetch: s.fetch})
	defer c.Close()
	tests := []struct {
		url  string
		want bool
	}{
		{"http://a.test", false}, {"http://a.test/", false}, {"http://a.test/?", true},
		{"http://a.test/x?y", false}, {"http://a.test/y?s=1", false}, {"http://a.test/y?t=1#s=", true},
		{"http://a.test/p%2Fq", true}, {"http://a.test/p/q", false},
		// The path //b/x does not start with /x (its request URI was once
		// read as a scheme-relative URL of host b, path /x).
		{"http://a.test//b/x", true}, {"http://a.test//x", true}, {"http://a.test//", true},
	}
	for _, tt := range tests {
		if got := allowed(t, c, tt.url); got != tt.want {
			t.Errorf("Allowed(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
	u := mustURL(t, "http://a.test/some/page?with=query&and=more")
	if n := testing.AllocsPerRun(50, func() { c.Allowed(context.Background(), u) }); n != 0 {
		t.Errorf("cache hit: %v allocations", n)
	}
}

func TestCacheGet(t *testing.T) {
	s := newSite()
	s.set("http://a.test/robots.txt", 200, "Sitemap: http://a.test/s.xml\nUser-agent: *\nDisallow: /x\n")
	c := NewCache(&Options{Fetch: s.fetch})
	defer c.Close()
	r, err := c.Get(context.Background(), mustURL(t, "http://a.test/anything"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Sitemaps(); len(got) != 1 || got[0] != "http://a.test/s.xml" {
		t.Errorf("Sitemaps = %q", got)
	}
}

func TestHTTPFetch(t *testing.T) {
	var gotUA atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.UserAgent())
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/real.txt", http.StatusMovedPermanently)
		case "/real.txt":
			fmt.Fprint(w, disallowX)
		case "/big.txt":
			w.Write([]byte(strings.Repeat("#", MaxSize+1000)))
		case "/busy.txt":
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := HTTPFetch(srv.Client(), "TestBot/1.0")
	resp, err := f(context.Background(), srv.URL+"/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 301 || resp.Location != "/real.txt" {
		t.Errorf("redirect followed or lost: %+v", resp)
	}
	if ua := gotUA.Load(); ua != "TestBot/1.0" {
		t.Errorf("User-Agent = %v", ua)
	}
	resp, err = f(context.Background(), srv.URL+"/big.txt")
	if err != nil || len(resp.Body) != MaxSize+1 {
		t.Errorf("big body: %v, %d bytes, want %d", err, len(resp.Body), MaxSize+1)
	}
	if resp, err = f(context.Background(), srv.URL+"/busy.txt"); err != nil || resp.Status != 503 || resp.RetryAfter != 2*time.Minute {
		t.Errorf("busy: %v, %+v, want 503 with RetryAfter 2m", err, resp)
	}
	if _, err := f(context.Background(), "http://127.0.0.1:1/robots.txt"); err == nil {
		t.Error("no error for a closed port")
	}
	if _, err := f(context.Background(), "http://a b/"); err == nil {
		t.Error("no error for a bad URL")
	}

	// Through a Cache, the redirect is followed.
	c := NewCache(&Options{Fetch: f})
	defer c.Close()
	u := mustURL(t, srv.URL+"/x")
	if ok, err := c.Allowed(context.Background(), u); err != nil || ok {
		t.Errorf("Allowed(/x) = %v, %v; want false", ok, err)
	}
}
