package resolvertest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/resolvertest"
)

// waitingPrefetch resolves the names before it returns.
type waitingPrefetch struct{ *dns.Caching }

func (w waitingPrefetch) Prefetch(hosts ...string) {
	for _, h := range hosts {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		w.LookupNetIP(ctx, h)
		cancel()
	}
}

// noPrefetch does nothing.
type noPrefetch struct{ *dns.Caching }

func (noPrefetch) Prefetch(...string) {}

// TestBrokenPrefetcherHelper is run by TestSuiteCatchesBrokenPrefetchers
// in a child process.
func TestBrokenPrefetcherHelper(t *testing.T) {
	how := os.Getenv("RESOLVERTEST_BROKEN_PREFETCH")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenPrefetchers")
	}
	resolvertest.RunPrefetcher(t, resolvertest.Harness{New: func(t *testing.T, addr string) dns.Resolver {
		r, err := dns.New(&dns.Options{Nameservers: []string{addr}, Attempts: 1, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		if how == "waits" {
			return waitingPrefetch{r}
		}
		return noPrefetch{r}
	}})
}

// TestSuiteCatchesBrokenPrefetchers checks the Prefetcher suite: a
// Prefetch that waits for its answers fails ReturnsAtOnce, one that does
// nothing fails Cached.
func TestSuiteCatchesBrokenPrefetchers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"waits":   "ReturnsAtOnce",
		"nothing": "Cached",
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenPrefetcherHelper$/^"+check+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "RESOLVERTEST_BROKEN_PREFETCH="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a Prefetch that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenPrefetcherHelper/"+check) {
				t.Fatalf("the suite did not fail %s for a Prefetch that %s:\n%s", check, how, out)
			}
		})
	}
}
