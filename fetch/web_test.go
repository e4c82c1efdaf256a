package fetch

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// newWeb starts a simulated web and a fetcher that resolves its host names
// to the loopback address it listens on.
func newWeb(t *testing.T, cfg fetchtest.Config) (*fetchtest.Web, *HTTP) {
	t.Helper()
	w := fetchtest.NewWeb(cfg)
	t.Cleanup(w.Close)
	f := NewHTTP(&Options{Resolver: newMapResolver("*."+w.Domain(), "127.0.0.1"), AllowPrivate: true})
	t.Cleanup(func() { f.Close() })
	return w, f
}

func TestWebPages(t *testing.T) {
	w, f := newWeb(t, fetchtest.Config{Seed: 1, Hosts: 3})
	host := w.OrdinaryHosts()[0]
	pages := w.PagesOf(host)
	if len(pages) == 0 {
		t.Fatal("no pages")
	}
	for _, p := range pages {
		resp, err := get(t, f, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if resp.Status != w.Status(p) {
			t.Errorf("%s: status %d, want %d", p, resp.Status, w.Status(p))
		}
		if resp.ContentType == "text/html" {
			if resp.Header.Get("Content-Encoding") != "gzip" || resp.WireBytes >= int64(len(resp.Body)) {
				t.Errorf("%s: not gzip-encoded on the wire (%d wire, %d body)", p, resp.WireBytes, len(resp.Body))
			}
			if !strings.Contains(string(resp.Body), "<title>") || resp.Charset != "utf-8" {
				t.Errorf("%s: body %.80q, charset %q", p, resp.Body, resp.Charset)
			}
		}
		if resp.Timings.Total <= 0 {
			t.Errorf("%s: timings %+v", p, resp.Timings)
		}
	}
	// Every fetch reached the server exactly once, on kept-alive connections.
	log := w.Log()
	if len(log) != len(pages) {
		t.Errorf("%d requests logged, want %d", len(log), len(pages))
	}
	conns := map[any]bool{}
	for _, r := range log {
		conns[r.ConnID] = true
		if r.UserAgent != DefaultUserAgent {
			t.Errorf("user agent %q", r.UserAgent)
		}
	}
	if len(conns) > 2 {
		t.Errorf("%d connections for %d sequential fetches", len(conns), len(log))
	}
}

func TestWebLegacyCharsets(t *testing.T) {
	w, f := newWeb(t, fetchtest.Config{Seed: 1, Hosts: 1})
	for _, label := range []string{fetchtest.Latin1, fetchtest.Windows1252} {
		pages := w.PagesOf(w.Host(label))
		if len(pages) == 0 {
			t.Fatalf("%s: no pages", label)
		}
		for _, p := range pages {
			resp, err := get(t, f, p)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Charset != "windows-1252" || !utf8.Valid(resp.Body) || strings.ContainsRune(string(resp.Body), utf8.RuneError) {
				t.Errorf("%s: charset %q, valid UTF-8 %v", p, resp.Charset, utf8.Valid(resp.Body))
			}
			if title := w.Title(p); title != "" && !strings.Contains(string(resp.Body), title) {
				t.Errorf("%s: converted body does not contain the title %q", p, title)
			}
		}
	}
}

func TestWebRedirectsAndStatuses(t *testing.T) {
	w, f := newWeb(t, fetchtest.Config{Seed: 1, Hosts: 1})
	redir := w.Host(fetchtest.Redirects)
	for _, path := range []string{"/chain/3/0", "/loop/1/0"} {
		u := w.URL(redir, path)
		resp, err := get(t, f, u)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Redirect() || !resp.Location.IsAbs() {
			t.Errorf("%s: status %d location %v", u, resp.Status, resp.Location)
		}
	}
	if n := len(w.Log()); n != 2 {
		t.Errorf("%d requests for 2 redirects: redirects were followed", n)
	}
	st := w.Host(fetchtest.Statuses)
	for _, code := range []int{404, 410, 429, 500, 503} {
		u := w.URL(st, "/"+itoa(code)+"/x")
		resp, err := get(t, f, u)
		if err != nil || resp.Status != code {
			t.Errorf("%s: %v, %v", u, resp, err)
		}
		if (code == 429 || code == 503) && resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", u)
		}
	}
}

func TestWebConditionalGet(t *testing.T) {
	w, f := newWeb(t, fetchtest.Config{Seed: 1, Hosts: 1})
	u, _ := url.Parse(w.Seeds()[0])
	resp, err := f.Fetch(context.Background(), &Request{URL: u})
	if err != nil || resp.ETag == "" {
		t.Fatalf("%v, %v", resp, err)
	}
	again, err := f.Fetch(context.Background(), &Request{URL: u, ETag: resp.ETag, LastModified: resp.LastModified})
	if err != nil || !again.NotModified() || len(again.Body) != 0 {
		t.Errorf("re-crawl = %v, %v; want 304", again, err)
	}
}

func TestWebPrivateGuard(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1})
	defer w.Close()
	f := NewHTTP(&Options{Resolver: newMapResolver("*."+w.Domain(), "127.0.0.1")})
	defer f.Close()
	_, err := get(t, f, w.Seeds()[0])
	wantKind(t, err, KindRefused, ErrPrivateAddress)
	if n := len(w.Log()); n != 0 {
		t.Errorf("%d requests reached the web", n)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestWebParse parses every page of two simulated hosts (and the legacy
// charset hosts) and compares title and links with the web's ground truth,
// after canonicalizing the extracted links as the crawler would.
func TestWebParse(t *testing.T) {
	w, f := newWeb(t, fetchtest.Config{Seed: 3, Hosts: 4})
	canon := urlnorm.Canonicalizer{SortQuery: true}
	var p ByType
	hosts := append(w.OrdinaryHosts()[:2], w.Host(fetchtest.Latin1), w.Host(fetchtest.Windows1252))
	n := 0
	for _, host := range hosts {
		for _, page := range w.PagesOf(host) {
			resp, err := get(t, f, page)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ContentType != "text/html" {
				continue
			}
			d, err := p.Parse(resp)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if d.Title != w.Title(page) {
				t.Errorf("%s: title %q, want %q", page, d.Title, w.Title(page))
			}
			got := map[string]bool{}
			for _, l := range d.Links {
				c, err := canon.Canonical(l.URL.String())
				if err != nil {
					t.Errorf("%s: link %s: %v", page, l.URL, err)
					continue
				}
				got[c] = true
			}
			want := map[string]bool{}
			for _, l := range w.Links(page) {
				want[l] = true
			}
			if strings.Contains(string(resp.Body), `href="#`) {
				// Same-page fragment links are left out by design; the
				// ground truth counts them as a link to the page itself,
				// so the self link cannot be compared.
				delete(want, page)
				delete(got, page)
			}
			for l := range want {
				if !got[l] {
					t.Errorf("%s: missing link %s", page, l)
				}
			}
			for l := range got {
				if !want[l] {
					t.Errorf("%s: extra link %s", page, l)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d HTML pages parsed", n)
	}
}

// TestKeepAliveAcrossHosts: a crawl turns over many hosts, each contacted
// again a gap later; the default idle pool keeps one connection for each
// of 600, so the second round reuses them all. (With a pool of 256, the
// oldest connections were closed and nearly every request reconnected.)
func TestKeepAliveAcrossHosts(t *testing.T) {
	w, f := newWeb(t, fetchtest.Config{Seed: 1, Hosts: 600})
	hosts := w.OrdinaryHosts()
	if len(hosts) < 590 {
		t.Fatalf("%d ordinary hosts", len(hosts))
	}
	for range 2 {
		for _, h := range hosts {
			if _, err := get(t, f, w.PagesOf(h)[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	conns := map[uint64]bool{}
	for _, r := range w.Log() {
		conns[r.ConnID] = true
	}
	if len(conns) != len(hosts) {
		t.Errorf("%d connections for %d hosts fetched twice, want one per host", len(conns), len(hosts))
	}
}
