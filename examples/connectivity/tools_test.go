package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/webgraph"
)

// TestFlags runs the command's flag check for each rejected command line:
// exit status 2 and one line naming the problem.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give exactly one of -store and -links"},
		{[]string{"-store", "a", "-links", "b"}, "give exactly one of -store and -links"},
		{[]string{"-store", "a", "extra"}, `unexpected argument "extra"`},
		{[]string{"-store", "a", "-addr", "8090"}, `-addr "8090": want HOST:PORT`},
		{[]string{"-store", "a", "-addr", "127.0.0.1:"}, `-addr "127.0.0.1:": want HOST:PORT`},
		{[]string{"-nosuch"}, "flag provided but not defined: -nosuch"},
		{[]string{"-store"}, "flag needs an argument: -store"},
	} {
		var stderr bytes.Buffer
		code := runMain(context.Background(), tc.args, &stderr)
		msg := stderr.String()
		if code != 2 || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
	var stderr bytes.Buffer
	if code := runMain(context.Background(), []string{"-h"}, &stderr); code != 0 || !strings.Contains(stderr.String(), "-store") {
		t.Errorf("-h: exit %d, %q", code, stderr.String())
	}
	// A store that is not there is no usage error: exit 1, the path named.
	stderr.Reset()
	missing := filepath.Join(t.TempDir(), "crawl", "graph", "web.graph")
	if code := runMain(context.Background(), []string{"-store", missing}, &stderr); code != 1 || !strings.Contains(stderr.String(), missing) {
		t.Errorf("missing store: exit %d, %q", code, stderr.String())
	}
}

// buildStore writes a store from testLinks at dir/name.
func buildStore(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := webgraph.NewBuilder(&webgraph.BuilderOptions{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, l := range testLinks {
		if err := b.AddLink(l.Src, l.Dst); err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Join(dir, name)
	if err := b.Finish(base); err != nil {
		t.Fatal(err)
	}
	return base
}

// TestStoreBasename: -store takes what the crawler prints (the .graph
// file), the basename, any file of the store or its transpose, the
// directory and a crawler's -out directory.
func TestStoreBasename(t *testing.T) {
	out := t.TempDir() // as a crawler's -out
	base := buildStore(t, filepath.Join(out, "graph"), "web")
	other := buildStore(t, filepath.Join(t.TempDir(), "two"), "a")
	buildStore(t, filepath.Dir(other), "b")
	for _, tc := range []struct{ in, want string }{
		{base + ".graph", base},
		{base, base},
		{base + ".urls", base},
		{base + ".properties", base},
		{base + "-t.graph", base},
		{base + "-t.offsets", base},
		{filepath.Dir(base), base},
		{out, base},
		{other + ".graph", other},
	} {
		got, err := storeBasename(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("storeBasename(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{filepath.Join(out, "nothing.graph"), "no web graph there"},
		{filepath.Dir(other), "a directory with 2 stores"},
		{t.TempDir(), "a directory with 0 stores"},
	} {
		if _, err := storeBasename(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("storeBasename(%s): %v, want an error naming it with %q", tc.in, err, tc.want)
		}
	}
}

// TestLookupLenient asks for URLs as people type them: the answer is the
// canonical URL's node.
func TestLookupLenient(t *testing.T) {
	for name, s := range stores(t) {
		srv := httptest.NewServer(newHandler(s))
		for _, tc := range []struct {
			query, want string
			status      int
		}{
			{"http://www.stanford.edu/alchemy", "http://www.stanford.edu/alchemy", 200},
			{"HTTP://WWW.Stanford.EDU:80/alchemy", "http://www.stanford.edu/alchemy", 200},
			{"http://www.stanford.edu/alchemy/", "http://www.stanford.edu/alchemy", 200},
			{"http://www.stanford.edu/biology/./plant#top", "http://www.stanford.edu/biology/plant", 200},
			{"http://www.mit.edu", "http://www.mit.edu/", 200},
			{"www.mit.edu", "http://www.mit.edu/", 200},
			{"www.stanford.edu/chemistry/", "http://www.stanford.edu/chemistry", 200},
			{"http://www.stanford.edu/%61lchemy", "http://www.stanford.edu/alchemy", 200},
			{"http://www.stanford.edu/physics", "", 404},
			{"garbage", "", 404},
			{"ftp://www.mit.edu/", "", 400},
		} {
			status, v := get(t, srv, "/out?url="+url.QueryEscape(tc.query))
			if status != tc.status {
				t.Errorf("%s: %q: status %d, want %d (%v)", name, tc.query, status, tc.status, v)
				continue
			}
			if status == 200 && v["url"] != tc.want {
				t.Errorf("%s: %q found %v, want %s", name, tc.query, v["url"], tc.want)
			}
		}
		srv.Close()
	}
}

// TestPages: the index page has a working form, the view page lists the
// links of the URL as links to their own pages, and an unknown path is a
// JSON 404, not a bare one.
func TestPages(t *testing.T) {
	srv := httptest.NewServer(newHandler(webgraph.NewMemStore(testLinks)))
	defer srv.Close()
	page := func(path string) (int, string, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	for _, tc := range []struct {
		path   string
		status int
		want   []string
	}{
		{"/", 200, []string{`<form action="/view" method="get">`, `name="url"`, "7 URLs, 8 links", `href="/stats"`, `href="/view?id=0"`}},
		{"/view?url=" + url.QueryEscape("WWW.STANFORD.EDU/alchemy/"), 200, []string{
			"<h2>http://www.stanford.edu/alchemy</h2>", "2 out-links, 0 in-links",
			`<a href="/view?id=2">http://www.stanford.edu/biology</a>`, `href="/out?url=http%3A%2F%2Fwww.stanford.edu%2Falchemy"`}},
		{"/view?id=0", 200, []string{"<h2>http://www.mit.edu/</h2>"}},
		{"/view?url=http://nowhere.example/", 404, []string{"No such URL in the graph: http://nowhere.example/", `<form action="/view"`}},
		{"/view?id=99", 404, []string{"No node with id 99"}},
		{"/view", 400, []string{"Give a URL."}},
		{"/view?url=" + url.QueryEscape(`<script>x</script>`), 400, []string{"not a URL: &#34;&lt;script&gt;"}},
	} {
		status, ct, body := page(tc.path)
		if status != tc.status || ct != "text/html; charset=utf-8" {
			t.Errorf("%s: %d %s, want %d HTML", tc.path, status, ct, tc.status)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q:\n%s", tc.path, w, body)
			}
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("%s: unescaped input in the page", tc.path)
		}
	}
	status, v := get(t, srv, "/nosuch")
	if status != 404 || !strings.Contains(v["error"].(string), "see /") {
		t.Errorf("/nosuch: %d %v", status, v)
	}
}

// TestLinksErrors: a malformed line of a -links file is a *LinkLogError
// with the file and line number.
func TestLinksErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"garbage", "http://a.example/\thttp://b.example/\ngarbage\n", 2, `not an absolute http(s) URL: "garbage"`},
		{"bad target", "# links\n\nhttp://a.example/\tb.example\n", 3, `not an absolute http(s) URL: "b.example"`},
		{"other scheme", "mailto:x@example.com\n", 1, "not an absolute http(s) URL"},
		{"three fields", "http://a.example/\thttp://b.example/\thttp://c.example/\n", 1, "3 tab-separated fields"},
		{"empty target", "http://a.example/\t \n", 1, "empty field"},
		{"empty source", "\thttp://a.example/\n", 1, "empty field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "links.tsv")
			os.WriteFile(path, []byte(tc.text), 0o644)
			err := buildFromTSV(path, filepath.Join(dir, "web"), dir, checkURL)
			var le *LinkLogError
			if !errors.As(err, &le) || le.Path != path || le.Line != tc.line {
				t.Fatalf("%v (%T), want a *LinkLogError at %s:%d", err, err, path, tc.line)
			}
			if want := path + ":" + string(rune('0'+tc.line)) + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q, want %q...%q", err, want, tc.want)
			}
			// The command reports it and exits 1.
			var stderr bytes.Buffer
			if code := runMain(context.Background(), []string{"-links", path, "-addr", "127.0.0.1:0"}, &stderr); code != 1 || !strings.Contains(stderr.String(), err.Error()) {
				t.Errorf("runMain: exit %d, %q", code, stderr.String())
			}
		})
	}
}
