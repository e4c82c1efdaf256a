package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/publicsuffix"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func newJar(t testing.TB) http.CookieJar {
	jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

// TestHeaderMerge: Options.Header, then HostHeader, then Request.Header,
// each replacing the names it sets; the fetcher's own headers are never
// taken from the first two, and a gzip body still decodes.
func TestHeaderMerge(t *testing.T) {
	var (
		mu   sync.Mutex
		seen http.Header
	)
	handler := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}
	tests := []struct {
		name    string
		header  http.Header
		host    map[string]http.Header
		request http.Header
		want    map[string]string // "" means absent
	}{
		{"none", nil, nil, nil,
			map[string]string{"User-Agent": "testbot/1", "Accept-Encoding": "gzip", "X-Team": "", "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"}},
		{"default header", http.Header{"X-Team": {"crawl"}, "Accept-Language": {"fr"}}, nil, nil,
			map[string]string{"X-Team": "crawl", "Accept-Language": "fr"}},
		{"non-canonical keys", http.Header{"x-team": {"crawl"}, "user-agent": {"spoof"}}, nil, nil,
			map[string]string{"X-Team": "crawl", "User-Agent": "testbot/1"}},
		{"host header replaces default", http.Header{"X-Team": {"crawl"}, "Accept-Language": {"fr"}},
			map[string]http.Header{"EXAMPLE.test:8080": {"X-Team": {"members"}}}, nil,
			map[string]string{"X-Team": "members", "Accept-Language": "fr"}},
		{"other host's header not sent", http.Header{"X-Team": {"crawl"}},
			map[string]http.Header{"other.test": {"X-Team": {"members"}, "Authorization": {"Bearer x"}}}, nil,
			map[string]string{"X-Team": "crawl", "Authorization": ""}},
		{"request replaces both", http.Header{"X-Team": {"crawl"}},
			map[string]http.Header{"example.test": {"X-Team": {"members"}}}, http.Header{"X-Team": {"one"}},
			map[string]string{"X-Team": "one"}},
		{"owned headers ignored", http.Header{"User-Agent": {"spoof"}, "Accept-Encoding": {"br"}, "Accept": {"x/y"}, "If-None-Match": {`"e"`}, "Connection": {"close"}},
			map[string]http.Header{"example.test": {"User-Agent": {"spoof2"}, "Accept-Encoding": {"identity"}}}, nil,
			map[string]string{"User-Agent": "testbot/1", "Accept-Encoding": "gzip", "If-None-Match": "", "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"}},
		{"request's Accept kept", nil, nil, http.Header{"Accept": {"text/plain"}},
			map[string]string{"Accept": "text/plain"}},
		{"static cookie header", http.Header{"Cookie": {"a=1"}}, nil, nil,
			map[string]string{"Cookie": "a=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, f, base := testServer(t, handler, Options{UserAgent: "testbot/1", Header: tt.header, HostHeader: tt.host})
			u, _ := url.Parse(base + "/")
			resp, err := f.Fetch(context.Background(), &Request{URL: u, Header: tt.request})
			if err != nil || string(resp.Body) != "ok" {
				t.Fatalf("%v, %v", resp, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range tt.want {
				if got := strings.Join(seen[k], ", "); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
	// The options are copied: changing the caller's maps changes nothing.
	h := http.Header{"X-Team": {"crawl"}}
	hh := map[string]http.Header{"example.test": {"X-Host": {"1"}}}
	_, f, base := testServer(t, handler, Options{Header: h, HostHeader: hh})
	h.Set("X-Team", "changed")
	hh["example.test"].Set("X-Host", "2")
	if _, err := get(t, f, base+"/"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if seen.Get("X-Team") != "crawl" || seen.Get("X-Host") != "1" {
		t.Errorf("headers changed after NewHTTP: %v", seen)
	}
	mu.Unlock()
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string // "" means valid
	}{
		{"zero", Options{}, ""},
		{"plain headers", Options{Header: http.Header{"Accept-Language": {"en"}, "Cookie": {"a=1"}},
			HostHeader: map[string]http.Header{"a.example:443": {"Authorization": {"Bearer t"}}}}, ""},
		{"user agent", Options{Header: http.Header{"user-agent": {"x"}}}, "use Options.UserAgent"},
		{"accept encoding", Options{Header: http.Header{"Accept-Encoding": {"br"}}}, "decodes it itself"},
		{"accept", Options{Header: http.Header{"Accept": {"x/y"}}}, "use Options.Accept"},
		{"conditional", Options{Header: http.Header{"If-None-Match": {`"x"`}}}, "Request.ETag"},
		{"proxy credentials", Options{Header: http.Header{"Proxy-Authorization": {"Basic x"}}}, "proxy's URL"},
		{"hop by hop", Options{Header: http.Header{"Connection": {"close"}}}, "hop-by-hop"},
		{"bad name", Options{Header: http.Header{"Bad Name": {"x"}}}, "not a header name"},
		{"bad value", Options{Header: http.Header{"X-A": {"a\r\nInjected: 1"}}}, "not a valid header value"},
		{"owned per host", Options{HostHeader: map[string]http.Header{"a.example": {"User-Agent": {"x"}}}}, "HostHeader[a.example]"},
		{"bad host key", Options{HostHeader: map[string]http.Header{"a.example/path": {"X-A": {"1"}}}}, "not a host name"},
		{"empty host key", Options{HostHeader: map[string]http.Header{"": {"X-A": {"1"}}}}, "not a host name"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an ErrOption saying %q", tt.name, err, tt.want)
		}
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		line, name, value string
		ok                bool
	}{
		{"X-Team: crawl", "X-Team", "crawl", true},
		{"accept-language:fr, en;q=0.5 ", "Accept-Language", "fr, en;q=0.5", true},
		{"Authorization: Bearer a:b", "Authorization", "Bearer a:b", true},
		{"X-Empty:", "X-Empty", "", true},
		{"no colon", "", "", false},
		{": value", "", "", false},
		{"Bad Name: v", "", "", false},
		{"X-A: a\nb", "", "", false},
	}
	for _, tt := range tests {
		name, value, err := ParseHeader(tt.line)
		if (err == nil) != tt.ok || name != tt.name || value != tt.value {
			t.Errorf("ParseHeader(%q) = %q, %q, %v", tt.line, name, value, err)
		}
		if err != nil && !errors.Is(err, ErrOption) {
			t.Errorf("ParseHeader(%q): %v does not wrap ErrOption", tt.line, err)
		}
	}
}

// TestJar: cookies of every answer (a redirect's too) go into the jar and
// back out by its rules: the host's own to that host only, a domain
// cookie to its domain, a Secure one never over http; no jar, no cookies.
func TestJar(t *testing.T) {
	var (
		mu      sync.Mutex
		cookies = map[string]string{} // host -> Cookie header last seen
	)
	handler := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies[hostKey(r.Host)] = r.Header.Get("Cookie")
		mu.Unlock()
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "own", Value: "1", Path: "/"})
			http.SetCookie(w, &http.Cookie{Name: "wide", Value: "2", Path: "/", Domain: "site.test"})
			http.SetCookie(w, &http.Cookie{Name: "sec", Value: "3", Path: "/", Secure: true})
			http.SetCookie(w, &http.Cookie{Name: "tld", Value: "4", Path: "/", Domain: "test"})
			http.Redirect(w, r, "/", http.StatusFound)
		}
	}
	for _, withJar := range []bool{true, false} {
		opts := Options{Resolver: newMapResolver("*.test", "127.0.0.1")}
		if withJar {
			opts.Jar = newJar(t)
		}
		srv, f, _ := testServer(t, handler, opts)
		_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
		for _, u := range []string{"http://a.site.test:" + port + "/set", "http://a.site.test:" + port + "/", "http://b.site.test:" + port + "/", "http://other.test:" + port + "/"} {
			if resp, err := get(t, f, u); err != nil {
				t.Fatal(err)
			} else if strings.HasSuffix(u, "/set") && resp.Status != http.StatusFound {
				t.Fatalf("/set: %d", resp.Status)
			}
		}
		mu.Lock()
		want := map[string]string{"a.site.test": "own=1; wide=2", "b.site.test": "wide=2", "other.test": ""}
		if !withJar {
			want = map[string]string{"a.site.test": "", "b.site.test": "", "other.test": ""}
		}
		for h, w := range want {
			if cookies[h] != w {
				t.Errorf("jar %v: %s got Cookie %q, want %q", withJar, h, cookies[h], w)
			}
		}
		mu.Unlock()
	}
}

// TestPrepare: Prepare sees the request with the fetcher's headers, may
// add its own, comes before the jar's cookies (they are added after), cannot change User-Agent or
// Accept-Encoding, fails the fetch with its error, and is not called for
// PostForm.
func TestPrepare(t *testing.T) {
	var (
		mu   sync.Mutex
		seen http.Header
		meth string
	)
	handler := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen, meth = r.Header.Clone(), r.Method
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "1"})
	}
	var calls atomic.Int32
	var sawCookie atomic.Bool
	fail := errors.New("token refresh failed")
	_, f, base := testServer(t, handler, Options{UserAgent: "testbot/1", Jar: newJar(t),
		Prepare: func(ctx context.Context, req *http.Request) error {
			calls.Add(1)
			if req.URL.Path == "/fail" {
				return fail
			}
			if _, err := req.Cookie("s"); err == nil {
				sawCookie.Store(true)
			}
			req.Header.Set("Authorization", "Bearer t")
			req.Header.Set("User-Agent", "spoof")
			req.Header.Set("Accept-Encoding", "br")
			return nil
		}})
	u, _ := url.Parse(base + "/login")
	if _, err := f.PostForm(context.Background(), u, url.Values{"a": {"b c"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if meth != "POST" || seen.Get("Content-Type") != "application/x-www-form-urlencoded" || seen.Get("Authorization") != "" || calls.Load() != 0 {
		t.Errorf("PostForm: %s %v, %d Prepare calls", meth, seen, calls.Load())
	}
	mu.Unlock()
	if _, err := get(t, f, base+"/page"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if seen.Get("Authorization") != "Bearer t" || seen.Get("User-Agent") != "testbot/1" || seen.Get("Accept-Encoding") != "gzip" ||
		seen.Get("Cookie") != "s=1" || sawCookie.Load() {
		t.Errorf("after Prepare: %v (Prepare saw the jar's cookie: %v)", seen, sawCookie.Load())
	}
	mu.Unlock()
	_, err := get(t, f, base+"/fail")
	wantKind(t, err, KindOther, fail)
	var fe *Error
	if errors.As(err, &fe) && fe.Op != "prepare" {
		t.Errorf("Op %q", fe.Op)
	}
}

// TestMembersLogin crawls the simulated web's login-protected area:
// without logging in every protected page sends to the form; after a
// login (eager with PostForm, or done by Prepare when first needed) every
// one answers, and the session cookie never leaves its host.
func TestMembersLogin(t *testing.T) {
	for _, how := range []string{"none", "PostForm", "Prepare"} {
		t.Run(how, func(t *testing.T) {
			w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2, Members: true})
			defer w.Close()
			host := w.Host(fetchtest.Members)
			login, _ := url.Parse(w.URL(host, "/login"))
			form := url.Values{"user": {fetchtest.MembersUser}, "password": {fetchtest.MembersPassword}}
			var (
				f     *HTTP
				once  sync.Once
				lerr  error
				opts  = &Options{Resolver: newMapResolver("*."+w.Domain(), "127.0.0.1"), AllowPrivate: true, Jar: newJar(t)}
				fetch = func(u string) *Response {
					resp, err := get(t, f, u)
					if err != nil {
						t.Fatal(err)
					}
					return resp
				}
			)
			if how == "Prepare" {
				opts.Prepare = func(ctx context.Context, req *http.Request) error {
					if req.URL.Hostname() != host {
						return nil
					}
					once.Do(func() {
						resp, err := f.PostForm(ctx, login, form)
						if err == nil && resp.Status != http.StatusSeeOther {
							err = fmt.Errorf("login: status %d", resp.Status)
						}
						lerr = err
					})
					return lerr
				}
			}
			f = NewHTTP(opts)
			defer f.Close()
			if how == "PostForm" {
				resp, err := f.PostForm(context.Background(), login, form)
				if err != nil || resp.Status != http.StatusSeeOther || resp.Location.String() != w.URL(host, "/members/") {
					t.Fatalf("login: %v, %v", resp, err)
				}
			}
			got := crawl(t, f, w.URL(host, "/members/"), host)
			if how == "none" {
				if len(got) != 0 {
					t.Errorf("without a login %d protected pages answered", len(got))
				}
				if resp := fetch(w.MembersPages()[3]); resp.Status != http.StatusFound {
					t.Errorf("protected page without a login: %d", resp.Status)
				}
				return
			}
			for _, p := range w.MembersPages() {
				if !got[p] {
					t.Errorf("%s not crawled", p)
				}
			}
			fetch(w.Seeds()[0])
			for _, r := range w.Log() {
				if r.Host != host && strings.Contains(r.Cookie, "session=") {
					t.Errorf("the session cookie went to %s", r.Host)
				}
			}
			if w.Sessions() != 1 {
				t.Errorf("%d logins", w.Sessions())
			}
		})
	}
}

// crawl fetches from seed every page of host its links lead to, and
// returns those that answered 200.
func crawl(t *testing.T, f Fetcher, seed, host string) map[string]bool {
	t.Helper()
	ok := map[string]bool{}
	seen := map[string]bool{seed: true}
	queue := []string{seed}
	var p ByType
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		resp, err := get(t, f, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if resp.Status != http.StatusOK {
			continue
		}
		ok[u] = true
		doc, err := p.Parse(resp)
		if err != nil {
			continue
		}
		for _, l := range doc.Links {
			l.URL.Fragment = ""
			if s := l.URL.String(); l.URL.Hostname() == host && !seen[s] {
				seen[s] = true
				queue = append(queue, s)
			}
		}
	}
	return ok
}
