package console

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testCrawl is a crawl of a small simulated web that takes a few seconds
// (every answer is delayed, hosts are contacted politely), with a 404
// seed so that there is an error to show, and its console on a loopback
// server. Run starts it; ended is closed when Run returns.
type testCrawl struct {
	web    *fetchtest.Web
	c      *crawlkit.Crawler
	k      *Console
	srv    *httptest.Server
	cancel context.CancelFunc
	ended  chan crawlkit.Stats
}

func newTestCrawl(t *testing.T, latency time.Duration, opts *Options) *testCrawl {
	t.Helper()
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 11, Hosts: 6, MeanPages: 10, Latency: latency,
		ChangePeriods: []time.Duration{0}, RetryAfter: time.Millisecond, CrawlDelay: time.Millisecond})
	t.Cleanup(web.Close)
	// The crawler's own caching resolver, asking a test DNS server, so
	// that the DNS figures are real; a seed whose name does not resolve
	// gives a fetch error.
	ns := dnstest.Start(t, dnstest.Config{})
	ns.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
	resolver, err := dns.New(&dns.Options{Nameservers: []string{ns.Addr()}, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resolver.Close() })
	c, err := crawlkit.New(crawlkit.Config{
		Seeds:    append(web.Seeds(), web.URL(web.Host(fetchtest.Statuses), "/404/gone"), "http://nosuch.invalid.test/"),
		Resolver: resolver, AllowPrivate: true, PrivateSuffixes: []string{web.Domain()},
		Workers: 4, MaxRetries: -1, MaxPages: 5000, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &Options{}
	}
	if opts.Interval == 0 {
		opts.Interval = 50 * time.Millisecond
	}
	tc := &testCrawl{web: web, c: c, ended: make(chan crawlkit.Stats, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	tc.cancel = cancel
	if opts.Stop == nil {
		opts.Stop = cancel
	}
	tc.k = New(c, opts)
	tc.srv = httptest.NewServer(tc.k)
	t.Cleanup(func() {
		cancel()
		tc.srv.Close()
		tc.k.Close()
	})
	go func() {
		s, err := c.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		tc.ended <- s
	}()
	return tc
}

func (tc *testCrawl) wait(t *testing.T) crawlkit.Stats {
	t.Helper()
	select {
	case s := <-tc.ended:
		tc.ended <- s
		return s
	case <-time.After(60 * time.Second):
		t.Fatal("the crawl did not end in 60 s")
		return crawlkit.Stats{}
	}
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

var figureRE = regexp.MustCompile(`<b>([^<]*)</b><small>pages</small>`)

// TestConsoleDuringAndAfterCrawl: the page has every part an operator
// needs while the crawl runs, its live part moves, and once the crawl has
// ended the console still serves the final figures.
func TestConsoleDuringAndAfterCrawl(t *testing.T) {
	tc := newTestCrawl(t, 6*time.Millisecond, nil)
	time.Sleep(700 * time.Millisecond)
	code, h, page := get(t, tc.srv.URL+"/")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET /: %d %v", code, h)
	}
	for _, want := range []string{
		`id="live"`, `fetch('live'`, `<a href="./">reload</a>`, // live without reloads, and a reload link without JS
		`>running<`, "Progress toward the limits", "max pages", "Settings", tc.web.Seeds()[0],
		`<svg class="chart"`, "pages/s", "URLs in the frontier", "crawl time",
		"Outcomes of URLs taken from the frontier", "HTTP status codes", "Busiest hosts", "Slowest hosts",
		"Where the time goes", "Recent errors", "robots.txt answered from cache",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `http-equiv="refresh"`) {
		t.Error("the page reloads itself")
	}
	_, _, live1 := get(t, tc.srv.URL+"/live")
	if strings.Contains(live1, "<html") || !strings.Contains(live1, `data-now=`) {
		t.Errorf("/live is not the page's live part:\n%.300s", live1)
	}
	time.Sleep(400 * time.Millisecond)
	_, _, live2 := get(t, tc.srv.URL+"/live")
	p1, p2 := figureRE.FindStringSubmatch(live1), figureRE.FindStringSubmatch(live2)
	if p1 == nil || p2 == nil || p1[1] == p2[1] {
		t.Errorf("the page count did not move between two reads of /live: %q, %q", p1, p2)
	}

	s := tc.wait(t)
	time.Sleep(150 * time.Millisecond) // the sampler's last sample
	_, _, page = get(t, tc.srv.URL+"/")
	for _, want := range []string{`>finished<`, "(frontier empty)", "200 OK", "404 Not Found", "/404/gone", "http"} {
		if !strings.Contains(page, want) {
			t.Errorf("after the crawl, the page lacks %q", want)
		}
	}
	t.Logf("crawl: %d pages in %v", s.Pages(), s.Elapsed)
	if s.Pages() < 20 {
		t.Errorf("only %d pages crawled", s.Pages())
	}
	if n := strings.Count(page, "<polyline"); n != 2 {
		t.Errorf("%d chart lines after the crawl, want 2", n)
	}
}

// TestControls: pause, resume and stop work from loopback; a request from
// another address, from another site's page, or with controls off is
// refused and changes nothing.
func TestControls(t *testing.T) {
	stopped := 0
	tc := newTestCrawl(t, 5*time.Millisecond, &Options{Controls: true, Stop: func() { stopped++ }})
	post := func(path string, mod func(*http.Request)) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/"+path, nil)
		r.RemoteAddr = "127.0.0.1:5000"
		if mod != nil {
			mod(r)
		}
		w := httptest.NewRecorder()
		tc.k.ServeHTTP(w, r)
		return w
	}
	for _, tt := range []struct {
		name string
		mod  func(*http.Request)
	}{
		{"remote", func(r *http.Request) { r.RemoteAddr = "192.0.2.7:5000" }},
		{"bad remote", func(r *http.Request) { r.RemoteAddr = "nonsense" }},
		{"other origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }},
		{"cross-site", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }},
	} {
		if w := post("pause", tt.mod); w.Code != http.StatusForbidden || tc.c.Paused() {
			t.Errorf("%s: pause answered %d, paused %v", tt.name, w.Code, tc.c.Paused())
		}
	}
	if w := post("pause", func(r *http.Request) { r.RemoteAddr = "[::1]:5000"; r.Header.Set("Origin", "http://"+r.Host) }); w.Code != http.StatusSeeOther || !tc.c.Paused() {
		t.Fatalf("pause from ::1 answered %d, paused %v", w.Code, tc.c.Paused())
	}
	if _, _, page := get(t, tc.srv.URL+"/"); !strings.Contains(page, `>paused<`) || !strings.Contains(page, `action="resume"`) {
		t.Error("the page of a paused crawl does not say so or offer Resume")
	}
	if w := post("resume", nil); w.Code != http.StatusSeeOther || tc.c.Paused() {
		t.Errorf("resume answered %d, paused %v", w.Code, tc.c.Paused())
	}
	if w := post("stop", nil); w.Code != http.StatusSeeOther || stopped != 1 {
		t.Errorf("stop answered %d, called %d times", w.Code, stopped)
	}
	if code, _, _ := get(t, tc.srv.URL+"/pause"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /pause answered %d", code)
	}
	tc.cancel()
	tc.wait(t)

	off := newTestCrawl(t, 0, &Options{})
	r := httptest.NewRequest("POST", "/stop", nil)
	r.RemoteAddr = "127.0.0.1:1"
	w := httptest.NewRecorder()
	off.k.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("stop with controls off answered %d", w.Code)
	}
	if _, _, page := get(t, off.srv.URL+"/"); strings.Contains(page, `action="pause"`) {
		t.Error("a console without controls shows them")
	}
	off.wait(t)
}

// TestConsoleBeforeRun: a console of a crawl that has not started serves
// a page that says so.
func TestConsoleBeforeRun(t *testing.T) {
	c, err := crawlkit.New(crawlkit.Config{Seeds: []string{"http://a.test/"}, Resolver: dns.System{}})
	if err != nil {
		t.Fatal(err)
	}
	k := New(c, &Options{Settings: []Setting{{"output directory", "/tmp/x"}}})
	defer k.Close()
	w := httptest.NewRecorder()
	k.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	for _, want := range []string{"not started", "waiting for samples", "/tmp/x", "http://a.test/"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	k.Close() // a second Close does nothing
}
