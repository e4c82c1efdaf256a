package main

import (
	"bytes"
	"net"
	"net/netip"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestClusterKillNode runs the command as three processes with discovered
// membership (-lease), kills one with SIGKILL once it has fetched pages,
// and never restarts it: the two others take its shards over, with their
// queues, and finish the crawl. Every reachable page is fetched, none
// twice except what the killed node had in flight, and no host ever sees
// two requests at once.
func TestClusterKillNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command: not in -short mode")
	}
	bin := filepath.Join(t.TempDir(), "crawler")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: 12, MeanPages: 8, MaxPages: 30, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	natsAddr := l.Addr().String()
	l.Close()

	common := []string{"-seeds", strings.Join(web.Seeds(), ","), "-dns", srv.Addr(), "-allow-private", "-private-suffixes", web.Domain(),
		"-workers", "8", "-delay-factor", "2", "-max-per-host", "40", "-lease", "2s", "-handoff-gap", "200ms", "-quiet"}
	start := func(name string, extra ...string) (*exec.Cmd, *bytes.Buffer) {
		args := append(append([]string{}, common...), "-node", name, "-user-agent", "crawlkit-node-"+name, "-out", filepath.Join(t.TempDir(), name))
		cmd := boundCommand(t, 2*time.Minute, bin, append(args, extra...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	a, aOut := start("a", "-nats-embed", natsAddr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", natsAddr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			a.Process.Kill()
			t.Fatalf("node a's NATS server never listened:\n%s", aOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, bOut := start("b", "-nats", "nats://"+natsAddr)
	c, cOut := start("c", "-nats", "nats://"+natsAddr)
	fetchedBy := func(ua string) int {
		n := 0
		for _, r := range web.Log() {
			if r.UserAgent == ua && r.Path != "/robots.txt" {
				n++
			}
		}
		return n
	}
	// Kill whichever of b and c is crawling first (a embeds the server).
	victim, victimOut, other, otherOut, vname := c, cOut, b, bOut, "c"
	for {
		if fetchedBy("crawlkit-node-b") >= 3 {
			victim, victimOut, other, otherOut, vname = b, bOut, c, cOut, "b"
			break
		}
		if fetchedBy("crawlkit-node-c") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("neither b nor c fetched pages:\n%s\n%s", bOut, cOut)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := victim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	victim.Wait()
	killed := time.Now()
	errO := other.Wait()
	errA := a.Wait()
	if errA != nil || errO != nil {
		t.Fatalf("node a: %v\n%s\nsurvivor: %v\n%s\nkilled %s:\n%s", errA, aOut, errO, otherOut, vname, victimOut)
	}
	t.Logf("the survivors ended %v after %s was killed", time.Since(killed).Round(time.Millisecond), vname)

	log := web.Log()
	for host, n := range fetchtest.MaxConcurrency(log) {
		if n > 1 {
			t.Errorf("host %s: %d requests in flight at once", host, n)
		}
	}
	inFlight := map[string]bool{}
	times := map[string]int{}
	for _, r := range log {
		p := r.Host + r.Path
		// In flight: its outcome may not have reached the journal (a
		// commit on a loaded machine can take a second or more).
		if r.UserAgent == "crawlkit-node-"+vname && !r.End.Before(killed.Add(-2*time.Second)) {
			inFlight[p] = true
		}
		if !strings.HasSuffix(r.Path, ".txt") && r.Status != 429 && r.Status != 503 {
			times[p]++
		}
	}
	for p, n := range times {
		if n > 1 && !inFlight[p] {
			t.Errorf("%s fetched %d times", p, n)
		}
	}
	filters := frontier.DefaultFilters()
	if missed := web.Missed("crawlkit", func(u string) bool {
		pu, err := url.Parse(u)
		return err != nil || filters.Filter(pu) != nil
	}); len(missed) > 0 {
		t.Errorf("%d reachable pages fetched by no node, e.g. %v", len(missed), missed[:min(5, len(missed))])
	}
}
