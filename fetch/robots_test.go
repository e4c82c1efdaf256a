package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/robots"
)

func parseURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// RobotsFetch over the in-memory fetch.Static: redirects are followed by the
// Cache from the Location the fetcher resolved.
func TestRobotsFetchStatic(t *testing.T) {
	static := fetch.Static{
		"http://a.test/robots.txt":      {Status: 301, Location: parseURL(t, "http://b.test/robots.txt")},
		"http://b.test/robots.txt":      {Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n")},
		"http://down.test/robots.txt":   {Status: 503},
		"http://absent.test/robots.txt": {Status: 404},
	}
	c := robots.NewCache(&robots.Options{Fetch: fetch.RobotsFetch(static)})
	defer c.Close()
	tests := []struct {
		url  string
		want bool
	}{
		{"http://a.test/x", false}, {"http://a.test/y", true},
		{"http://down.test/y", false}, {"http://absent.test/x", true},
	}
	for _, tt := range tests {
		if got, err := c.Allowed(context.Background(), parseURL(t, tt.url)); err != nil || got != tt.want {
			t.Errorf("Allowed(%s) = %v, %v; want %v", tt.url, got, err, tt.want)
		}
	}
}

// RobotsFetch over the real fetch.HTTP against a loopback server.
func TestRobotsFetchHTTP(t *testing.T) {
	var (
		mu     sync.Mutex
		agents []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/moved/robots.txt", http.StatusFound)
		case "/moved/robots.txt":
			fmt.Fprint(w, "User-agent: crawlkit\nDisallow: /private/\n")
		}
	}))
	defer srv.Close()
	f := fetch.NewHTTP(&fetch.Options{AllowPrivate: true, UserAgent: "crawlkit/test"})
	defer f.Close()
	c := robots.NewCache(&robots.Options{Fetch: fetch.RobotsFetch(f)})
	defer c.Close()
	for path, want := range map[string]bool{"/private/a": false, "/public": true} {
		if got, err := c.Allowed(context.Background(), parseURL(t, srv.URL+path)); err != nil || got != want {
			t.Errorf("Allowed(%s) = %v, %v; want %v", path, got, err, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(agents) != 2 || agents[0] != "crawlkit/test" {
		t.Errorf("requests with agents %q, want 2 with crawlkit/test", agents)
	}
}

func TestRobotsFetchErrors(t *testing.T) {
	failing := fetch.FetcherFunc(func(context.Context, *fetch.Request) (*fetch.Response, error) {
		return nil, errors.New("connection reset")
	})
	fn := fetch.RobotsFetch(failing)
	if _, err := fn(context.Background(), "http://a.test/robots.txt"); err == nil {
		t.Error("fetch error lost")
	}
	if _, err := fn(context.Background(), "http://a b/"); err == nil {
		t.Error("bad URL accepted")
	}
	c := robots.NewCache(&robots.Options{Fetch: fn})
	defer c.Close()
	if ok, err := c.Allowed(context.Background(), parseURL(t, "http://a.test/x")); err != nil || ok {
		t.Errorf("network failure: Allowed = %v, %v; want false (complete disallow)", ok, err)
	}
}
