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

// TestTwoProcessCluster runs the command as two processes that crawl one
// simulated web together, the first embedding the NATS server and the
// second joining it (IIR Figure 20.2): each host is fetched by one node
// only, and together they fetch every reachable page, none twice.
func TestTwoProcessCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command: not in -short mode")
	}
	bin := buildCrawler(t)
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
		"-workers", "8", "-delay-factor", "2", "-max-per-host", "40", "-nodes", "a,b", "-quiet"}
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
	errB := b.Wait()
	errA := a.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("node a: %v\n%s\nnode b: %v\n%s", errA, aOut, errB, bOut)
	}

	byHost := map[string]map[string]bool{}
	type key struct{ host, path string }
	times := map[key]int{}
	for _, r := range web.Log() {
		if byHost[r.Host] == nil {
			byHost[r.Host] = map[string]bool{}
		}
		byHost[r.Host][r.UserAgent] = true
		if !strings.HasSuffix(r.Path, ".txt") && r.Status != 429 && r.Status != 503 {
			times[key{r.Host, r.Path}]++
		}
	}
	agents := map[string]bool{}
	for h, uas := range byHost {
		if len(uas) != 1 {
			t.Errorf("host %s fetched by %d nodes: %v", h, len(uas), uas)
		}
		for ua := range uas {
			agents[ua] = true
		}
	}
	if len(agents) != 2 {
		t.Errorf("%d nodes fetched pages, want both: %v", len(agents), agents)
	}
	for k, n := range times {
		if n > 1 {
			t.Errorf("%s%s fetched %d times", k.host, k.path, n)
		}
	}
	filters := frontier.DefaultFilters()
	if missed := web.Missed("crawlkit", func(u string) bool {
		pu, err := url.Parse(u)
		return err != nil || filters.Filter(pu) != nil
	}); len(missed) > 0 {
		t.Errorf("%d reachable pages fetched by neither node, e.g. %v", len(missed), missed[:min(5, len(missed))])
	}
}
