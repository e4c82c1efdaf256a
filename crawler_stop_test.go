package crawlkit

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// plainFrontier hides every optional interface of the frontier it wraps:
// a frontier that does not report its size.
type plainFrontier struct{ f frontier.Frontier }

func (p plainFrontier) Add(ctx context.Context, urls ...frontier.URL) error {
	return p.f.Add(ctx, urls...)
}
func (p plainFrontier) Next(ctx context.Context) (*frontier.Lease, error) { return p.f.Next(ctx) }
func (p plainFrontier) Done(l *frontier.Lease, r frontier.Result) error   { return p.f.Done(l, r) }

// TestRunEndsWhenLastPageIsDone: with a frontier that counts its leases,
// Run ends as soon as the last page in flight is done, not at the next
// housekeeping tick (here an hour away: without the check on the last
// page, the crawl would end only when ctx does, "cancelled"). A frontier
// that does not report its size still ends after two quiet ticks.
func TestRunEndsWhenLastPageIsDone(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 3, MeanPages: 4, ChangePeriods: []time.Duration{0},
		RetryAfter: time.Millisecond, CrawlDelay: time.Millisecond})
	defer web.Close()
	for _, tc := range []struct {
		name  string
		tick  time.Duration
		plain bool
	}{
		{"stater", time.Hour, false},
		{"plain", 20 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f frontier.Frontier
			if tc.plain {
				m, err := frontier.NewMercator(&frontier.Options{Workers: 4})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				f = plainFrontier{m}
			}
			c := newTestCrawler(t, web, func(cfg *Config) {
				cfg.Workers, cfg.Frontier, cfg.MaxRetries = 4, f, -1
			})
			c.tick = tc.tick
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := c.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r := c.StopReason(); r != "frontier empty" {
				t.Errorf("stop reason %q, want %q", r, "frontier empty")
			}
			if s.Pages() == 0 {
				t.Error("no page fetched")
			}
		})
	}
}
