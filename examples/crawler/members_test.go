package main

import (
	"bytes"
	"net"
	"net/netip"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	web, a, aOut, start := startLeaseCluster(t)
	b, bOut := start("b", "-nats", a.natsURL)
	c, cOut := start("c", "-nats", a.natsURL)
	deadline := time.Now().Add(30 * time.Second)
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

	checkLeaseCrawl(t, web, vname, killed)
}

// TestClusterRestartNode kills a node of a crawl with discovered
// membership once it has fetched pages and restarts it with -resume on
// its -out directory: it rejoins, and its page count goes on from what it
// had committed (the count -max-pages is checked against), while the
// crawl as a whole stays complete and polite.
func TestClusterRestartNode(t *testing.T) {
	web, a, aOut, start := startLeaseCluster(t)
	b, bOut := start("b", "-nats", a.natsURL)
	fetched := func() (n int) {
		for _, r := range web.Log() {
			// Pages: not robots.txt, not sitemaps.
			if r.UserAgent == "crawlkit-node-b" && r.Status == 200 && !strings.HasSuffix(r.Path, ".txt") && !strings.HasSuffix(r.Path, ".xml") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); fetched() < 12; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node b fetched %d pages in 30 s:\n%s", fetched(), bOut)
		}
	}
	if err := b.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	killed, first := time.Now(), fetched()
	b2, b2Out := start("b", "-resume", b.dir)
	errB, errA := b2.Wait(), a.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("node a: %v\n%s\nnode b restarted: %v\n%s\nnode b killed:\n%s", errA, aOut, errB, b2Out, bOut)
	}
	m := regexp.MustCompile(`elapsed [^,]+, (\d+) pages`).FindStringSubmatch(b2Out.String())
	if m == nil {
		t.Fatalf("no page count in node b's summary:\n%s", b2Out)
	}
	counted, _ := strconv.Atoi(m[1])
	all := fetched()
	t.Logf("node b fetched %d pages, was killed, and %d after its restart; its summary counts %d pages", first, all-first, counted)
	// At most a page per worker (8) was fetched and not committed when
	// it died.
	if counted+8 < all || counted > all {
		t.Errorf("the restarted node counts %d pages; it fetched %d in its two lives", counted, all)
	}
	checkLeaseCrawl(t, web, "b", killed)
}

// leaseNode is a node of startLeaseCluster: its command and directory.
type leaseNode struct {
	*exec.Cmd
	dir     string
	natsURL string // the NATS server node a embeds
}

// startLeaseCluster builds the command and starts node a of a crawl with
// discovered membership (-lease) on a small simulated web, embedding the
// NATS server; start starts another node (or restarts one, given its
// -out directory's -resume flags). Skipped in -short mode.
func startLeaseCluster(t *testing.T) (*fetchtest.Web, *leaseNode, *bytes.Buffer, func(name string, extra ...string) (*leaseNode, *bytes.Buffer)) {
	if testing.Short() {
		t.Skip("builds and runs the command: not in -short mode")
	}
	bin := buildCrawler(t)
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: 12, MeanPages: 8, MaxPages: 30, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	t.Cleanup(web.Close)
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
	start := func(name string, extra ...string) (*leaseNode, *bytes.Buffer) {
		n := &leaseNode{dir: filepath.Join(t.TempDir(), name), natsURL: "nats://" + natsAddr}
		args := append(append([]string{}, common...), "-node", name, "-user-agent", "crawlkit-node-"+name, "-out", n.dir)
		if len(extra) > 0 && extra[0] == "-resume" {
			n.dir, args = extra[1], []string{"-out", extra[1], "-resume"}
		} else {
			args = append(args, extra...)
		}
		n.Cmd = boundCommand(t, 2*time.Minute, bin, args...)
		var out bytes.Buffer
		n.Stdout, n.Stderr = &out, &out
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		return n, &out
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
	return web, a, aOut, start
}

// checkLeaseCrawl checks a crawl of startLeaseCluster's web in which
// node victim was killed at killed: no host saw two requests at once, no
// page was fetched twice unless the victim had it in flight, and every
// reachable page was fetched.
func checkLeaseCrawl(t *testing.T, web *fetchtest.Web, victim string, killed time.Time) {
	t.Helper()
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
		if r.UserAgent == "crawlkit-node-"+victim && !r.End.Before(killed.Add(-2*time.Second)) {
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
