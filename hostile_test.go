package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// hostileExtras serves, on virtual hosts of one more loopback server, the
// attacks fetchtest's Hostile host lacks: a page of 200,000 links, tags
// nested 100,000 deep, a 50-hop redirect chain, a redirect loop, a
// connection reset mid-body and a 10 MB robots.txt. A second listener
// accepts connections and never answers.
type hostileExtras struct {
	srv    *httptest.Server
	silent net.Listener
	port   string // port of srv
	sport  string // port of silent

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
	reqs  sync.Map // "host path" → *atomic.Int64
}

func newHostileExtras(t *testing.T) *hostileExtras {
	t.Helper()
	h := &hostileExtras{}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	_, h.port, _ = net.SplitHostPort(h.srv.Listener.Addr().String())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.silent = ln
	_, h.sport, _ = net.SplitHostPort(ln.Addr().String())
	h.wg.Add(1)
	go func() { // accept and never answer
		defer h.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *hostileExtras) Close() {
	h.silent.Close()
	h.wg.Wait()
	h.mu.Lock()
	for _, c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.srv.CloseClientConnections()
	h.srv.Close()
}

// url returns the URL of path on virtual host label (under x.test).
func (h *hostileExtras) url(label, path string) string {
	if label == "silent" {
		return "http://silent.x.test:" + h.sport + path
	}
	return "http://" + label + ".x.test:" + h.port + path
}

func (h *hostileExtras) count(host, path string) int64 {
	v, ok := h.reqs.Load(host + " " + path)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func (h *hostileExtras) serve(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	label := strings.TrimSuffix(host, ".x.test")
	v, _ := h.reqs.LoadOrStore(label+" "+r.URL.Path, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	if r.URL.Path == "/robots.txt" {
		if label == "bigrobots" { // 10 MB of rules, the last one disallowing /secret
			w.Header().Set("Content-Type", "text/plain")
			line := "User-agent: *\nDisallow: /nothing-here\n"
			for n := 0; n < 10<<20; n += len(line) {
				if _, err := w.Write([]byte(line)); err != nil {
					return
				}
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /secret\n")
			return
		}
		http.NotFound(w, r)
		return
	}
	html := func(body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><html><head><title>"+label+"</title></head><body>"+body+"</body></html>")
	}
	switch {
	case label == "bigrobots": // a page of its own at every path
		html("<p>a page behind a 10 MB robots.txt: " + r.URL.Path + "</p>")
	case label == "links" && r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(linkPage())
	case label == "links": // the linked pages exist
		html("<p>link target " + r.URL.Path + "</p>")
	case label == "nest":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><html><head><title>nest</title></head><body>")
		fmt.Fprint(w, strings.Repeat("<div><span>", 50000))
		fmt.Fprint(w, `<p>deep down</p><a href="/bottom">bottom</a>`)
		fmt.Fprint(w, strings.Repeat("</span></div>", 50000))
		fmt.Fprint(w, "</body></html>")
	case label == "chain" && strings.HasPrefix(r.URL.Path, "/hop/"):
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n >= 50 {
			html("<p>end of the chain</p>")
			return
		}
		http.Redirect(w, r, "/hop/"+strconv.Itoa(n+1), http.StatusFound)
	case label == "loop" && r.URL.Path == "/a":
		http.Redirect(w, r, "/b", http.StatusMovedPermanently)
	case label == "loop" && r.URL.Path == "/b":
		http.Redirect(w, r, h.url("loop", "/a"), http.StatusFound)
	case label == "reset":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(200)
		fmt.Fprint(w, "<html><body><p>half a page")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with RST
		}
		conn.Close()
	case label == "bottom" || r.URL.Path == "/bottom":
		html("<p>bottom</p>")
	default:
		http.NotFound(w, r)
	}
}

// linkPage is a page of 200,000 links (about 5 MB), built once.
var linkPage = sync.OnceValue(func() []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>links</title></head><body>")
	for i := range 200000 {
		b.WriteString(`<a href="/l/`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`">x</a>`)
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
})

// heapSampler records the largest HeapInuse seen while it runs.
type heapSampler struct {
	max  atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap(every time.Duration) *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > s.max.Load() {
				s.max.Store(ms.HeapInuse)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) Stop() uint64 { close(s.stop); <-s.done; return s.max.Load() }

// TestCrawlUnderHostileHost crawls a small web whose first home page links
// every resource of fetchtest's Hostile host, plus seeds on hostileExtras.
// The crawl must end within a bound, fetch every ordinary page, end every
// hostile URL in a counted outcome of the right kind, keep its heap under
// a bound, and leave no goroutine behind (TestMain runs goleak).
func TestCrawlUnderHostileHost(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 21, Hosts: 6, MeanPages: 8, LinkHostile: true,
		ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	ex := newHostileExtras(t)
	defer ex.Close()

	fetcher := fetch.NewHTTP(&fetch.Options{
		Resolver:         webResolver(),
		AllowPrivate:     true,
		Timeout:          3 * time.Second,
		FirstByteTimeout: 1 * time.Second,
		ConnectTimeout:   1 * time.Second,
		MinRate:          1024,
		RateWindow:       500 * time.Millisecond,
		MaxBodySize:      4 << 20,
	})
	extraSeeds := []string{
		ex.url("bigrobots", "/"), ex.url("bigrobots", "/secret"),
		ex.url("links", "/"), ex.url("nest", "/"), ex.url("chain", "/hop/0"),
		ex.url("loop", "/a"), ex.url("reset", "/"), ex.url("silent", "/"),
	}
	var (
		mu      sync.Mutex
		errKind = map[string]string{} // URL → fetch kind of its final error
		pages   = map[string]bool{}
	)
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Seeds = append(web.Seeds(), extraSeeds...)
		cfg.Fetcher, cfg.AllowPrivate = fetcher, false
		cfg.MaxPagesPerHost = 60
		cfg.MaxRetries = 1
		cfg.DelayFactor = 1
		cfg.MaxDelay = 200 * time.Millisecond
		cfg.OnError = func(u string, err error) {
			k := fetch.KindOther
			var fe *fetch.Error
			if errors.As(err, &fe) {
				k = fe.Kind
			}
			mu.Lock()
			errKind[u] = k.String()
			mu.Unlock()
		}
		cfg.OnPage = func(p *Page) {
			mu.Lock()
			pages[p.URL] = true
			mu.Unlock()
		}
	})
	heap := sampleHeap(20 * time.Millisecond)
	const bound = 25 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	start := time.Now()
	s, err := c.Run(ctx)
	elapsed := time.Since(start)
	maxHeap := heap.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("crawl took %v, peak heap in use %d MiB\n%s", elapsed.Round(time.Millisecond), maxHeap>>20, s.Summary())
	if ctx.Err() != nil {
		t.Fatalf("the crawl did not finish within %v", bound)
	}

	// The heap bound: 16 workers × 4 MiB MaxBodySize, the 6 MB link page
	// and its parse, the test server's own buffers (an 11 MiB header
	// among them): 256 MiB is far above a healthy crawl and far below
	// what a 64 MiB body, a 128 MiB bomb or a 10 MB robots.txt read whole
	// per worker would cost.
	const heapBound = 256 << 20
	if maxHeap > heapBound {
		t.Errorf("peak heap in use %d MiB > bound %d MiB", maxHeap>>20, heapBound>>20)
	}

	// The ordinary hosts are crawled completely despite the hostile ones.
	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d reachable pages never requested, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}

	// Every hostile URL ends in the outcome of its kind.
	hostile := func(p string) string { return web.URL(web.Host(fetchtest.Hostile), p) }
	wantErr := map[string]string{
		hostile("/bomb"):       fetch.KindTooLarge.String(),
		hostile("/big-header"): fetch.KindTooLarge.String(),
		hostile("/bad-gzip"):   fetch.KindProtocol.String(),
		hostile("/slow"):       fetch.KindTimeout.String(),
		hostile("/stall"):      fetch.KindTimeout.String(),
		ex.url("reset", "/"):   fetch.KindReset.String(),
	}
	mu.Lock()
	defer mu.Unlock()
	for u, want := range wantErr {
		if got := errKind[u]; got != want {
			t.Errorf("%s: final error kind %q, want %q (errors: %v)", u, got, want, errKind)
		}
	}
	for _, k := range []fetch.Kind{fetch.KindTooLarge, fetch.KindProtocol, fetch.KindTimeout, fetch.KindReset} {
		if s.Errors[k.String()] == 0 {
			t.Errorf("no fetch error counted under %q: %v", k, s.Errors)
		}
	}
	// Pages that are merely odd are fetched: a huge body is cut at
	// MaxBodySize, invalid UTF-8 is replaced, nested tags and 200,000
	// links parse within the parser's caps.
	// /huge and /huge-chunked cut at MaxBodySize have the same text: one
	// of them is a page, the other duplicate content.
	if pages[hostile("/huge")] == pages[hostile("/huge-chunked")] {
		t.Errorf("/huge fetched %v, /huge-chunked fetched %v: want exactly one page (the other a duplicate); errors %q, %q",
			pages[hostile("/huge")], pages[hostile("/huge-chunked")], errKind[hostile("/huge")], errKind[hostile("/huge-chunked")])
	}
	if s.Outcomes[DuplicateContent] == 0 {
		t.Errorf("no duplicate content counted")
	}
	// A PNG labelled text/html is fetched and parsed (or refused by the
	// parser), never a fetch error.
	if k, ok := errKind[hostile("/mislabeled")]; ok {
		t.Errorf("/mislabeled ended in a %q fetch error", k)
	}
	// The server that accepts and never answers times out on robots.txt;
	// an unreachable robots.txt means "disallow all" (RFC 9309 §2.3.1.4),
	// so its page is never asked for, and it ends as a fetch error of the
	// kind that made robots.txt unreachable, not as a robots denial.
	if pages[ex.url("silent", "/")] {
		t.Errorf("the silent host's page was fetched")
	}
	if k := errKind[ex.url("silent", "/")]; k != fetch.KindTimeout.String() {
		t.Errorf("the silent host's page ended with error kind %q, want timeout", k)
	}
	for _, u := range []string{hostile("/bad-utf8"), hostile("/long-url"),
		ex.url("links", "/"), ex.url("nest", "/"), ex.url("bigrobots", "/")} {
		if !pages[u] {
			t.Errorf("%s was not fetched as a page (error kind %q)", u, errKind[u])
		}
	}
	if s.FilteredBy["too long"]+s.FilteredBy["length"] == 0 && len(s.FilteredBy) > 0 {
		t.Logf("filtered by: %v", s.FilteredBy)
	}
	// The 50-hop chain is followed hop by hop (each a Redirected outcome)
	// to its end; the loop ends at the first URL seen twice.
	if !pages[ex.url("chain", "/hop/50")] {
		t.Errorf("the end of the 50-hop chain was not fetched")
	}
	if s.Outcomes[Redirected] < 50+2 {
		t.Errorf("%d redirects counted, want ≥ 52 (50-hop chain and a 2-step loop)", s.Outcomes[Redirected])
	}
	for _, p := range []string{"/a", "/b"} {
		if n := ex.count("loop", p); n != 1 {
			t.Errorf("loop %s requested %d times, want 1", p, n)
		}
	}
	// The 10 MB robots.txt is read only up to robots.MaxSize: its last
	// rule (Disallow /secret, after 10 MB) is not seen, so /secret is
	// fetched rather than denied; what matters is that robots.txt was
	// fetched once and the host crawled.
	if n := ex.count("bigrobots", "/robots.txt"); n != 1 {
		t.Errorf("the 10 MB robots.txt was requested %d times, want 1", n)
	}
	// The link page's links are capped by the host budget.
	if n := s.FilteredBy["host budget"]; n == 0 {
		t.Errorf("200,000 links did not hit the host budget: %v", s.FilteredBy)
	}
	checkFetchErrorAccounting(t, s)
}

// checkFetchErrorAccounting checks that every fetch error is counted once
// as an outcome and once under its kind, and that every queued URL
// reached exactly one outcome.
func checkFetchErrorAccounting(t *testing.T, s Stats) {
	t.Helper()
	var byKind uint64
	for _, n := range s.Errors {
		byKind += n
	}
	if s.Outcomes[FetchError] != byKind {
		t.Errorf("fetch error outcomes %d, errors by kind %d", s.Outcomes[FetchError], byKind)
	}
	if got, want := s.Finished(), s.Outcomes[Queued]; got != want {
		t.Errorf("finished %d URLs, queued %d", got, want)
	}
}
