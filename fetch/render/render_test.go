package render

import (
	"context"
	"errors"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// needBrowser skips the test without a browser binary.
func needBrowser(t testing.TB) {
	t.Helper()
	if FindBrowser() == "" {
		t.Skip("no Chromium: install it (Debian: apt-get install -y chromium) or set CRAWLKIT_CHROMIUM to a Chrome binary")
	}
}

// scriptWeb is a small web with the script hosts.
func scriptWeb(t testing.TB, cfg fetchtest.Config) *fetchtest.Web {
	cfg.Seed, cfg.Hosts, cfg.MeanPages, cfg.Scripts = 1, 3, 6, true
	w := fetchtest.NewWeb(cfg)
	t.Cleanup(w.Close)
	return w
}

// newFetcher renders through a fetch.HTTP that reaches w.
func newFetcher(t testing.TB, w *fetchtest.Web, o Options) *Fetcher {
	t.Helper()
	needBrowser(t)
	st := fetch.NewHTTP(fetchertest.WebOptions(w))
	t.Cleanup(func() { st.Close() })
	o.Static = st
	f, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f
}

func get(t testing.TB, f fetch.Fetcher, raw string) *fetch.Response {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return resp
}

// links returns the links of a body as the ground truth writes them.
func links(t testing.TB, resp *fetch.Response) []string {
	t.Helper()
	var out []string
	for _, l := range (&fetch.HTML{Scripting: true}).ParseBytes(resp.Body, resp.URL).Links {
		c := *l.URL
		c.Fragment = ""
		if s := c.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func TestConformance(t *testing.T) {
	needBrowser(t)
	for _, tc := range []struct {
		name   string
		policy Policy
	}{{"Always", Always}, {"Never", Never}} {
		t.Run(tc.name, func(t *testing.T) {
			var f *Fetcher // one browser for the whole suite
			fetchertest.Run(t, fetchertest.Harness{
				Rendered: true,
				New: func(st *testing.T, w *fetchtest.Web) fetch.Fetcher {
					if f == nil {
						f = newFetcher(t, w, Options{Policy: tc.policy, Quiet: 50 * time.Millisecond})
					}
					return f
				},
			})
			s := f.Stats()
			if tc.policy == Always && (s.Rendered == 0 || s.PolicySkip != 0) || tc.policy == Never && (s.Rendered != 0 || s.PolicySkip == 0) {
				t.Errorf("policy %s: %+v", tc.name, s)
			}
		})
	}
}

// TestRenderedVsStatic: the rendered document has the content and links
// the scripts write, which the page as fetched does not; the rest of the
// response is the static one, and the page was requested once.
func TestRenderedVsStatic(t *testing.T) {
	w := scriptWeb(t, fetchtest.Config{})
	f := newFetcher(t, w, Options{})
	app, shop := w.Host(fetchtest.ScriptApp), w.Host(fetchtest.Shop)
	static := fetch.NewHTTP(fetchertest.WebOptions(w))
	defer static.Close()
	for _, p := range []string{"/", "/p/1.html", "/p/2.html"} {
		u := w.URL(app, p)
		w.ResetLog()
		resp := get(t, f, u)
		n := 0
		for _, r := range w.Log() {
			if r.Host == app && r.Path == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s requested %d times, want once: the tab gets the static answer", u, n)
		}
		plain := get(t, static, u)
		if !resp.Rendered || resp.Status != 200 || resp.ContentType != "text/html" || resp.Header.Get("ETag") != plain.Header.Get("ETag") {
			t.Fatalf("%s: rendered %v, status %d, type %q, ETag %q (static %q)", u, resp.Rendered, resp.Status, resp.ContentType, resp.Header.Get("ETag"), plain.Header.Get("ETag"))
		}
		if got, want := links(t, resp), w.RenderedLinks(u); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s rendered: links %v, RenderedLinks %v", u, got, want)
		}
		if got := links(t, plain); len(got) != 0 || len(w.Links(u)) != 0 {
			t.Errorf("%s static: links %v", u, got)
		}
		doc := (&fetch.HTML{Scripting: true}).ParseBytes(resp.Body, resp.URL)
		if !strings.HasPrefix(doc.Text, w.Title(u)) || len(doc.Text) < 100 || strings.Contains(doc.Text, "Loading") {
			t.Errorf("%s: rendered text %.80q", u, doc.Text)
		}
		var data bool
		for _, s := range resp.Subresources {
			data = data || strings.HasPrefix(s.URL.Path, "/data/") && s.Status == 200
		}
		if !data {
			t.Errorf("%s: no data request among the Subresources", u)
		}
	}
	for _, pr := range w.Products() {
		resp := get(t, f, pr.URL)
		dom, err := fetch.ParseDOM(resp.Body, resp.URL, true)
		if err != nil {
			t.Fatal(err)
		}
		r := dom.Root()
		if r.ChildText("[itemprop=name]") != pr.Name || r.ChildAttr("[itemprop=price]", "content") != pr.Price ||
			!slices.Equal(r.ChildTexts("[itemprop=keywords]"), pr.Tags) {
			t.Errorf("%s (scripted %v): %q %q %v, want %+v", pr.URL, pr.Scripted, r.ChildText("[itemprop=name]"),
				r.ChildAttr("[itemprop=price]", "content"), r.ChildTexts("[itemprop=keywords]"), pr)
		}
		if pr.Scripted {
			break // one of each kind is enough here
		}
	}
	cat := w.URL(shop, "/c/1.html")
	if got, want := links(t, get(t, f, cat)), w.RenderedLinks(cat); !slices.Equal(got, want) {
		t.Errorf("%s: links %v, want %v", cat, got, want)
	}
}

// robotsGate refuses what the web's robots.txt forbids crawlkit, and
// counts admissions and releases.
type robotsGate struct {
	w                 *fetchtest.Web
	admitted, release atomic.Int64
}

func (g *robotsGate) Admit(_ context.Context, _, sub *url.URL) (func(), error) {
	if !g.w.Allowed("crawlkit", sub.String()) {
		return nil, errors.New("robots.txt disallows " + sub.String())
	}
	g.admitted.Add(1)
	return func() { g.release.Add(1) }, nil
}

// TestGate: a request the Gate refuses is never made, and the page still
// renders without it.
func TestGate(t *testing.T) {
	w := scriptWeb(t, fetchtest.Config{})
	f := newFetcher(t, w, Options{})
	g := &robotsGate{w: w}
	f.SetGate(g)
	u := w.URL(w.Host(fetchtest.ScriptApp), "/")
	resp := get(t, f, u)
	if !resp.Rendered || !slices.Equal(links(t, resp), w.RenderedLinks(u)) {
		t.Fatalf("not rendered without the tracker: %v", links(t, resp))
	}
	if strings.Contains(string(resp.Body), "data-tracked") {
		t.Error("the refused tracker ran")
	}
	for _, r := range w.Log() {
		if strings.HasPrefix(r.Path, "/private/") {
			t.Errorf("requested %s%s, which the Gate refused", r.Host, r.Path)
		}
	}
	if v := w.RobotsViolations("crawlkit"); len(v) != 0 {
		t.Errorf("robots violations: %+v", v)
	}
	s := f.Stats()
	if s.Refused != 1 || g.admitted.Load() != s.Requests || g.release.Load() != g.admitted.Load() {
		t.Errorf("refused %d, requests %d, admitted %d, released %d", s.Refused, s.Requests, g.admitted.Load(), g.release.Load())
	}

	// Without a Gate the page's own host is admitted, so the tracker runs.
	f.SetGate(nil)
	if resp := get(t, f, w.URL(w.Host(fetchtest.ScriptApp), "/p/2.html")); !strings.Contains(string(resp.Body), `data-tracked="1"`) {
		t.Error("the default Gate refused a request to the page's host")
	}
}

// TestOneRequestPerHost: a render never has two requests in flight to a
// host, even when pages of two hosts render at once.
func TestOneRequestPerHost(t *testing.T) {
	w := scriptWeb(t, fetchtest.Config{Latency: 15 * time.Millisecond})
	f := newFetcher(t, w, Options{Tabs: 2, CacheBytes: -1})
	app, shop := w.Host(fetchtest.ScriptApp), w.Host(fetchtest.Shop)
	var wg sync.WaitGroup
	for _, u := range [][]string{
		{w.URL(app, "/"), w.URL(app, "/p/2.html"), w.URL(app, "/p/3.html")},
		{w.URL(shop, "/c/0.html"), w.URL(shop, "/product/1.html"), w.URL(shop, "/product/3.html")},
	} {
		wg.Go(func() {
			for _, p := range u {
				if !get(t, f, p).Rendered {
					t.Errorf("%s not rendered", p)
				}
			}
		})
	}
	wg.Wait()
	mc := fetchtest.MaxConcurrency(w.Log())
	if mc[app] != 1 || mc[shop] != 1 {
		t.Errorf("requests in flight at once: %v; want 1 per host", mc)
	}
	if s := f.Stats(); s.Requests < 8 || s.MaxTabs != 2 {
		t.Errorf("%+v", s)
	}
}

// TestDeadline: a page whose script never ends, one whose request never
// ends and one that eats memory come back within the deadline, as
// fetched or with the DOM they had, and the browser goes on rendering.
func TestDeadline(t *testing.T) {
	w := scriptWeb(t, fetchtest.Config{})
	const timeout = 2 * time.Second
	f := newFetcher(t, w, Options{PageTimeout: timeout, MaxHeapMB: 64})
	app := w.Host(fetchtest.ScriptApp)
	for _, tc := range []struct {
		path     string
		rendered bool
		text     string
	}{
		{fetchtest.AppLoop, false, "This page never finishes."},
		{fetchtest.AppHang, true, "Written by the script."},
		{fetchtest.AppHeavy, false, "Memory."},
	} {
		start := time.Now()
		resp := get(t, f, w.URL(app, tc.path))
		d := time.Since(start)
		if d > timeout+time.Second {
			t.Errorf("%s: %v, deadline %v", tc.path, d, timeout)
		}
		t.Logf("%s: back in %v, rendered %v", tc.path, d.Round(time.Millisecond), resp.Rendered)
		if resp.Rendered != tc.rendered || !strings.Contains(string(resp.Body), tc.text) || resp.Status != 200 {
			t.Errorf("%s: rendered %v, status %d, body %.200q", tc.path, resp.Rendered, resp.Status, resp.Body)
		}
	}
	s := f.Stats()
	if s.Timeouts != 2 || s.Crashes != 1 || s.Fallbacks != 2 {
		t.Errorf("timeouts %d, crashes %d, fallbacks %d; want 2, 1, 2", s.Timeouts, s.Crashes, s.Fallbacks)
	}
	if resp := get(t, f, w.URL(app, "/p/1.html")); !resp.Rendered {
		t.Error("no render after the timeouts")
	}
}

// TestPoolBound: with more pages than tabs, the browser never has more
// than Tabs tabs of pages open, counted by the browser itself.
func TestPoolBound(t *testing.T) {
	w := scriptWeb(t, fetchtest.Config{Latency: 5 * time.Millisecond})
	const tabs = 2
	f := newFetcher(t, w, Options{Tabs: tabs, Quiet: 100 * time.Millisecond})
	b, err := f.current()
	if err != nil {
		t.Fatal(err)
	}
	infos, err := chromedp.Targets(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	initial := map[string]bool{}
	for _, ti := range infos {
		initial[string(ti.TargetID)] = true
	}
	stop := make(chan struct{})
	var most, samples atomic.Int64
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			infos, err := chromedp.Targets(b.ctx)
			if err != nil {
				continue
			}
			n := int64(0)
			for _, ti := range infos {
				if ti.Type == "page" && !initial[string(ti.TargetID)] {
					n++
				}
			}
			samples.Add(1)
			if n > most.Load() {
				most.Store(n)
			}
		}
	})
	var wg sync.WaitGroup
	for j := range 6 {
		wg.Go(func() { get(t, f, w.URL(w.Host(fetchtest.ScriptApp), "/p/"+string(rune('1'+j))+".html")) })
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	s := f.Stats()
	if s.MaxTabs != tabs || most.Load() > tabs || most.Load() == 0 || samples.Load() < 5 {
		t.Errorf("Stats.MaxTabs %d, browser's most page targets %d in %d samples; want %d", s.MaxTabs, most.Load(), samples.Load(), tabs)
	}
	if s.Rendered != 6 {
		t.Errorf("rendered %d of 6", s.Rendered)
	}
}

// TestCache: the scripts and styles the pages of a site share are asked
// for once.
func TestCache(t *testing.T) {
	w := scriptWeb(t, fetchtest.Config{})
	pages := []string{"/", "/p/2.html", "/p/4.html", "/p/6.html"}
	count := func(cacheBytes int64) (shared, total int, s Stats) {
		w.ResetLog()
		f := newFetcher(t, w, Options{CacheBytes: cacheBytes})
		for _, p := range pages {
			if !get(t, f, w.URL(w.Host(fetchtest.ScriptApp), p)).Rendered {
				t.Fatalf("%s not rendered", p)
			}
		}
		for _, r := range w.Log() {
			if r.Path == "/app.js" || r.Path == "/style.css" || r.Path == "/private/track.js" {
				shared++
			}
		}
		return shared, len(w.Log()), f.Stats()
	}
	shared, withCache, s := count(0)
	if shared != 3 || s.CacheHits != int64(3*(len(pages)-1)) {
		t.Errorf("with the cache: the three shared files asked %d times, %d cache hits", shared, s.CacheHits)
	}
	shared, without, _ := count(-1)
	if shared != 3*len(pages) {
		t.Errorf("without the cache: the three shared files asked %d times, want %d", shared, 3*len(pages))
	}
	t.Logf("%d pages: %d requests with the cache, %d without", len(pages), withCache, without)
}

// TestNoEscape: a request of the browser that interception does not
// answer fails inside the browser (proxy and resolver rules), it never
// reaches a server.
func TestNoEscape(t *testing.T) {
	w := scriptWeb(t, fetchtest.Config{})
	f := newFetcher(t, w, Options{})
	b, err := f.current()
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	ctx, c2 := context.WithTimeout(tctx, 10*time.Second)
	defer c2()
	for _, u := range []string{w.URL(w.Host(fetchtest.ScriptApp), "/"), "http://" + w.Addr() + "/"} {
		err := chromedp.Do(ctx, chromedp.Navigate(u))
		if err == nil {
			t.Errorf("navigating to %s without interception worked", u)
		}
	}
	if n := len(w.Log()); n != 0 {
		t.Errorf("the web saw %d requests: %+v", n, w.Log())
	}
}

func TestNew(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, ErrNoStatic) {
		t.Errorf("New(nil): %v", err)
	}
	if _, err := New(&Options{Static: fetch.Static{}, Browser: "/nonexistent/chromium"}); !errors.Is(err, ErrNoBrowser) {
		t.Errorf("New with a missing binary: %v", err)
	}
	var se *StartError
	if _, err := New(&Options{Static: fetch.Static{}, Browser: "/bin/false", StartTimeout: 5 * time.Second}); !errors.As(err, &se) {
		t.Errorf("New with a binary that is no browser: %v", err)
	}
}

// TestClose: Close cuts a render short, returns promptly and removes the
// browser's profile; Fetch then fails with ErrClosed.
func TestClose(t *testing.T) {
	needBrowser(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	w := scriptWeb(t, fetchtest.Config{})
	st := fetch.NewHTTP(fetchertest.WebOptions(w))
	defer st.Close()
	f, err := New(&Options{Static: st, PageTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) == 0 {
		t.Fatal("no browser profile in TMPDIR")
	}
	done := make(chan *fetch.Response, 1)
	go func() {
		u, _ := url.Parse(w.URL(w.Host(fetchtest.ScriptApp), fetchtest.AppLoop))
		resp, _ := f.Fetch(context.Background(), &fetch.Request{URL: u})
		done <- resp
	}()
	time.Sleep(time.Second)
	start := time.Now()
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if resp := <-done; resp == nil || resp.Rendered || resp.Status != 200 {
		t.Errorf("page rendering at Close: %+v; want it as fetched", resp)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
	u, _ := url.Parse(w.URL(w.Host(fetchtest.ScriptApp), "/"))
	if _, err := f.Fetch(context.Background(), &fetch.Request{URL: u}); !errors.Is(err, ErrClosed) {
		t.Errorf("Fetch after Close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
