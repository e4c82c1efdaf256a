package frontiertest_test

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// The self-tests: every suite fails an implementation that breaks one of
// its rules, in the check that covers the rule. Each broken
// implementation runs its suite in a child process (the test binary run
// again with FRONTIERTEST_BROKEN set), whose failure is the expected
// outcome.

// brokenFrontier is Mercator with one capability broken.
type brokenFrontier struct {
	*frontier.Mercator
	how string
}

// Poll never says when something will be ready.
func (b brokenFrontier) Poll() (*frontier.Lease, time.Time, error) {
	l, ready, err := b.Mercator.Poll()
	if b.how == "poll-no-ready" {
		ready = time.Time{}
	}
	return l, ready, err
}

// Stats forgets the leases.
func (b brokenFrontier) Stats() frontier.Stats {
	s := b.Mercator.Stats()
	if b.how == "stats-no-leased" {
		s.Leased = 0
	}
	return s
}

// Hold does nothing.
func (b brokenFrontier) Hold(key string, until time.Time) {
	if b.how != "hold-ignored" {
		b.Mercator.Hold(key, until)
	}
}

// inFlight counts calls under way, for implementations that answer
// differently when called concurrently.
var inFlight atomic.Int32

func concurrently() bool {
	n := inFlight.Add(1)
	defer inFlight.Add(-1)
	time.Sleep(time.Microsecond)
	return n > 1 || inFlight.Load() > 1
}

// brokenFilter returns a filter breaking the rule how names.
func brokenFilter(how string) frontier.URLFilter {
	return frontier.FilterFunc(func(u *url.URL) error {
		switch how {
		case "bare-error":
			if strings.HasPrefix(u.Path, "/private") {
				return errors.New("private")
			}
		case "panics":
			_ = u.Host[len(u.Host)-1] // an empty host panics
		case "concurrent":
			if concurrently() {
				return &frontier.Rejection{Reason: frontier.ReasonOther, URL: u.String(), Detail: "busy"}
			}
		case "unknown-reason":
			if strings.HasPrefix(u.Path, "/private") {
				return &frontier.Rejection{Reason: 200, URL: u.String()}
			}
		}
		if strings.HasPrefix(u.Path, "/private") {
			return &frontier.Rejection{Reason: frontier.ReasonPattern, URL: u.String()}
		}
		return nil
	})
}

var filterCases = frontiertest.Cases{
	{URL: "http://a.test/"},
	{URL: "http://a.test/private/x", Reject: true, Reason: frontier.ReasonPattern},
	{URL: "http://b.test/public"},
}

// brokenPrioritizer is Depth with one rule broken.
type brokenPrioritizer struct {
	how    string
	rng    *rand.Rand
	broken atomic.Bool
}

func (p *brokenPrioritizer) Priority(u *frontier.URL, levels int) int {
	n := frontier.Depth{}.Priority(u, levels)
	switch p.how {
	case "out-of-range":
		if u.Depth > 100 {
			return levels
		}
	case "random":
		return p.rng.IntN(levels)
	case "concurrent":
		if concurrently() {
			return (n + 1) % levels
		}
	case "observer-range":
		if p.broken.Load() {
			return -1
		}
	}
	return n
}

// brokenObserver is a FetchObserver whose Fetched breaks the range rule.
type brokenObserver struct{ *brokenPrioritizer }

func (o brokenObserver) Fetched(string, []string) { o.broken.Store(true) }

// brokenClock is a FakeClock with one rule broken.
type brokenClock struct {
	*frontiertest.FakeClock
	how   string
	reads atomic.Int64
}

func (c *brokenClock) Now() time.Time {
	now := c.FakeClock.Now()
	if c.how == "now-goes-back" && c.reads.Add(1)%100 == 0 {
		return now.Add(-time.Millisecond)
	}
	return now
}

func (c *brokenClock) NewTimer(d time.Duration) frontier.Timer {
	switch c.how {
	case "fires-early":
		d /= 2
	case "stop-lies":
		return lyingTimer{c.FakeClock.NewTimer(d)}
	}
	return c.FakeClock.NewTimer(d)
}

// lyingTimer reports a successful Stop as a failed one.
type lyingTimer struct{ frontier.Timer }

func (t lyingTimer) Stop() bool { t.Timer.Stop(); return false }

// broken lists the broken implementations: the suite each runs and the
// check that must fail.
var broken = map[string]struct {
	check string
	run   func(t *testing.T)
}{
	"store/lifo": {"FIFO", func(t *testing.T) { frontiertest.RunStore(t, sliceHarness(false, "lifo")) }},
	"store/due-ignores-max": {"DueLimits", func(t *testing.T) {
		frontiertest.RunStore(t, sliceHarness(false, "due-ignores-max"))
	}},
	"store/scan-skips-deferred": {"Scan", func(t *testing.T) {
		frontiertest.RunStore(t, sliceHarness(false, "scan-skips-deferred"))
	}},
	"store/sync-forgets-leases": {"SyncReopen", func(t *testing.T) {
		frontiertest.RunStore(t, sliceHarness(true, "sync-forgets-leases"))
	}},
	"frontier/poll-no-ready":   {"Poll", runBrokenFrontier("poll-no-ready")},
	"frontier/stats-no-leased": {"Stats", runBrokenFrontier("stats-no-leased")},
	"frontier/hold-ignored":    {"Hold", runBrokenFrontier("hold-ignored")},
	"frontier/sync-forgets-leases": {"Sync", func(t *testing.T) {
		frontiertest.Run(t, mercatorOver("sync-forgets-leases", func(m *frontier.Mercator) frontier.Frontier { return m }))
	}},
	"filter/bare-error":        {"Cases", runBrokenFilter("bare-error")},
	"filter/unknown-reason":    {"Cases", runBrokenFilter("unknown-reason")},
	"filter/panics":            {"OddURLs", runBrokenFilter("panics")},
	"filter/concurrent":        {"Concurrent", runBrokenFilter("concurrent")},
	"prioritizer/out-of-range": {"Range", runBrokenPrioritizer("out-of-range")},
	"prioritizer/random":       {"Deterministic", runBrokenPrioritizer("random")},
	"prioritizer/concurrent":   {"Concurrent", runBrokenPrioritizer("concurrent")},
	"prioritizer/observer-range": {"FetchObserver", func(t *testing.T) {
		frontiertest.RunPrioritizer(t, func() frontier.Prioritizer {
			return brokenObserver{&brokenPrioritizer{how: "observer-range"}}
		})
	}},
	"clock/now-goes-back": {"NowMonotone", runBrokenClock("now-goes-back")},
	"clock/fires-early":   {"TimerFiresOnce", runBrokenClock("fires-early")},
	"clock/stop-lies":     {"Stop", runBrokenClock("stop-lies")},
}

func runBrokenFrontier(how string) func(*testing.T) {
	return func(t *testing.T) {
		frontiertest.Run(t, frontiertest.Harness{
			New: func(t *testing.T, o frontier.Options) frontier.Frontier {
				m, err := frontier.NewMercator(&o)
				if err != nil {
					t.Fatal(err)
				}
				return brokenFrontier{m, how}
			},
			Prioritized: true,
		})
	}
}

func runBrokenFilter(how string) func(*testing.T) {
	return func(t *testing.T) {
		frontiertest.RunFilter(t, func() frontier.URLFilter { return brokenFilter(how) }, filterCases)
	}
}

func runBrokenPrioritizer(how string) func(*testing.T) {
	return func(t *testing.T) {
		frontiertest.RunPrioritizer(t, func() frontier.Prioritizer {
			return &brokenPrioritizer{how: how, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
		})
	}
}

func runBrokenClock(how string) func(*testing.T) {
	return func(t *testing.T) {
		c := &brokenClock{FakeClock: frontiertest.NewFakeClock(frontiertest.Epoch), how: how}
		frontiertest.RunClock(t, c, c.Advance)
	}
}

// TestBrokenHelper runs one suite on one broken implementation; it is
// run by TestSuitesCatchBrokenImplementations in a child process.
func TestBrokenHelper(t *testing.T) {
	how := os.Getenv("FRONTIERTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuitesCatchBrokenImplementations")
	}
	b, ok := broken[how]
	if !ok {
		t.Fatalf("no broken implementation %q", how)
	}
	b.run(t)
}

// TestSuitesCatchBrokenImplementations checks the suites: each broken
// implementation fails the check that covers what it breaks.
func TestSuitesCatchBrokenImplementations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suites in child processes")
	}
	for how, b := range broken {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenHelper$/^"+b.check+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "FRONTIERTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenHelper/"+b.check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", b.check, how, out)
			}
		})
	}
}
