package crawlkit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
)

// TestConfigValidation: New refuses a Config that contradicts itself or
// sets fields a module of the caller's own would silently ignore.
func TestConfigValidation(t *testing.T) {
	static := fetch.Static{}
	cache := robots.NewCache(nil)
	defer cache.Close()
	fifo, err := frontier.NewFIFO(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"negative workers", Config{Workers: -1}, false},
		{"too many workers", Config{Workers: maxWorkers + 1}, false},
		{"negative depth", Config{MaxDepth: -1}, false},
		{"negative pages", Config{MaxPages: -1}, false},
		{"negative delay", Config{MinDelay: -time.Second}, false},
		{"min above max delay", Config{MinDelay: 2 * time.Second, MaxDelay: time.Second}, false},
		{"revisit bounds reversed", Config{MinRevisit: time.Hour, MaxRevisit: time.Minute}, false},
		{"user agent with own fetcher", Config{Fetcher: static, UserAgent: "x"}, false},
		{"allow private with own fetcher", Config{Fetcher: static, AllowPrivate: true}, false},
		{"resolver with own fetcher: prefetch", Config{Fetcher: static, Resolver: webResolver()}, true},
		{"agent with own robots cache", Config{Robots: cache, Agent: "bot"}, false},
		{"own robots cache", Config{Robots: cache}, true},
		{"prioritizer with own frontier", Config{Frontier: fifo, Prioritizer: frontier.Depth{}}, false},
		{"host order with own frontier", Config{Frontier: fifo, HostOrder: frontier.PriorityFirst}, false},
		{"unknown host order", Config{HostOrder: frontier.PriorityFirst + 1}, false},
		{"priority first", Config{HostOrder: frontier.PriorityFirst}, true},
		{"agent not a product token", Config{Agent: "my bot/1.0"}, false},
		{"agent with a digit", Config{Agent: "My-Bot_2"}, false},
		{"agent letters", Config{Agent: "MyBot"}, true},
		{"no budgets", Config{MaxPagesPerHost: -1, MaxPagesPerDomain: -1, MaxHostsPerDomain: -1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Logger = quietLogger()
			c, err := New(cfg)
			if tt.ok {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				c.closeAll()
				return
			}
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("New = %v, want an error wrapping ErrConfig", err)
			}
		})
	}
}

// TestRetriesForgotten: a URL that succeeds on a retry leaves no retry
// count behind (a continuous crawl would otherwise keep one per such URL
// forever, and its later revisits would start with fewer retries).
func TestRetriesForgotten(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	site := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		mu.Lock()
		calls[req.URL.Path]++
		n := calls[req.URL.Path]
		mu.Unlock()
		r := &fetch.Response{URL: req.URL, Status: 404, Header: http.Header{}}
		switch req.URL.Path {
		case "/":
			r.Status, r.ContentType = 200, "text/html"
			r.Body = []byte(`<title>home</title><p>the home page</p><a href="/flaky">flaky</a>`)
		case "/flaky":
			if n == 1 {
				r.Status = 503
				r.Header.Set("Retry-After", "0")
			} else {
				r.Status, r.ContentType = 200, "text/html"
				r.Body = []byte(`<title>flaky</title><p>up again</p>`)
			}
		}
		return r, nil
	})
	c, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: site, Workers: 2, DelayFactor: -1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcomes[Retried] != 1 || s.Outcomes[Fetched] != 2 {
		t.Fatalf("want one retry and two pages: %s", s.Summary())
	}
	if s.Backoffs != 0 {
		// "Retry-After: 0" is the server's word, not an incident: a
		// back-off would hold the host for a minute.
		t.Errorf("%d back-offs after a 503 with Retry-After: 0, want none", s.Backoffs)
	}
	e := c.state.(*ephemeral)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.retries) != 0 {
		t.Errorf("%d retry counts left after the crawl: %v", len(e.retries), e.retries)
	}
}

// TestConfigHostOrder: HostOrder reaches the default frontier. Of two
// hosts never contacted, one holding three URLs and one holding a URL of
// the highest priority, MostWork leases the larger first and
// PriorityFirst the higher priority.
func TestConfigHostOrder(t *testing.T) {
	high := frontier.PrioritizerFunc(func(u *frontier.URL, levels int) int {
		if strings.Contains(u.URL, "high.test") {
			return levels - 1
		}
		return 0
	})
	for _, tc := range []struct {
		order frontier.HostOrder
		first string
	}{
		{frontier.MostWork, "http://big.test/1"},
		{frontier.PriorityFirst, "http://high.test/1"},
	} {
		t.Run(tc.order.String(), func(t *testing.T) {
			c, err := New(Config{HostOrder: tc.order, Prioritizer: high, MinDelay: time.Second, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.closeAll()
			var urls []frontier.URL
			for _, u := range []string{"http://big.test/1", "http://big.test/2", "http://big.test/3", "http://high.test/1"} {
				urls = append(urls, frontier.URL{URL: u})
			}
			if err := c.front.Add(context.Background(), urls...); err != nil {
				t.Fatal(err)
			}
			l, _, err := c.front.(frontier.Poller).Poll()
			if err != nil || l == nil {
				t.Fatalf("Poll = %v, %v", l, err)
			}
			if l.URL.URL != tc.first {
				t.Errorf("first lease %s, want %s", l.URL.URL, tc.first)
			}
		})
	}
}
