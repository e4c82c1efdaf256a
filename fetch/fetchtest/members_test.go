package fetchtest_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/publicsuffix"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// noRedirect is a client of the web that does not follow redirects.
func noRedirect(w *fetchtest.Web, jar http.CookieJar) *http.Client {
	c := w.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestMembersLogin(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2, Members: true})
	defer w.Close()
	host := w.Host(fetchtest.Members)
	pages := w.MembersPages()
	if len(pages) < 10 {
		t.Fatalf("%d protected pages", len(pages))
	}
	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	c := noRedirect(w, jar)

	// Without a session: every protected page sends to the form; a
	// forged session is forbidden.
	for _, p := range pages {
		resp, _ := do(t, c, "GET", p, nil)
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") {
			t.Errorf("%s without a session: %d, Location %q", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	forged, _ := http.NewRequest("GET", pages[0], nil)
	forged.AddCookie(&http.Cookie{Name: "session", Value: "guessed"})
	if resp, err := noRedirect(w, nil).Do(forged); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("forged session: %v, %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// A wrong password is refused; the right one opens a session.
	login := w.URL(host, "/login")
	if resp, body := do(t, c, "GET", login, nil); resp.StatusCode != 200 || !strings.Contains(body, `<form method="post" action="/login">`) {
		t.Errorf("login form: %d %q", resp.StatusCode, body)
	}
	if resp, _ := do(t, c, "POST", login, url.Values{"user": {fetchtest.MembersUser}, "password": {"wrong"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("wrong password: %d", resp.StatusCode)
	}
	if w.Sessions() != 0 {
		t.Fatalf("%d sessions before a good login", w.Sessions())
	}
	resp, _ := do(t, c, "POST", login, url.Values{"user": {fetchtest.MembersUser}, "password": {fetchtest.MembersPassword}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/members/" || w.Sessions() != 1 {
		t.Fatalf("login: %d, Location %q, %d sessions", resp.StatusCode, resp.Header.Get("Location"), w.Sessions())
	}
	// With it, every protected page answers and the tree links them all.
	seen := map[string]bool{}
	queue := []string{w.URL(host, "/members/")}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			continue
		}
		seen[u] = true
		resp, body := do(t, c, "GET", u, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s with a session: %d", u, resp.StatusCode)
		}
		for _, part := range strings.Split(body, `href="`)[1:] {
			ref, _, _ := strings.Cut(part, `"`)
			if strings.HasPrefix(ref, "/members/") {
				queue = append(queue, w.URL(host, ref))
			}
		}
	}
	for _, p := range pages {
		if !seen[p] {
			t.Errorf("%s not linked from the members' index", p)
		}
	}
	if len(seen) != len(pages) {
		t.Errorf("%d pages crawled, %d protected pages", len(seen), len(pages))
	}

	// The log shows the cookies: the session only on the Members host,
	// the domain-wide one on another host, the Secure one never (http).
	other := w.Seeds()[0]
	do(t, c, "GET", other, nil)
	for _, r := range w.Log() {
		if strings.Contains(r.Cookie, "secure_probe") {
			t.Errorf("%s%s carried the Secure cookie over http", r.Host, r.Path)
		}
		if r.Host != host && strings.Contains(r.Cookie, "session=") {
			t.Errorf("%s%s carried the session cookie of %s", r.Host, r.Path, host)
		}
		if r.Host != host && !strings.Contains(r.Cookie, "theme=dark") {
			t.Errorf("%s%s lacks the domain cookie: %q", r.Host, r.Path, r.Cookie)
		}
	}
	if n := len(w.Pages()); n == 0 || strings.Contains(strings.Join(w.Pages(), " "), host) {
		t.Errorf("Pages lists the Members host")
	}
}

func TestMembersOff(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2})
	defer w.Close()
	if w.MembersPages() != nil {
		t.Error("MembersPages without Config.Members")
	}
	// Straight to the server: the web's own client does not dial names
	// it does not have.
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", w.Addr())
	}}
	defer tr.CloseIdleConnections()
	resp, _ := do(t, &http.Client{Transport: tr}, "GET", w.URL(w.Host(fetchtest.Members), "/"), nil)
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Members host without Config.Members: %d", resp.StatusCode)
	}
}
