package frontier_test

import (
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// TestPolitenessGap: the gap is the largest of MinDelay (or the result's
// own MinDelay), K × the fetch time, Crawl-delay and Retry-After, capped
// by MaxDelay.
func TestPolitenessGap(t *testing.T) {
	p := frontier.Politeness{K: 10, MinDelay: time.Second, MaxDelay: time.Minute}
	for _, tc := range []struct {
		name string
		r    frontier.Result
		want time.Duration
	}{
		{"min delay", frontier.Result{Duration: 10 * time.Millisecond}, time.Second},
		{"k × fetch time", frontier.Result{Duration: 200 * time.Millisecond}, 2 * time.Second},
		{"crawl-delay", frontier.Result{CrawlDelay: 5 * time.Second}, 5 * time.Second},
		{"retry-after", frontier.Result{RetryAfter: 7 * time.Second}, 7 * time.Second},
		{"capped", frontier.Result{RetryAfter: time.Hour}, time.Minute},
		{"host's min delay, lower", frontier.Result{MinDelay: 100 * time.Millisecond, Duration: time.Millisecond}, 100 * time.Millisecond},
		{"host's min delay, higher", frontier.Result{MinDelay: 3 * time.Second}, 3 * time.Second},
		{"host's min delay none", frontier.Result{MinDelay: -1, Duration: time.Millisecond}, 10 * time.Millisecond},
		{"host's min delay under crawl-delay", frontier.Result{MinDelay: -1, CrawlDelay: 2 * time.Second}, 2 * time.Second},
	} {
		if got := p.Gap(tc.r); got != tc.want {
			t.Errorf("%s: Gap = %v, want %v", tc.name, got, tc.want)
		}
	}
}
