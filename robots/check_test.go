package robots_test

import (
	"context"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/robots"
)

// TestCheckVerdict: Check tells a rule's denial from an unreachable
// robots.txt, reports the fetch only to the call that made it, and
// carries the Crawl-delay.
func TestCheckVerdict(t *testing.T) {
	netErr := errors.New("connection refused")
	var fetches atomic.Int32
	fetch := func(ctx context.Context, raw string) (*robots.Response, error) {
		fetches.Add(1)
		time.Sleep(2 * time.Millisecond)
		u, _ := url.Parse(raw)
		switch u.Host {
		case "rules.test":
			return &robots.Response{Status: 200, Body: []byte("User-agent: *\nDisallow: /private\nCrawl-delay: 2\n")}, nil
		case "slow.test":
			return &robots.Response{Status: 200, Body: []byte("User-agent: *\nCrawl-delay: 3600\n")}, nil
		case "down.test":
			return &robots.Response{Status: 503}, nil
		case "gone.test":
			return nil, netErr
		}
		return &robots.Response{Status: 404}, nil
	}
	c := robots.NewCache(&robots.Options{Fetch: fetch, MaxCrawlDelay: time.Minute})
	defer c.Close()
	ctx := context.Background()
	tests := []struct {
		url         string
		allowed     bool
		unreachable bool
		err         error
		fetched     bool
		delay       time.Duration
		capped      bool
	}{
		{"http://rules.test/private/x", false, false, nil, true, 2 * time.Second, false},
		{"http://rules.test/public", true, false, nil, false, 2 * time.Second, false},
		{"http://slow.test/", true, false, nil, true, time.Minute, true},
		{"http://down.test/a", false, true, nil, true, 0, false},
		{"http://down.test/b", false, true, nil, false, 0, false},
		{"http://gone.test/a", false, true, netErr, true, 0, false},
		{"http://none.test/a", true, false, nil, true, 0, false},
		{"http://none.test/robots.txt", true, false, nil, false, 0, false},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.url)
		v, err := c.Check(ctx, u)
		if err != nil {
			t.Fatalf("Check(%s): %v", tt.url, err)
		}
		if v.Allowed != tt.allowed || v.Unreachable != tt.unreachable || !errors.Is(v.Err, tt.err) && tt.err != nil || v.Fetched != tt.fetched ||
			v.CrawlDelay != tt.delay || v.CrawlDelayCapped != tt.capped {
			t.Errorf("Check(%s) = %+v; want allowed %v unreachable %v err %v fetched %v delay %v capped %v",
				tt.url, v, tt.allowed, tt.unreachable, tt.err, tt.fetched, tt.delay, tt.capped)
		}
		if tt.err == nil && v.Err != nil {
			t.Errorf("Check(%s).Err = %v, want nil", tt.url, v.Err)
		}
		if v.Fetched && v.FetchTime < 2*time.Millisecond {
			t.Errorf("Check(%s).FetchTime = %v, want ≥ 2ms", tt.url, v.FetchTime)
		}
		if !v.Fetched && v.FetchTime != 0 {
			t.Errorf("Check(%s).FetchTime = %v without a fetch", tt.url, v.FetchTime)
		}
	}
	if n := fetches.Load(); n != 5 {
		t.Errorf("%d robots.txt fetches, want 5 (one per host)", n)
	}
}

// TestPeek: Peek answers from the cache only, and says when it cannot.
func TestPeek(t *testing.T) {
	fetch := func(ctx context.Context, raw string) (*robots.Response, error) {
		return &robots.Response{Status: 200, Body: []byte("User-agent: *\nDisallow: /no\nCrawl-delay: 3\n")}, nil
	}
	now := time.Unix(1e9, 0)
	c := robots.NewCache(&robots.Options{Fetch: fetch, TTL: time.Hour, Now: func() time.Time { return now }})
	defer c.Close()
	u, _ := url.Parse("http://a.test/no/x")
	if _, ok := c.Peek(u); ok {
		t.Fatal("Peek answered before any fetch")
	}
	if _, err := c.Check(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	v, ok := c.Peek(u)
	if !ok || v.Allowed || v.CrawlDelay != 3*time.Second || v.Fetched {
		t.Errorf("Peek = %+v, %v; want cached, disallowed, 3s, not fetched", v, ok)
	}
	now = now.Add(2 * time.Hour)
	if _, ok := c.Peek(u); ok {
		t.Error("Peek answered from expired rules")
	}
}
