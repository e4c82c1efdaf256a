package fetchtest_test

import (
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestRateLimits: a rate-limited host answers a request that comes
// sooner than its interval after the one before with its status and no
// Retry-After; throttled requests count; other hosts are not limited.
func TestRateLimits(t *testing.T) {
	const interval = 150 * time.Millisecond
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4, MeanPages: 3, ChangePeriods: []time.Duration{0},
		RateLimits: map[string]fetchtest.RateLimit{"H001.sim.test:80": {Interval: interval}, "h002.sim.test": {Interval: interval, Status: 503}}})
	defer w.Close()
	for _, tc := range []struct {
		host   string
		sleeps []time.Duration // before each request but the first
		want   []int
	}{
		{"h001.sim.test", []time.Duration{0, 0, 2 * interval, interval / 3}, []int{200, 429, 429, 200, 429}},
		{"h002.sim.test", []time.Duration{0, 2 * interval}, []int{200, 503, 200}},
		{"h003.sim.test", []time.Duration{0, 0}, []int{200, 200, 200}},
	} {
		t.Run(tc.host, func(t *testing.T) {
			u := w.URL(tc.host, "/")
			for i, want := range tc.want {
				if i > 0 {
					time.Sleep(tc.sleeps[i-1])
				}
				resp, _ := get(t, w, u)
				if resp.StatusCode != want {
					t.Errorf("request %d: status %d, want %d", i, resp.StatusCode, want)
				}
				if resp.StatusCode != 200 && resp.Header.Get("Retry-After") != "" {
					t.Errorf("request %d: a throttled answer with Retry-After %q", i, resp.Header.Get("Retry-After"))
				}
			}
		})
	}
}
