package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestCrashConsistency kills the crawler process with SIGKILL at random
// moments of a disk-backed crawl (-out) and resumes it after each kill:
// 4 kills by default, 20 with CRAWLKIT_LONG=1. At the end every page
// reachable under robots.txt was fetched (none lost across the kills),
// and the pages fetched more than once number at most workers × kills
// (only the work in flight at a kill may be redone).
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command: not in -short mode")
	}
	kills := 4
	if os.Getenv("CRAWLKIT_LONG") == "1" {
		kills = 20
	}
	bin := filepath.Join(t.TempDir(), "crawler")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	hosts, pages := 16, 10
	if kills > 4 {
		hosts, pages = 40, 14
	}
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 17, Hosts: hosts, MeanPages: pages, Latency: 5 * time.Millisecond,
		ChangePeriods: []time.Duration{0}, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
	defer web.Close()
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))

	// The host budget bounds the spider traps; it must exceed the largest
	// ordinary host, or pages are refused by design rather than lost.
	budget := 60
	for _, h := range web.Hosts() {
		budget = max(budget, 2*len(web.PagesOf(h)))
	}
	const workers = 8
	out := t.TempDir()
	args := []string{"-seeds", strings.Join(web.Seeds(), ","), "-dns", srv.Addr(), "-allow-private",
		"-out", out, "-workers", fmt.Sprint(workers), "-delay-factor", "2", "-max-per-host", fmt.Sprint(budget), "-quiet"}

	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	deadline := time.Now().Add(3 * time.Minute)
	killed, finished := 0, false
	for run := 0; !finished && time.Now().Before(deadline); run++ {
		a := args
		if run > 0 {
			a = append(a[:len(a):len(a)], "-resume")
		}
		cmd := boundCommand(t, 2*time.Minute, bin, a...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		before := len(web.Log())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if killed >= kills {
			if err := <-done; err != nil {
				t.Fatalf("final run %d: %v\nstderr:\n%s", run, err, stderr.String())
			}
			finished = true
			break
		}
		// Kill after a random number of new requests (1–40), so the kill
		// lands anywhere: during start-up and recovery, mid-fetch,
		// mid-journal write, mid-checkpoint.
		want := before + 1 + rng.IntN(40)
		var err error
	wait:
		for {
			select {
			case err = <-done:
				break wait
			case <-time.After(2 * time.Millisecond):
				if len(web.Log()) >= want {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					err = <-done
					killed++
					break wait
				}
			}
		}
		if t.Failed() {
			t.FailNow() // boundCommand killed a run that did not end
		}
		if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
			continue // killed
		}
		if err != nil {
			t.Fatalf("run %d: %v\nstderr:\n%s", run, err, stderr.String())
		}
		finished = true // the crawl ended before the kill
	}
	if !finished {
		t.Fatalf("the crawl did not finish by the deadline after %d kills", killed)
	}
	t.Logf("%d kills, %d requests in all, %d pages in the web", killed, len(web.Log()), len(web.Pages()))
	if killed == 0 {
		t.Fatalf("no kill landed: the crawl is too short for the test")
	}

	type key struct{ host, path string }
	times, retried := map[key]int{}, map[key]bool{}
	for _, r := range web.Log() {
		if strings.Contains(r.Path, "robots") && strings.HasSuffix(r.Path, ".txt") {
			continue // robots.txt is fetched anew by every run
		}
		k := key{r.Host, r.Path}
		times[k]++
		if r.Status == 429 || r.Status == 503 {
			retried[k] = true
		}
	}
	twice := 0
	for k, n := range times {
		if n > 1 && !retried[k] {
			twice += n - 1
		}
	}
	t.Logf("%d repeated fetches (bound %d = %d workers × %d kills)", twice, workers*killed, workers, killed)
	if twice > workers*killed {
		t.Errorf("%d pages fetched again, more than workers × kills = %d", twice, workers*killed)
	}
	filters := frontier.DefaultFilters()
	lost := web.Missed("crawlkit", func(u string) bool {
		pu, err := url.Parse(u)
		return err != nil || filters.Filter(pu) != nil
	})
	if len(lost) > 0 {
		t.Errorf("%d reachable pages never fetched across %d kills, e.g. %v", len(lost), killed, lost[:min(5, len(lost))])
	}
	if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
		t.Errorf("%d robots.txt violations across the kills, first %+v", len(v), v[0])
	}
}
