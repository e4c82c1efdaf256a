package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// kill takes node name off the cluster as a kill -9 does: its NATS
// connection closes first (no farewell, no last flush), then its crawl
// is cancelled. The node is closed later, by stop, only to release it.
func (tc *testCluster) kill(name string) {
	tc.mu.Lock()
	nd, cancel, done := tc.nodes[name], tc.cancel[name], tc.done[name]
	if tc.killed == nil {
		tc.killed = map[string]bool{}
	}
	tc.killed[name] = true
	tc.mu.Unlock()
	nt, ok := nd.raw.(*NATS)
	if !ok {
		tc.t.Fatalf("kill %s: not on NATS", name)
	}
	nt.Conn().Close()
	cancel()
	<-done
	done <- nil // for stop
}

// pagesOf returns the pages the named nodes' crawlers processed so far.
func (tc *testCluster) pagesOf(names ...string) int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	n := 0
	for _, name := range names {
		n += tc.pages[name]
	}
	return n
}

// waitPages waits until the named nodes processed n pages, and fails
// the test if that takes longer than 30 s.
func (tc *testCluster) waitPages(n int, names ...string) {
	tc.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for tc.pagesOf(names...) < n {
		if time.Now().After(deadline) {
			tc.t.Fatalf("%v fetched only %d pages in 30 s, want %d", names, tc.pagesOf(names...), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// survivorRates crawls a worker-bound simulated web with three nodes on
// an embedded NATS server, measures the pages/s of n0 and n1 over window,
// kills n2 (its connection gone, no farewell), waits settle and measures
// their pages/s over window again. It returns both rates and the longest
// content-seen lookup of the survivors after the kill.
func survivorRates(t testing.TB, hosts int, window, settle time.Duration) (before, after float64, slowest time.Duration) {
	// 20 ms answers and many hosts: the 8 workers of a node, not the
	// politeness of a few hosts, bound its rate, so the rate stays
	// level while the frontier is deep.
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 9, Hosts: hosts, MeanPages: 20, ChangePeriods: []time.Duration{0},
		Latency: 20 * time.Millisecond, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
	defer web.Close()
	srv := startTestServer(t)
	nopts := natsOptions()
	tc := newTestCluster(t, web, 3, func(string) Options {
		return Options{NATSURL: srv.ClientURL(), NATS: nopts, Shards: 256}
	})
	tc.config = func(cfg *crawlkit.Config) { cfg.MaxRetries = -1; cfg.MaxPagesPerHost = 30 }
	for _, name := range tc.names {
		tc.start(name, "")
	}
	defer func() {
		for _, name := range tc.names {
			tc.stop(name)
		}
	}()
	// Past the start, when the frontiers are still thin.
	tc.waitPages(150, "n0", "n1")
	rate := func() float64 {
		p0, t0 := tc.pagesOf("n0", "n1"), time.Now()
		time.Sleep(window)
		return float64(tc.pagesOf("n0", "n1")-p0) / time.Since(t0).Seconds()
	}
	before = rate()
	tc.kill("n2")
	tc.dups.mu.Lock()
	tc.dups.slowest = 0
	tc.dups.mu.Unlock()
	time.Sleep(settle)
	after = rate()
	for _, name := range []string{"n0", "n1"} {
		if tc.node(name).localStatus().Busy == 0 {
			t.Fatalf("%s ran out of work during the measurement: make the web larger", name)
		}
	}
	tc.dups.mu.Lock()
	slowest = tc.dups.slowest
	tc.dups.mu.Unlock()
	for _, name := range []string{"n0", "n1"} {
		st := tc.node(name).ContentSeen().Stats()
		t.Logf("%s: %d remote lookups in %d requests, %d answered here, %d held, circuits open: %v",
			name, st.Remote, st.Batches, st.FailedOpen, st.Held, st.Open)
	}
	return before, after, slowest
}

// TestSurvivorsKeepTheirRate kills one of three nodes mid-crawl: the
// other two keep crawling at (nearly) their rate before, no lookup of a
// fingerprint the dead node owns blocking a worker. The bound here is
// generous (half the rate) for loaded machines; BenchmarkSurvivorRate
// reports the figure. Without the circuit breaker the survivors fell to
// a seventeenth.
func TestSurvivorsKeepTheirRate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a three-node crawl of a few seconds")
	}
	before, after, slowest := survivorRates(t, 240, time.Second, 200*time.Millisecond)
	t.Logf("survivors: %.0f pages/s before, %.0f after (%.0f%%); slowest lookup after the kill %v", before, after, 100*after/before, slowest)
	if after < before/2 {
		t.Errorf("the survivors fell from %.0f to %.0f pages/s", before, after)
	}
	// LookupTimeout (1 s) bounds a lookup to a node that hangs; a dead
	// one has no responder and costs nothing.
	if slowest > 1500*time.Millisecond {
		t.Errorf("a content lookup took %v after the kill", slowest)
	}
}

// BenchmarkSurvivorRate reports the survivors' pages/s after one of three
// nodes is killed as a percentage of their rate before, over 3 s windows.
// Run it by hand: go test -run=^$ -bench=SurvivorRate -benchtime=1x.
func BenchmarkSurvivorRate(b *testing.B) {
	var before, after float64
	var slowest time.Duration
	for b.Loop() {
		bf, af, sl := survivorRates(b, 800, 3*time.Second, 500*time.Millisecond)
		before += bf
		after += af
		slowest = max(slowest, sl)
	}
	b.ReportMetric(before/float64(b.N), "pages/s-before")
	b.ReportMetric(after/float64(b.N), "pages/s-after")
	b.ReportMetric(100*after/before, "%-kept")
	b.ReportMetric(float64(slowest.Milliseconds()), "ms-slowest-lookup")
}

// TestCrawlSurvivesNATSServerLoss crawls with three nodes on a cluster of
// three NATS servers with the inbox stream replicated three times, each
// node connected to a server of its own first, and shuts down one server
// mid-crawl (the one n2 is connected to): the nodes fail over to the
// others and the cluster still fetches every page one crawler fetches,
// none twice.
func TestCrawlSurvivesNATSServerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a three-server JetStream cluster and a crawl (about 20 s)")
	}
	web := simWeb()
	defer web.Close()
	ref := referenceCrawl(t)
	servers := startNATSCluster(t, 3)
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.ClientURL())
	}
	nopts := natsOptions()
	nopts.Replicas = 3
	// The stream is created once the meta group has a leader.
	dialCluster(t, strings.Join(urls, ","), nopts).Close()
	tc := newTestCluster(t, web, 3, func(name string) Options {
		i := int(name[1] - '0')
		// Each node tries its own server first, then the others.
		order := append(append([]string{}, urls[i:]...), urls[:i]...)
		return Options{NATSURL: strings.Join(order, ","), NATS: nopts, Shards: 256}
	})
	for _, name := range tc.names {
		tc.start(name, "")
	}
	tc.waitPages(40, tc.names...)
	at := tc.pagesOf(tc.names...)
	servers[2].Shutdown()
	servers[2].WaitForShutdown()
	for _, name := range tc.names {
		tc.wait(name)
	}
	t.Logf("server s2 shut down after %d pages; %d in all", at, tc.pagesOf(tc.names...))
	tc.check(tc.node("n0").Ring(), ref, nil)
}
