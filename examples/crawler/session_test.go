package main

import (
	"bytes"
	"context"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func TestSessionBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-proxy", "ftp://127.0.0.1:21"}, "-proxy: proxy \"ftp://127.0.0.1:21\": scheme"},
		{[]string{"-proxy", "socks5h://127.0.0.1:1080"}, "use socks5://"},
		{[]string{"-proxy", "http://u:secret@127.0.0.1:3128/path"}, "host and port only"},
		{[]string{"-header", "no colon"}, "want \"Name: value\""},
		{[]string{"-header", "Bad Name: x"}, "not a header name"},
		{[]string{"-header", "User-Agent: x"}, "use -user-agent"},
		{[]string{"-header", "Accept-Encoding: br"}, "-header: the fetcher sets Accept-Encoding itself"},
		{[]string{"-header", "X-A: 1", "-header", "Connection: close"}, "hop-by-hop"},
		{[]string{"-login-form", "user=a"}, "-login-form needs -login-url"},
		{[]string{"-login-url", "http://x.test/login"}, "-login-url needs -login-form"},
		{[]string{"-login-url", "/login", "-login-form", "a=b"}, "not an absolute http(s) URL"},
		{[]string{"-login-url", "http://x.test/login", "-login-form", "a=%zz"}, "URL-encoded fields"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		args := append([]string{"-seeds", "http://x.test/"}, tt.args...)
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) exited %d, want 2", tt.args, code)
		}
		if !strings.Contains(stderr.String(), tt.want) || strings.Contains(stderr.String(), "secret") {
			t.Errorf("run(%q): stderr %q lacks %q (or shows a password)", tt.args, stderr.String(), tt.want)
		}
	}
}

// TestLoginCrawl crawls the simulated web's members' area with the
// command: logged in (through a SOCKS5 proxy, with an extra header),
// every protected page is fetched and every request went through the
// proxy; without the login, none is.
func TestLoginCrawl(t *testing.T) {
	for _, login := range []bool{true, false} {
		web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1, Members: true})
		defer web.Close()
		srv := dnstest.Start(t, dnstest.Config{})
		srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
		proxy := fetchtest.NewProxy(fetchtest.ProxyConfig{User: "crawl", Password: "pw"})
		defer proxy.Close()
		host := web.Host(fetchtest.Members)
		args := []string{"-seeds", web.URL(host, "/members/"), "-dns", srv.Addr(), "-allow-private", "-quiet",
			"-workers", "4", "-delay-factor", "0", "-proxy", proxy.SOCKS5URL().String(), "-header", "X-Crawl: members"}
		if login {
			form := url.Values{"user": {fetchtest.MembersUser}, "password": {fetchtest.MembersPassword}}
			args = append(args, "-login-url", web.URL(host, "/login"), "-login-form", form.Encode())
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		ok := map[string]bool{}
		for _, r := range web.Log() {
			if r.Status == 200 && r.Method == "GET" {
				ok[web.URL(r.Host, r.Path)] = true
			}
		}
		if !login {
			// The seed answers 302 to the public login form, which is
			// crawled; no protected page is.
			form := web.URL(host, "/login?next="+url.QueryEscape("/members/"))
			if code != 0 || !ok[form] {
				t.Errorf("without a login: exit %d, login form fetched %v\n%s", code, ok[form], stderr.String())
			}
			for _, p := range web.MembersPages() {
				if ok[p] {
					t.Errorf("without a login %s answered 200", p)
				}
			}
			continue
		}
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
		}
		// Two cookies: the session and the domain-wide one; the Secure one
		// is not for http.
		if !strings.Contains(stdout.String(), "login: "+web.URL(host, "/login")+" answered 303; 2 cookies") {
			t.Errorf("no login line:\n%s", stdout.String())
		}
		for _, p := range web.MembersPages() {
			if !ok[p] {
				t.Errorf("%s not crawled", p)
			}
		}
		tunnels := map[string]bool{}
		for _, e := range proxy.Log() {
			tunnels[e.Upstream] = true
		}
		for _, r := range web.Log() {
			if !tunnels[r.Remote] {
				t.Errorf("%s %s%s did not go through the proxy", r.Method, r.Host, r.Path)
			}
		}
		if web.Sessions() != 1 {
			t.Errorf("%d logins", web.Sessions())
		}
	}
}
