package crawlkit

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestBackoffBlocksThrottlingHosts: two hosts of the simulated web
// throttle (one answers 429, one 503, without Retry-After, to a request
// that comes sooner than 100 ms after the one before). The whole host is
// blocked at each such answer for a block that doubles: the request log
// shows the growing gaps, every URL that was throttled is fetched in the
// end, and Stats.Backoffs counts the blocks.
func TestBackoffBlocksThrottlingHosts(t *testing.T) {
	const interval = 100 * time.Millisecond
	bo := BackoffOptions{Base: 30 * time.Millisecond, Max: 240 * time.Millisecond, Jitter: -1, Forgive: time.Minute}
	throttling := map[string]int{"h001.sim.test": 429, "h002.sim.test": 503}
	limits := map[string]fetchtest.RateLimit{}
	for h, st := range throttling {
		limits[h] = fetchtest.RateLimit{Interval: interval, Status: st}
	}
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 12, MeanPages: 4, MaxPages: 6, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RateLimits: limits})
	defer web.Close()
	for h := range throttling {
		if len(web.PagesOf(h)) == 0 {
			t.Fatalf("the web has no host %s", h)
		}
	}
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.DelayFactor, cfg.MinDelay = -1, 10*time.Millisecond
		cfg.MaxRetries = 6
		cfg.Backoff = &bo
		// The status host's 503s carry Retry-After: 1, not back-off.
		cfg.Filters = append(frontier.DefaultFilters(), frontier.Domains(nil, []string{"status.sim.test"}))
	})
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byHost := checkGaps(t, web.Log(), 0)
	var throttled uint64
	for host, status := range throttling {
		rs := byHost[host]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		answered := map[string]bool{}
		level := 0
		for i, r := range rs {
			if r.Status != status {
				answered[r.Path] = true
				continue
			}
			throttled++
			level++ // never forgiven within the test's minute
			if i+1 == len(rs) {
				t.Errorf("%s: the last request, %s, was throttled", host, r.Path)
				break
			}
			block := min(bo.Base<<(level-1), bo.Max)
			if gap := rs[i+1].Start.Sub(r.End); gap < block-2*time.Millisecond {
				t.Errorf("%s: incident %d (%s) blocks the host for %v; the next request came after %v", host, level, r.Path, block, gap)
			}
		}
		if level < 3 {
			t.Errorf("%s was throttled %d times: the test did not make it back off much", host, level)
		}
		for _, r := range rs {
			if r.Status == status && !answered[r.Path] {
				t.Errorf("%s%s was throttled and never fetched", host, r.Path)
			}
		}
	}
	if s.Backoffs != throttled {
		t.Errorf("Stats.Backoffs = %d, want the %d throttled answers", s.Backoffs, throttled)
	}
	if !strings.Contains(s.Summary(), "backed off") {
		t.Errorf("the summary does not mention the back-off:\n%s", s.Summary())
	}
}

// TestBackoffLevels follows one host's back-off state through incidents,
// answers, connection failures and forgiveness.
func TestBackoffLevels(t *testing.T) {
	o, err := (&BackoffOptions{Base: time.Second, Max: 8 * time.Second, Jitter: -1, Forgive: time.Minute, Failures: 2}).resolved()
	if err != nil {
		t.Fatal(err)
	}
	c := &Crawler{cfg: Config{Logger: quietLogger()}, backoff: o, bo: map[string]Backoff{}, state: NewMemState(),
		pol: frontier.Politeness{MaxDelay: time.Hour}}
	t0 := time.Unix(1_800_000_000, 0)
	steps := []struct {
		at        time.Duration // after t0
		sig       signal
		wantBlock time.Duration
		wantLevel int32
	}{
		{0, signalAnswered, 0, 0},
		{1 * time.Second, signalThrottle, 1 * time.Second, 1},
		{3 * time.Second, signalThrottle, 2 * time.Second, 2},
		{6 * time.Second, signalAnswered, 0, 2},
		{7 * time.Second, signalThrottle, 4 * time.Second, 3},
		{12 * time.Second, signalThrottle, 8 * time.Second, 4},
		{21 * time.Second, signalThrottle, 8 * time.Second, 5}, // capped at Max
		{30 * time.Second, signalFailed, 0, 5},                 // one failure: no incident yet
		{31 * time.Second, signalAnswered, 0, 5},               // an answer resets the failures
		{32 * time.Second, signalFailed, 0, 5},
		{33 * time.Second, signalFailed, 8 * time.Second, 6}, // two in a row
		// More than Forgive after the last block ended (at 41 s):
		// forgiven, back to Base.
		{102 * time.Second, signalThrottle, 1 * time.Second, 1},
	}
	for i, st := range steps {
		w := &work{signal: st.sig}
		block, _, err := c.backoffLocked(context.Background(), w, "h:a.test", t0.Add(st.at))
		if err != nil {
			t.Fatal(err)
		}
		if block != st.wantBlock || c.bo["h:a.test"].Level != st.wantLevel {
			t.Errorf("step %d (%v at %v): block %v, level %d; want %v, %d", i, st.sig, st.at, block, c.bo["h:a.test"].Level, st.wantBlock, st.wantLevel)
		}
	}
	if c.c.backoffs.Load() != 7 {
		t.Errorf("%d blocks counted, want 7", c.c.backoffs.Load())
	}
}

// TestBackoffResumes: a host backed off by an earlier run is found in
// the State, and its level goes on from there.
func TestBackoffResumes(t *testing.T) {
	o, _ := (&BackoffOptions{Base: time.Second, Jitter: -1}).resolved()
	st := NewMemState()
	now := time.Unix(1_800_000_000, 0)
	if err := st.Commit(context.Background(), &Txn{Keys: []KeyDelta{{Key: "h:a.test", Backoff: &Backoff{Level: 3, Last: now}}}}); err != nil {
		t.Fatal(err)
	}
	c := &Crawler{cfg: Config{Logger: quietLogger()}, backoff: o, bo: map[string]Backoff{}, state: st,
		pol: frontier.Politeness{MaxDelay: 5 * time.Second}}
	block, bo, err := c.backoffLocked(context.Background(), &work{signal: signalThrottle}, "h:a.test", now.Add(time.Second))
	if err != nil || block != 5*time.Second || bo == nil || bo.Level != 4 {
		t.Errorf("after a resume: block %v, state %+v, %v; want 8s at level 4, capped by MaxDelay to 5s", block, bo, err)
	}
}

func TestBackoffOptionsResolved(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    *BackoffOptions
		ok   bool
	}{
		{"nil", nil, true},
		{"off", &BackoffOptions{Base: -1}, true},
		{"jitter 1", &BackoffOptions{Jitter: 1}, false},
		{"max below base", &BackoffOptions{Base: time.Hour, Max: time.Minute}, false},
		{"negative forgive", &BackoffOptions{Forgive: -1}, false},
		{"status 200", &BackoffOptions{Statuses: []int{200}}, false},
		{"status 403", &BackoffOptions{Statuses: []int{403, 429}}, true},
		{"negative failures", &BackoffOptions{Failures: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.o.resolved()
			if (err == nil) != tc.ok {
				t.Fatalf("resolved() = %+v, %v; want ok %v", r, err, tc.ok)
			}
			if err == nil && tc.o == nil && (r.Base != time.Minute || r.Max != 24*time.Hour || r.Forgive != 30*time.Minute || r.Failures != 0 || len(r.Statuses) != 2) {
				t.Errorf("defaults %+v", r)
			}
		})
	}
	if _, err := New(Config{Seeds: []string{"http://a.test/"}, Backoff: &BackoffOptions{Jitter: 2}}); err == nil {
		t.Error("New accepted Backoff.Jitter 2")
	}
}
