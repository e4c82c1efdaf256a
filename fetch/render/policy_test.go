package render

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func pageOf(raw, body string) (*fetch.Request, *fetch.Response) {
	u, _ := url.Parse(raw)
	return &fetch.Request{URL: u}, &fetch.Response{URL: u, Status: 200, ContentType: "text/html", Body: []byte(body)}
}

func TestPolicy(t *testing.T) {
	shell := `<html><head><title>App</title><script src="/app.js"></script></head><body><div id="root">Loading…</div></body></html>`
	article := `<html><head><title>News</title><script>var a=1</script></head><body><p>` + strings.Repeat("Some words of an article. ", 20) + `</p></body></html>`
	plain := `<html><body><p>Hello.</p></body></html>`
	for _, tc := range []struct {
		name   string
		policy Policy
		url    string
		body   string
		want   bool
	}{
		{"always", Always, "http://a.test/", plain, true},
		{"never", Never, "http://a.test/", shell, false},
		{"hosts exact", Hosts("A.test:8080"), "http://a.test/x", plain, true},
		{"hosts other", Hosts("a.test"), "http://b.a.test/x", plain, false},
		{"hosts suffix", Hosts(".a.test"), "http://b.a.test/x", plain, true},
		{"hosts suffix itself", Hosts(".a.test"), "http://A.TEST./x", plain, true},
		{"hosts suffix not a label", Hosts(".a.test"), "http://ba.test/x", plain, false},
		{"pattern", Pattern(regexp.MustCompile(`/app/`)), "http://a.test/app/1", plain, true},
		{"pattern miss", Pattern(regexp.MustCompile(`/app/`)), "http://a.test/blog/1", plain, false},
		{"func", PolicyFunc(func(r *fetch.Request, _ *fetch.Response) bool { return r.URL.Query().Has("js") }), "http://a.test/?js", plain, true},
		{"adaptive shell", Adaptive{}, "http://a.test/", shell, true},
		{"adaptive article with a script", Adaptive{}, "http://a.test/", article, false},
		{"adaptive no script", Adaptive{}, "http://a.test/", plain, false},
		{"adaptive two scripts needed", Adaptive{MinScripts: 2}, "http://a.test/", shell, false},
		{"adaptive more text allowed", Adaptive{MinText: 1000}, "http://a.test/", article, true},
		{"adaptive noscript text hidden", Adaptive{}, "http://a.test/", `<script src=x></script><noscript>` + strings.Repeat("Enable JavaScript. ", 30) + `</noscript>`, true},
	} {
		req, resp := pageOf(tc.url, tc.body)
		if got := tc.policy.Render(req, resp); got != tc.want {
			t.Errorf("%s: Render = %v, want %v", tc.name, got, tc.want)
		}
	}
	if Always != Always || Always == Never {
		t.Error("Always and Never do not compare")
	}
}

func TestCountScripts(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int
	}{
		{"", 0},
		{"<script>", 1},
		{"<SCRIPT src=x></SCRIPT><Script\n>", 2},
		{"<scripts><scriptx><script", 0},
		{"</script><script/>", 1},
		{"<<script>", 1},
	} {
		if got := CountScripts([]byte(tc.body)); got != tc.want {
			t.Errorf("CountScripts(%q) = %d, want %d", tc.body, got, tc.want)
		}
	}
}

// countScriptsRef is CountScripts written the slow, obvious way.
var scriptTag = regexp.MustCompile(`(?i)<script[>\s/]`)

func FuzzCountScripts(f *testing.F) {
	for _, s := range []string{"<script>", "<SCRIPT src=x>", "<scrip", "<<script\f", "a<script/"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// \s in RE2 is [\t\n\f\r ], the HTML whitespace plus nothing else.
		if got, want := CountScripts(b), len(scriptTag.FindAllIndex(b, -1)); got != want {
			t.Errorf("CountScripts(%q) = %d, regexp says %d", b, got, want)
		}
	})
}

// TestAdaptiveOnWeb: on the simulated web, Adaptive picks exactly the
// pages whose content scripts write: the web application's pages, the
// shop's category pages and its scripted products; no ordinary page.
func TestAdaptiveOnWeb(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 6, MeanPages: 10, Scripts: true})
	defer w.Close()
	st := fetch.NewHTTP(fetchertest.WebOptions(w))
	defer st.Close()
	scripted := map[string]bool{}
	for _, p := range w.Products() {
		scripted[p.URL] = p.Scripted
	}
	var yes, no, maxShell, minPage int
	minPage = 1 << 30
	for _, u := range w.Pages() {
		resp := get(t, st, u)
		if resp.Status != 200 || resp.ContentType != "text/html" {
			continue
		}
		req := &fetch.Request{URL: resp.URL}
		got := Adaptive{}.Render(req, resp)
		h := resp.URL.Hostname()
		want := h == w.Host(fetchtest.ScriptApp) || strings.Contains(u, "/c/") || scripted[u]
		if got != want {
			t.Errorf("%s: Adaptive renders %v, want %v", u, got, want)
		}
		text := len((&fetch.HTML{Scripting: true}).ParseBytes(resp.Body, resp.URL).Text)
		if want {
			yes++
			maxShell = max(maxShell, text)
		} else {
			no++
			if CountScripts(resp.Body) == 0 && h != w.Host(fetchtest.Shop) {
				minPage = min(minPage, text)
			}
		}
	}
	t.Logf("Adaptive: %d pages rendered, %d not; shells show at most %d bytes of text, ordinary pages at least %d", yes, no, maxShell, minPage)
	if maxShell >= DefaultMinText || minPage < DefaultMinText {
		t.Errorf("DefaultMinText %d does not separate shells (≤ %d bytes) from pages (≥ %d bytes)", DefaultMinText, maxShell, minPage)
	}
}

func TestCacheFor(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const def = 10 * time.Minute
	resp := func(status int, ct string, hdr ...string) *fetch.Response {
		h := http.Header{}
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Add(hdr[i], hdr[i+1])
		}
		return &fetch.Response{Status: status, ContentType: ct, Header: h}
	}
	for _, tc := range []struct {
		name string
		resp *fetch.Response
		want time.Duration
	}{
		{"script", resp(200, "text/javascript"), def},
		{"style", resp(200, "text/css"), def},
		{"font", resp(200, "font/woff2"), def},
		{"image", resp(200, "image/png"), def},
		{"script max-age", resp(200, "application/javascript", "Cache-Control", "public, max-age=60"), time.Minute},
		{"script no-store", resp(200, "text/javascript", "Cache-Control", "no-store"), 0},
		{"script no-cache", resp(200, "text/javascript", "Cache-Control", "No-Cache"), 0},
		{"script max-age=0", resp(200, "text/javascript", "Cache-Control", "max-age=0"), 0},
		{"script 404", resp(404, "text/javascript"), 0},
		{"json", resp(200, "application/json"), 0},
		{"json max-age", resp(200, "application/json", "Cache-Control", "max-age=30"), 30 * time.Second},
		{"json expires", resp(200, "application/json", "Expires", now.Add(time.Hour).Format(http.TimeFormat)), time.Hour},
		{"json expired", resp(200, "application/json", "Expires", now.Add(-time.Hour).Format(http.TimeFormat)), 0},
		{"html", resp(200, "text/html"), 0},
		{"bad max-age", resp(200, "text/css", "Cache-Control", "max-age=soon"), 0},
	} {
		if got := cacheFor(tc.resp, def, now); got != tc.want {
			t.Errorf("%s: cacheFor = %v, want %v", tc.name, got, tc.want)
		}
	}
	trunc := resp(200, "text/css")
	trunc.Truncated = true
	if cacheFor(trunc, def, now) != 0 {
		t.Error("a truncated body is cached")
	}
}

func TestCacheBound(t *testing.T) {
	now := time.Now()
	c := newCache(64<<10, time.Minute)
	body := make([]byte, 4<<10)
	for i := range 100 {
		u := "http://a.test/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + ".js"
		c.put(u, &fetch.Response{Status: 200, ContentType: "text/javascript", Header: http.Header{}, Body: body}, now)
		if c.size > c.max {
			t.Fatalf("size %d over the cap %d", c.size, c.max)
		}
	}
	c.put("http://a.test/big.js", &fetch.Response{Status: 200, ContentType: "text/javascript", Header: http.Header{}, Body: make([]byte, 32<<10)}, now)
	if _, ok := c.get("http://a.test/big.js", now); ok {
		t.Error("an entry of half the cache was kept")
	}
	c.put("http://a.test/k.js", &fetch.Response{Status: 200, ContentType: "text/javascript", Header: http.Header{}, Body: body}, now)
	if _, ok := c.get("http://a.test/k.js", now); !ok {
		t.Error("just stored, not found")
	}
	if _, ok := c.get("http://a.test/k.js", now.Add(2*time.Minute)); ok {
		t.Error("expired entry returned")
	}
}

func TestHostGate(t *testing.T) {
	a, _ := url.Parse("http://a.test:1/x")
	for _, tc := range []struct {
		sub        string
		thirdParty bool
		ok         bool
	}{
		{"https://A.TEST./y", false, true},
		{"http://b.a.test/y", false, false},
		{"http://b.test/y", true, true},
	} {
		s, _ := url.Parse(tc.sub)
		rel, err := hostGate{thirdParty: tc.thirdParty}.Admit(t.Context(), a, s)
		if (err == nil) != tc.ok || err != nil && err != ErrOtherHost {
			t.Errorf("%s (third party %v): %v", tc.sub, tc.thirdParty, err)
		}
		if rel != nil {
			rel()
		}
	}
}
