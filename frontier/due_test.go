package frontier

import (
	"math"
	"testing"
	"time"
)

// TestGaps: the gap Done waits is Gap, and the one MostWork counts a
// host's URLs at is Gap without the Retry-After.
func TestGaps(t *testing.T) {
	for _, p := range []Politeness{
		{K: 10, MinDelay: time.Second, MaxDelay: time.Minute},
		{}, // MaxDelay's default, an hour
		{K: -1, MinDelay: 20 * time.Millisecond},
	} {
		for _, r := range []Result{
			{},
			{Duration: 200 * time.Millisecond},
			{RetryAfter: 7 * time.Second},
			{RetryAfter: 2 * time.Hour, CrawlDelay: 5 * time.Second},
			{RetryAfter: -time.Second, Duration: time.Millisecond},
			{MinDelay: 3 * time.Second, RetryAfter: time.Second},
		} {
			gap, steady := p.gaps(r)
			noRA := r
			noRA.RetryAfter = 0
			if want := p.Gap(r); gap != want {
				t.Errorf("%+v, %+v: gap %v, want Gap %v", p, r, gap, want)
			}
			if want := p.Gap(noRA); steady != want {
				t.Errorf("%+v, %+v: steady %v, want %v", p, r, steady, want)
			}
		}
	}
}

// TestDue: a host holding n URLs is due n gaps before its te, and the
// lead is bounded so that no count or gap overflows.
func TestDue(t *testing.T) {
	const te = int64(1_800_000_000_000_000_000) // 2027, in ns
	for _, tc := range []struct {
		n    int32
		gap  time.Duration
		want int64
	}{
		{0, time.Second, te},
		{3, time.Second, te - 3e9},
		{5, 0, te},
		{4, -time.Second, te}, // never set: no lead
		{-1, time.Second, te},
		{math.MaxInt32, time.Hour, te - maxLead},
		{math.MaxInt32, math.MaxInt64, te - maxLead},
	} {
		b := backQ{te: te, n: tc.n, gap: int64(tc.gap)}
		if got := b.due(); got != tc.want {
			t.Errorf("n %d gap %v: due %d, want %d", tc.n, tc.gap, got, tc.want)
		}
	}
}
