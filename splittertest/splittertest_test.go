package splittertest_test

import (
	"context"
	"hash/fnv"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/splittertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memCluster is the second HostSplitter the suite is checked against: a
// host belongs to node FNV-1a(host) mod n, and Send hands each URL to its
// owner's receiver over a channel. A count of the URLs sent and not yet
// received makes Idle exact.
type memCluster struct {
	n        int
	inboxes  []chan frontier.URL
	inflight atomic.Int64
	wg       sync.WaitGroup
	broken   string // the rule a broken variant breaks, "" for none
}

func newMemCluster(t *testing.T, n int, deliver func(int, frontier.URL), broken string) []crawlkit.HostSplitter {
	c := &memCluster{n: n, broken: broken}
	var out []crawlkit.HostSplitter
	for i := range n {
		in := make(chan frontier.URL, 1024)
		c.inboxes = append(c.inboxes, in)
		c.wg.Go(func() {
			for u := range in {
				if broken == "idle-early" {
					c.inflight.Add(-1)
					deliver(i, u)
					continue
				}
				deliver(i, u)
				c.inflight.Add(-1)
			}
		})
		out = append(out, &memSplitter{c: c, self: i})
	}
	t.Cleanup(func() {
		for _, in := range c.inboxes {
			close(in)
		}
		c.wg.Wait()
	})
	return out
}

func (c *memCluster) owner(host string) int {
	h := fnv.New64a()
	h.Write([]byte(host))
	return int(h.Sum64() % uint64(c.n))
}

type memSplitter struct {
	c     *memCluster
	self  int
	calls atomic.Int64
}

func (s *memSplitter) Local(host string) bool {
	switch s.c.broken {
	case "local-everywhere":
		return true
	case "unstable-local":
		if s.calls.Add(1)%97 == 0 {
			return s.c.owner(host) != s.self
		}
	}
	return s.c.owner(host) == s.self
}

func (s *memSplitter) Send(ctx context.Context, urls []frontier.URL) error {
	for _, u := range urls {
		o := s.c.owner(frontier.HostKey(u.URL))
		if s.c.broken == "misdelivers" {
			o = (o + 1) % s.c.n
		}
		s.c.inflight.Add(1)
		select {
		case s.c.inboxes[o] <- u:
		case <-ctx.Done():
			s.c.inflight.Add(-1)
			return ctx.Err()
		}
	}
	return nil
}

func (s *memSplitter) Idle() bool { return s.c.inflight.Load() == 0 }

func TestMemSplitter(t *testing.T) {
	splittertest.Run(t, splittertest.Harness{
		New: func(t *testing.T, nodes []string, deliver func(int, frontier.URL)) []crawlkit.HostSplitter {
			return newMemCluster(t, len(nodes), deliver, "")
		},
	})
}

// TestBrokenSplitterHelper is run by TestSuiteCatchesBrokenSplitters in
// a child process.
func TestBrokenSplitterHelper(t *testing.T) {
	how := os.Getenv("SPLITTERTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenSplitters")
	}
	splittertest.Run(t, splittertest.Harness{
		New: func(t *testing.T, nodes []string, deliver func(int, frontier.URL)) []crawlkit.HostSplitter {
			return newMemCluster(t, len(nodes), deliver, how)
		},
	})
}

// TestSuiteCatchesBrokenSplitters checks the suite: a splitter breaking
// one rule fails the check that covers it.
func TestSuiteCatchesBrokenSplitters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"idle-early":       "Idle",
		"local-everywhere": "Partition",
		"unstable-local":   "LocalStable",
		"misdelivers":      "Send",
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenSplitterHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SPLITTERTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a splitter that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenSplitterHelper/"+check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
			}
		})
	}
}
