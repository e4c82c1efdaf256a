package fetchtest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// get fetches u with the web's client (redirects followed, gzip transparent).
func get(t testing.TB, w *fetchtest.Web, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := w.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", u, err)
	}
	return resp, body
}

// raw fetches u without following redirects and without transparent gzip.
func raw(t testing.TB, w *fetchtest.Web, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	tr := &http.Transport{DialContext: w.DialContext, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestDeterministic(t *testing.T) {
	cfg := fetchtest.Config{Seed: 42, Hosts: 10, MeanPages: 10, ChangePeriods: []time.Duration{0, time.Hour},
		Clock: func() time.Time { return time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC) }}
	a, b := fetchtest.NewWeb(cfg), fetchtest.NewWeb(cfg)
	defer a.Close()
	defer b.Close()
	cfg.Seed = 43
	c := fetchtest.NewWeb(cfg)
	defer c.Close()

	norm := func(w *fetchtest.Web, s string) string { return strings.ReplaceAll(s, ":"+w.Port(), ":PORT") }
	normAll := func(w *fetchtest.Web, ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = norm(w, s)
		}
		return out
	}
	pa, pb := normAll(a, a.Pages()), normAll(b, b.Pages())
	if !slices.Equal(pa, pb) {
		t.Fatalf("same seed, different page sets: %d vs %d pages", len(pa), len(pb))
	}
	if slices.Equal(pa, normAll(c, c.Pages())) {
		t.Fatal("seeds 42 and 43 generated the same page set")
	}
	differ := 0
	for _, u := range a.Pages() {
		ub := strings.Replace(u, ":"+a.Port(), ":"+b.Port(), 1)
		_, ba := get(t, a, u)
		_, bb := get(t, b, ub)
		if norm(a, string(ba)) != norm(b, string(bb)) {
			t.Fatalf("same seed, %s differs", u)
		}
		if !slices.Equal(normAll(a, a.Links(u)), normAll(b, b.Links(ub))) {
			t.Fatalf("same seed, links of %s differ", u)
		}
		uc := strings.Replace(u, ":"+a.Port(), ":"+c.Port(), 1)
		if resp, bc := get(t, c, uc); resp.StatusCode != 200 || norm(c, string(bc)) != norm(a, string(ba)) {
			differ++
		}
	}
	if differ < len(pa)/2 {
		t.Errorf("another seed changed only %d of %d pages", differ, len(pa))
	}
	if !slices.Equal(normAll(a, a.Reachable("crawlkit")), normAll(b, b.Reachable("crawlkit"))) {
		t.Error("same seed, different Reachable")
	}
}

// extractLinks parses HTML and resolves every <a href> against the page's
// base (its URL or its first <base href>) the way the ground truth promises:
// fragment dropped, host lower-cased.
func extractLinks(t *testing.T, base string, body []byte) []string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "base" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					ref, err := url.Parse(a.Val)
					if err != nil {
						t.Fatalf("%s: bad base %q", base, a.Val)
					}
					b = b.ResolveReference(ref)
				}
			}
			break
		}
	}
	var out []string
	seen := map[string]bool{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.Data != "a" {
			continue
		}
		for _, a := range n.Attr {
			if a.Key != "href" {
				continue
			}
			r, err := url.Parse(a.Val)
			if err != nil {
				t.Errorf("%s: bad href %q", base, a.Val)
				continue
			}
			u := b.ResolveReference(r)
			if u.Scheme != "http" && u.Scheme != "https" {
				continue // mailto:, javascript:, tel:
			}
			u.Fragment, u.RawFragment = "", ""
			u.Host = strings.ToLower(u.Host)
			if !seen[u.String()] {
				seen[u.String()] = true
				out = append(out, u.String())
			}
		}
	}
	return out
}

// TestCrawlMatchesGroundTruth crawls the web as a careful crawler would
// (robots checked with Allowed, traps skipped, redirects followed by hand)
// and checks that the HTML really carries the links Links reports and that
// the pages fetched are exactly Reachable.
func TestCrawlMatchesGroundTruth(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 12})
	defer w.Close()
	const agent = "crawlkit"
	seen := map[string]bool{}
	queue := w.Seeds()
	for _, s := range queue {
		seen[s] = true
	}
	var got []string
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if w.IsTrap(u) || !w.Allowed(agent, u) {
			continue
		}
		resp, body := raw(t, w, u, "User-Agent", agent+"/1.0")
		var next []string
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc, err := resp.Location()
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			loc.Host = strings.ToLower(loc.Host)
			next = []string{loc.String()}
			if want := w.Links(u); !slices.Equal(want, next) {
				t.Errorf("redirect %s: Location %v, Links %v", u, next, want)
			}
		case resp.StatusCode == 200:
			got = append(got, u)
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				next = extractLinks(t, u, body)
			}
			if want := w.Links(u); !slices.Equal(want, next) {
				t.Errorf("links of %s:\nhtml  %v\ntruth %v", u, next, want)
			}
		}
		for _, n := range next {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	slices.Sort(got)
	want := w.Reachable(agent)
	if !slices.Equal(got, want) {
		t.Fatalf("crawl fetched %d pages, Reachable has %d", len(got), len(want))
	}
	if v := w.RobotsViolations(agent); len(v) != 0 {
		t.Errorf("careful crawl has %d robots violations, first %+v", len(v), v[0])
	}
	// The crawl must have met every kind of page and link form.
	pages := w.Pages()
	if len(want) < len(pages)/2 || len(want) == len(pages) {
		t.Errorf("Reachable %d of %d pages: robots should cut some but not most", len(want), len(pages))
	}
}

func TestPagesHeavyTailed(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 300, MeanPages: 30, Mirrors: -1, NearDuplicates: -1})
	defer w.Close()
	var counts []int
	total := 0
	for _, h := range w.OrdinaryHosts() {
		n := len(w.PagesOf(h))
		counts = append(counts, n)
		total += n
	}
	slices.Sort(counts)
	median, top := counts[len(counts)/2], counts[len(counts)-1]
	mean := float64(total) / float64(len(counts))
	t.Logf("pages per host: median %d, mean %.1f, max %d, total %d", median, mean, top, total)
	if top < 8*median {
		t.Errorf("max %d not heavy-tailed against median %d", top, median)
	}
	if mean < 15 || mean > 45 {
		t.Errorf("mean pages per host %.1f, configured 30", mean)
	}
	if len(w.Pages()) != total+12 {
		t.Errorf("Pages has %d, hosts sum to %d + 12 charset pages", len(w.Pages()), total)
	}
}

func TestDialAndUnknownHost(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3})
	defer w.Close()
	_, err := w.DialContext(context.Background(), "tcp", "example.com:80")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("dial unknown host: %v, want DNSError not found", err)
	}
	conn, err := w.DialContext(context.Background(), "tcp", "H001.SIM.TEST.:1")
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// An unknown Host header through the right socket gets 421.
	req, _ := http.NewRequest("GET", "http://"+w.Addr()+"/", nil)
	req.Host = "nowhere.sim.test"
	resp, err := w.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("unknown host: %d, want 421", resp.StatusCode)
	}
	if resp, _ := get(t, w, w.URL("h000.sim.test", "/no/such/page.html")); resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	for _, h := range w.Hosts() {
		if !strings.HasSuffix(h, ".sim.test") {
			t.Errorf("host %s outside the domain", h)
		}
	}
}

func TestStatuses(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3, RetryAfter: 1500 * time.Millisecond}) // sent as "2"
	defer w.Close()
	st := w.Host(fetchtest.Statuses)
	for _, tc := range []struct {
		path       string
		status     int
		retryAfter string
	}{
		{"/404/x", 404, ""},
		{"/410/gone", 410, ""},
		{"/429/busy", 429, "2"},
		{"/500/x", 500, ""},
		{"/503/x", 503, "2"},
		{"/418/teapot", 418, ""},
		{"/200/x", 404, ""},
		{"/", 404, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			u := w.URL(st, tc.path)
			resp, _ := raw(t, w, u)
			if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter {
				t.Errorf("status %d Retry-After %q, want %d %q", resp.StatusCode, resp.Header.Get("Retry-After"), tc.status, tc.retryAfter)
			}
			if w.Status(u) != tc.status {
				t.Errorf("Status() = %d", w.Status(u))
			}
		})
	}
}

func TestRedirects(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 6})
	defer w.Close()
	rd := w.Host(fetchtest.Redirects)
	codes := map[int]bool{}
	relative, absolute := 0, 0
	for c := range 8 {
		u := w.URL(rd, "/chain/"+string(rune('0'+c))+"/0")
		hops := 0
		for w.Status(u) != 200 {
			resp, _ := raw(t, w, u)
			codes[resp.StatusCode] = true
			if resp.StatusCode < 300 || resp.StatusCode > 308 {
				t.Fatalf("%s: status %d in a chain", u, resp.StatusCode)
			}
			if strings.HasPrefix(resp.Header.Get("Location"), "/") {
				relative++
			} else {
				absolute++
			}
			loc, _ := resp.Location()
			u = loc.String()
			hops++
			if hops > 5 {
				t.Fatalf("chain %d longer than 5", c)
			}
		}
		if want := c%5 + 1; hops != want {
			t.Errorf("chain %d: %d hops, want %d", c, hops, want)
		}
		if !slices.Contains(w.Pages(), u) {
			t.Errorf("chain %d ends on %s, not a page", c, u)
		}
		// The client follows the chain to the page.
		if resp, _ := get(t, w, w.URL(rd, "/chain/"+string(rune('0'+c))+"/0")); resp.StatusCode != 200 || resp.Request.URL.String() != u {
			t.Errorf("client following chain %d ended at %s (%d)", c, resp.Request.URL, resp.StatusCode)
		}
	}
	for _, code := range []int{301, 302, 307, 308} {
		if !codes[code] {
			t.Errorf("no %d in the chains", code)
		}
	}
	if relative == 0 || absolute == 0 {
		t.Errorf("Locations: %d relative, %d absolute; want both", relative, absolute)
	}
	for _, loop := range []string{"/loop/0/0", "/loop/1/0"} {
		_, err := w.Client().Get(w.URL(rd, loop))
		if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
			t.Errorf("loop %s: %v, want too many redirects", loop, err)
		}
	}
	if got := w.Links(w.URL(rd, "/loop/1/0")); len(got) != 1 || got[0] != w.URL(rd, "/loop/1/0") {
		t.Errorf("self loop links %v", got)
	}
}

func TestTraps(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4})
	defer w.Close()
	pages := w.Pages()
	reach := w.Reachable("crawlkit")
	for _, p := range append(slices.Clone(pages), reach...) {
		if w.IsTrap(p) {
			t.Fatalf("trap URL %s among pages", p)
		}
	}
	if len(w.Traps()) != 3 {
		t.Fatalf("Traps() = %v", w.Traps())
	}

	t.Run("calendar", func(t *testing.T) {
		u := w.URL(w.Host(fetchtest.CalendarTrap), "/calendar/2026/01")
		seen := map[string]bool{}
		for range 40 { // 40 months forward, then still more
			resp, body := get(t, w, u)
			if resp.StatusCode != 200 || seen[u] {
				t.Fatalf("%s: %d (seen %v)", u, resp.StatusCode, seen[u])
			}
			seen[u] = true
			var next string
			for _, l := range extractLinks(t, u, body) {
				if strings.Count(l, "/") == 5 && l > u { // a month page after this one
					next = l
				}
			}
			if next == "" {
				t.Fatalf("%s has no next month", u)
			}
			u = next
		}
		if !strings.Contains(u, "/calendar/2029/05") {
			t.Errorf("after 40 months at %s", u)
		}
		if resp, _ := get(t, w, w.URL(w.Host(fetchtest.CalendarTrap), "/calendar/1999/12/14")); resp.StatusCode != 200 {
			t.Errorf("day page: %d", resp.StatusCode)
		}
	})
	t.Run("session", func(t *testing.T) {
		u := w.URL(w.Host(fetchtest.SessionTrap), "/item/3")
		_, b1 := get(t, w, u)
		_, b2 := get(t, w, u+"?sid=abc")
		l1, l2 := extractLinks(t, u, b1), extractLinks(t, u, b2)
		if len(l1) == 0 || !strings.Contains(l1[0], "sid=") {
			t.Fatalf("links without session id: %v", l1)
		}
		for _, l := range l1 {
			if slices.Contains(l2, l) {
				t.Errorf("link %s repeated across visits", l)
			}
		}
	})
	t.Run("deep", func(t *testing.T) {
		u := w.URL(w.Host(fetchtest.DeepTrap), "/d/")
		for depth := range 30 {
			resp, body := get(t, w, u)
			if resp.StatusCode != 200 {
				t.Fatalf("depth %d %s: %d", depth, u, resp.StatusCode)
			}
			links := extractLinks(t, u, body)
			u = links[depth%3] // a/, b/ or c/: one level deeper
		}
		if strings.Count(u, "/") < 30 {
			t.Errorf("not deep: %s", u)
		}
	})
}

func TestCharsets(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3})
	defer w.Close()
	for _, tc := range []struct {
		label string
		meta  string
		bytes []byte // bytes only this charset's encoding produces
	}{
		{fetchtest.Latin1, "iso-8859-1", nil},
		{fetchtest.Windows1252, "windows-1252", []byte{0x93, 0x94, 0x80, 0x97, 0x85}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			pages := w.PagesOf(w.Host(tc.label))
			if len(pages) != 6 {
				t.Fatalf("%d pages", len(pages))
			}
			var all []byte
			for j, u := range pages {
				resp, body := get(t, w, u)
				if ct := resp.Header.Get("Content-Type"); ct != "text/html" {
					t.Errorf("%s: Content-Type %q", u, ct)
				}
				if bytes.Contains(body, []byte(tc.meta)) != (j%2 == 0) {
					t.Errorf("%s: meta charset present=%v", u, !(j%2 == 0))
				}
				dec, err := decode(tc.label, body)
				if err != nil {
					t.Fatal(err)
				}
				if title := w.Title(u); !strings.Contains(dec, "<title>"+title+"</title>") {
					t.Errorf("%s: decoded page lacks title %q", u, title)
				}
				all = append(all, body...)
			}
			if !utf8Invalid(all) {
				t.Error("pages are valid UTF-8; want legacy bytes")
			}
			if tc.bytes != nil && !bytes.ContainsAny(all, string(tc.bytes)) {
				t.Errorf("no windows-1252-only bytes in %s", tc.label)
			}
		})
	}
}

func TestGzip(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3})
	defer w.Close()
	u := w.Seeds()[0]
	plainResp, plain := raw(t, w, u)
	zResp, z := raw(t, w, u, "Accept-Encoding", "gzip")
	if plainResp.Header.Get("Content-Encoding") != "" {
		t.Error("compressed without Accept-Encoding")
	}
	if zResp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatal("not compressed with Accept-Encoding: gzip")
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	unz, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unz, plain) {
		t.Fatalf("gzip body differs from identity body (err %v)", err)
	}
	if len(z) >= len(plain) {
		t.Errorf("gzip %d bytes, identity %d", len(z), len(plain))
	}
	if r, _ := raw(t, w, u, "Accept-Encoding", "gzip;q=0, br"); r.Header.Get("Content-Encoding") != "" {
		t.Error("compressed although gzip;q=0")
	}
}

func TestContentTypes(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 2, Hosts: 10, MeanPages: 20})
	defer w.Close()
	magic := map[string][]byte{
		"application/pdf":          []byte("%PDF-"),
		"image/png":                []byte("\x89PNG\r\n\x1a\n"),
		"application/json":         []byte("{"),
		"text/html; charset=utf-8": []byte("<!DOCTYPE html>"),
	}
	seen := map[string]int{}
	for _, u := range w.Pages() {
		if strings.Contains(u, "latin1.") || strings.Contains(u, "cp1252.") {
			continue
		}
		resp, body := get(t, w, u)
		ct := resp.Header.Get("Content-Type")
		m, ok := magic[ct]
		if !ok || !bytes.HasPrefix(body, m) {
			t.Errorf("%s: Content-Type %q, body starts %q", u, ct, body[:min(len(body), 10)])
		}
		seen[ct]++
	}
	for ct := range magic {
		if seen[ct] == 0 {
			t.Errorf("no %s resource", ct)
		}
	}
}

func TestLatency(t *testing.T) {
	slow := "h001.sim.test"
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3, Latency: 5 * time.Millisecond,
		HostLatency: map[string]time.Duration{slow: 60 * time.Millisecond}})
	defer w.Close()
	for _, tc := range []struct {
		host   string
		lo, hi time.Duration
	}{
		{slow, 60 * time.Millisecond, 2 * time.Second},
		{"h000.sim.test", 5 * time.Millisecond, 55 * time.Millisecond},
	} {
		w.ResetLog()
		t0 := time.Now()
		get(t, w, w.URL(tc.host, "/robots.txt"))
		if d := time.Since(t0); d < tc.lo || d > tc.hi {
			t.Errorf("%s: took %v, want [%v, %v]", tc.host, d, tc.lo, tc.hi)
		}
		if l := w.Log(); len(l) != 1 || l[0].End.Sub(l[0].Start) < tc.lo {
			t.Errorf("%s: log %+v", tc.host, l)
		}
	}
}

func TestImpoliteClientCaught(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3, Latency: 40 * time.Millisecond})
	defer w.Close()
	host := "h000.sim.test"
	pages := w.PagesOf(host)

	// Polite: one request at a time with a pause.
	for _, u := range pages[:2] {
		get(t, w, u)
		time.Sleep(20 * time.Millisecond)
	}
	log := w.Log()
	if c := fetchtest.MaxConcurrency(log)[host]; c != 1 {
		t.Errorf("polite client: concurrency %d", c)
	}
	if g := fetchtest.MinGap(log)[host]; g < 20*time.Millisecond {
		t.Errorf("polite client: gap %v", g)
	}

	// Impolite: two requests at once to the same host.
	w.ResetLog()
	var wg sync.WaitGroup
	for _, u := range pages[:2] {
		wg.Go(func() { get(t, w, u) })
	}
	wg.Wait()
	log = w.Log()
	if c := fetchtest.MaxConcurrency(log)[host]; c != 2 {
		t.Errorf("impolite client: concurrency %d, want 2", c)
	}
	if g := fetchtest.MinGap(log)[host]; g >= 0 {
		t.Errorf("impolite client: gap %v, want negative (overlap)", g)
	}
	if log[0].ConnID == log[1].ConnID {
		t.Error("concurrent requests on one connection")
	}
	for _, r := range log {
		if r.Host != host || r.Status != 200 || r.Bytes == 0 || r.Method != "GET" || !r.End.After(r.Start) {
			t.Errorf("log entry %+v", r)
		}
	}
}

func TestRobotsViolationCaught(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 9})
	defer w.Close()
	get(t, w, w.URL("h001.sim.test", "/robots.txt"), "User-Agent", "crawlkit/1.0")
	get(t, w, w.URL("h001.sim.test", "/private/secret.html"), "User-Agent", "crawlkit/1.0")
	get(t, w, w.URL("h001.sim.test", "/"), "User-Agent", "crawlkit/1.0")
	get(t, w, w.URL("h006.sim.test", "/"), "User-Agent", "crawlkit/1.0")       // 5xx robots: all forbidden
	get(t, w, w.URL("h007.sim.test", "/robots.txt"), "User-Agent", "crawlkit") // via two redirects
	v := w.RobotsViolations("crawlkit")
	var paths []string
	for _, r := range v {
		paths = append(paths, r.Host+r.Path)
	}
	want := []string{"h001.sim.test/private/secret.html", "h006.sim.test/"}
	if !slices.Equal(paths, want) {
		t.Errorf("violations %v, want %v", paths, want)
	}
	if len(w.Log()) != 7 {
		t.Errorf("log has %d entries, want 7", len(w.Log()))
	}
	if ua := v[0].UserAgent; ua != "crawlkit/1.0" {
		t.Errorf("user agent %q", ua)
	}
}

func TestRetryThenSucceed(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1})
	defer w.Close()
	u := w.URL(w.Host(fetchtest.Statuses), "/retry/2/feed")
	for i, want := range []int{503, 503, 200, 200} {
		if s := w.Status(u); s != want {
			t.Errorf("before request %d: Status %d, want %d", i, s, want)
		}
		resp, _ := raw(t, w, u)
		if resp.StatusCode != want {
			t.Errorf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
		if ra := resp.Header.Get("Retry-After"); (ra != "") != (want == 503) {
			t.Errorf("request %d: Retry-After %q", i, ra)
		}
	}
	if resp, _ := raw(t, w, w.URL(w.Host(fetchtest.Statuses), "/retry/1/other")); resp.StatusCode != 503 {
		t.Error("retry counters are not per path")
	}
}

// TestBusyRobots: with BusyRobots 3, hosts h002, h005, h008 ... answer
// their first robots.txt request 503 with Retry-After when their variant
// is a file (h005's is 404 and stays so), and the file after that;
// other hosts are not touched, and the ground truth is the file's.
func TestBusyRobots(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 9, BusyRobots: 3})
	defer w.Close()
	for _, tc := range []struct {
		host string
		want []int
	}{
		{"h000.sim.test", []int{200, 200}},
		{"h002.sim.test", []int{503, 200, 200}},
		{"h005.sim.test", []int{404, 404}},
		{"h003.sim.test", []int{200}},
		{"h006.sim.test", []int{500}},
		{"h008.sim.test", []int{503, 200}},
	} {
		for i, want := range tc.want {
			u := w.URL(tc.host, "/robots.txt")
			if s := w.Status(u); s != want {
				t.Errorf("%s, before request %d: Status %d, want %d", tc.host, i, s, want)
			}
			resp, body := raw(t, w, u)
			if resp.StatusCode != want {
				t.Errorf("%s, request %d: %d, want %d", tc.host, i, resp.StatusCode, want)
			}
			if ra := resp.Header.Get("Retry-After"); (ra == "1") != (want == 503) {
				t.Errorf("%s, request %d: Retry-After %q", tc.host, i, ra)
			}
			if want == 200 && !strings.Contains(string(body), "User-agent") {
				t.Errorf("%s, request %d: no rules in %q", tc.host, i, body)
			}
		}
	}
	if st, _ := w.Robots("h002.sim.test"); st != 200 {
		t.Errorf("ground truth of h002's robots.txt: status %d, want the file's 200", st)
	}
}

func TestMethodsAndLogFields(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2})
	defer w.Close()
	page := w.URL("h000.sim.test", "/search?b=2&a=1")
	for _, tc := range []struct {
		method string
		url    string
		status int
		body   bool
	}{
		{"GET", w.Seeds()[0], 200, true},
		{"HEAD", w.Seeds()[0], 200, false},
		{"POST", w.Seeds()[0], 405, true},
		{"GET", page, 404, true},
	} {
		req, _ := http.NewRequest(tc.method, tc.url, nil)
		req.Header.Set("User-Agent", "tester/"+tc.method)
		resp, err := w.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (len(b) > 0) != tc.body {
			t.Errorf("%s %s: %d with %d bytes", tc.method, tc.url, resp.StatusCode, len(b))
		}
	}
	log := w.Log()
	if len(log) != 4 {
		t.Fatalf("log has %d entries", len(log))
	}
	for i, want := range []fetchtest.Request{
		{Host: "h000.sim.test", Method: "GET", Path: "/", UserAgent: "tester/GET", Status: 200},
		{Host: "h000.sim.test", Method: "HEAD", Path: "/", UserAgent: "tester/HEAD", Status: 200},
		{Host: "h000.sim.test", Method: "POST", Path: "/", UserAgent: "tester/POST", Status: 405},
		{Host: "h000.sim.test", Method: "GET", Path: "/search?b=2&a=1", UserAgent: "tester/GET", Status: 404},
	} {
		got := log[i]
		if got.Host != want.Host || got.Method != want.Method || got.Path != want.Path ||
			got.UserAgent != want.UserAgent || got.Status != want.Status || got.ConnID == 0 {
			t.Errorf("log[%d] = %+v, want %+v", i, got, want)
		}
	}
	if w.Status("http://example.com/") != 0 || w.Status(w.URL("nowhere.sim.test", "/")) != 0 {
		t.Error("Status of a URL outside the web is not 0")
	}
	// Query parameters in another order reach the same page.
	found := false
	for _, p := range w.Pages() {
		if i := strings.Index(p, "?"); i > 0 {
			q, _ := url.ParseQuery(p[i+1:])
			var parts []string
			for k := range q {
				parts = append(parts, k+"="+q.Get(k))
			}
			slices.Sort(parts)
			slices.Reverse(parts)
			alt := p[:i+1] + strings.Join(parts, "&")
			if alt == p || w.Status(alt) != 200 {
				t.Errorf("%s: reordered query %s not served", p, alt)
			}
			if resp, _ := get(t, w, alt); resp.StatusCode != 200 {
				t.Errorf("GET %s: %d", alt, resp.StatusCode)
			}
			found = true
			break
		}
	}
	if !found {
		t.Error("no page with a query string")
	}
}

// TestProxyForm uses the server as an HTTP proxy (absolute-form request
// URIs), which lets any HTTP client reach the web without DNS.
func TestProxyForm(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2})
	defer w.Close()
	proxy, _ := url.Parse("http://" + w.Addr())
	tr := &http.Transport{Proxy: http.ProxyURL(proxy)}
	defer tr.CloseIdleConnections()
	u := w.URL("h001.sim.test", "/robots.txt")
	resp, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, want := w.Robots("h001.sim.test"); resp.StatusCode != 200 || string(body) != want {
		t.Errorf("through the proxy: %d %q", resp.StatusCode, body)
	}
	if l := w.Log(); len(l) != 1 || l[0].Host != "h001.sim.test" || l[0].Path != "/robots.txt" {
		t.Errorf("log %+v", l)
	}
}

func TestSeedsReachEveryHost(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 11, Hosts: 40})
	defer w.Close()
	reach := w.Reachable("crawlkit")
	for _, h := range w.OrdinaryHosts() {
		home := w.URL(h, "/")
		_, found := slices.BinarySearch(reach, home)
		if want := w.RobotsVariant(h) != "5xx"; found != want {
			t.Errorf("%s (robots %s): home reachable %v", h, w.RobotsVariant(h), found)
		}
	}
	for _, s := range w.Seeds() {
		if w.RobotsVariant(strings.Split(strings.TrimPrefix(s, "http://"), ":")[0]) != "plain" {
			t.Errorf("seed %s is not on a plain host", s)
		}
	}
}
