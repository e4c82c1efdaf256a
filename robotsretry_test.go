package crawlkit

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
)

// TestRobotsUnreachableRetried: a host whose robots.txt answers 503 once,
// with Retry-After: 2, keeps its URLs, which wait for the next attempt
// two seconds later; a
// host whose robots.txt keeps failing loses them after MaxRetries more
// attempts (1 s and 2 s later), not sooner and not later, and its pages
// are never requested; a robots.txt that fails as no page is retried for
// (500, an address the guard refuses) is asked once.
func TestRobotsUnreachableRetried(t *testing.T) {
	var mu sync.Mutex
	calls := map[string][]time.Time{}
	site := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		key := req.URL.Host + req.URL.Path
		mu.Lock()
		calls[key] = append(calls[key], time.Now())
		n := len(calls[key])
		mu.Unlock()
		r := &fetch.Response{URL: req.URL, Status: 200, Header: http.Header{}, ContentType: "text/html"}
		switch {
		case key == "flaky.test/robots.txt" && n == 1:
			r.Status, r.ContentType = 503, ""
			r.Header.Set("Retry-After", "2")
		case key == "down.test/robots.txt":
			r.Status, r.ContentType = 503, ""
		case key == "broken.test/robots.txt":
			r.Status, r.ContentType = 500, ""
		case req.URL.Host == "private.test":
			return nil, &fetch.Error{Op: "dial", URL: req.URL.String(), Kind: fetch.KindRefused, Err: fetch.ErrPrivateAddress}
		case req.URL.Path == "/robots.txt":
			r.Status, r.ContentType = 404, ""
		case req.URL.Path == "/":
			r.Body = []byte(`<title>home</title><p>the home page of ` + req.URL.Host + `</p><a href="/a">a</a><a href="/b">b</a>`)
		default:
			r.Body = []byte(`<title>` + key + `</title><p>page ` + key + `</p>`)
		}
		return r, nil
	})
	c, err := New(Config{Seeds: []string{"http://flaky.test/", "http://down.test/", "http://private.test/", "http://broken.test/"}, Fetcher: site,
		Workers: 2, DelayFactor: -1, MinDelay: time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"flaky.test/", "flaky.test/a", "flaky.test/b"} {
		if len(calls[p]) != 1 {
			t.Errorf("%s requested %d times, want once", p, len(calls[p]))
		}
	}
	for _, h := range []string{"private.test", "broken.test"} {
		if n := len(calls[h+"/robots.txt"]); n != 1 {
			t.Errorf("%s/robots.txt requested %d times, want once", h, n)
		}
	}
	if len(calls["down.test/"]) != 0 {
		t.Errorf("down.test/ requested while its robots.txt failed")
	}
	if f := calls["flaky.test/robots.txt"]; len(f) != 2 || f[1].Sub(f[0]) < 2*time.Second {
		t.Errorf("flaky.test/robots.txt requested at %v, want twice, its Retry-After (2 s) apart", f)
	}
	down := calls["down.test/robots.txt"]
	if len(down) != 3 {
		t.Fatalf("down.test/robots.txt requested %d times, want 3 (MaxRetries 2)", len(down))
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second} {
		if got := down[i+1].Sub(down[i]); got < want || got > want+time.Second {
			t.Errorf("down.test/robots.txt attempt %d came %v after the one before, want %v", i+2, got, want)
		}
	}
	if s.Outcomes[Fetched] != 3 || s.Outcomes[FetchError] != 3 || s.Outcomes[Retried] != 3 {
		t.Errorf("want 3 pages, 3 fetch errors (down.test/, private.test/, broken.test/) and 3 retries:\n%s", s.Summary())
	}
}
