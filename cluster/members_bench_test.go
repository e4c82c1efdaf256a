package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// benchLease is the lease of the membership benchmarks: the crawler's
// -lease 5s of docs/CLUSTER.md, whose control traffic the docs state.
const benchLease = 5 * time.Second

// memberBenchOptions are the options of a benchmarked member: the lease
// above, the default StatusInterval (100 ms), a short HandoffGap so that
// nodes start within a second.
func memberBenchOptions(url string, nopts NATSOptions) func(string) Options {
	return func(string) Options {
		return Options{NATSURL: url, NATS: nopts, Shards: 256, Lease: benchLease, HandoffGap: 100 * time.Millisecond}
	}
}

// controlKinds are the tap's kinds of control traffic in membership mode.
var controlKinds = []string{"members", "status", "rounds"}

// expectedControl is the control traffic docs/CLUSTER.md states for n
// members: per Lease/5, n heartbeats (put, acknowledgement, delivery to
// the coordinator) and a view write (put, acknowledgement) delivered to n
// watchers; per StatusInterval, a stream information request and reply;
// per FoldEvery (the default), each member's request for the logs left
// behind and its reply.
func expectedControl(n int, lease, status time.Duration) float64 {
	return float64(4*n+2)/(lease/5).Seconds() + 2/status.Seconds() + float64(2*n)/(5*time.Second).Seconds()
}

// BenchmarkControlPlaneMembers starts 3, 6 and 12 nodes with membership
// (Lease 5 s, StatusInterval 100 ms) on one embedded NATS server and
// reports the control messages per second: idle (crawlers with nothing
// to do) and during a crawl of the simulated web. msgs/s are the
// membership bucket's and the coordinator's backlog requests, each message
// counted once as it passes the server (a tap subscribed to everything):
// the figure the formula in docs/CLUSTER.md predicts (want-msgs/s).
// in-msgs/s (idle only) are all the messages clients sent to the server
// (InMsgs), the measure of BenchmarkControlPlane. Run it by hand:
// go test -run=^$ -bench=ControlPlaneMembers -benchtime=1x.
func BenchmarkControlPlaneMembers(b *testing.B) {
	for _, crawl := range []bool{false, true} {
		for _, n := range []int{3, 6, 12} {
			name := fmt.Sprintf("idle/nodes=%d", n)
			if crawl {
				name = fmt.Sprintf("crawl/nodes=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				var rate, in, pages float64
				for b.Loop() {
					r, i, p := memberControlRate(b, n, crawl, 3*time.Second)
					rate, in, pages = rate+r, in+i, pages+p
				}
				N := float64(b.N)
				b.ReportMetric(rate/N, "msgs/s")
				b.ReportMetric(rate/N/float64(n), "msgs/s/node")
				b.ReportMetric(expectedControl(n, benchLease, 100*time.Millisecond), "want-msgs/s")
				if crawl {
					b.ReportMetric(pages/N, "pages/s")
				} else {
					b.ReportMetric(in/N, "in-msgs/s")
				}
			})
		}
	}
}

// memberControlRate starts n members and returns the control messages
// per second over window, the messages per second clients sent to the
// server, and the pages per second fetched (during a crawl).
func memberControlRate(tb testing.TB, n int, crawl bool, window time.Duration) (control, in, pages float64) {
	srv := startTestServer(tb)
	nopts := natsOptions()
	tp := newTap(tb, srv, nopts)
	opts := memberBenchOptions(srv.ClientURL(), nopts)
	var pagesOf func() int
	if crawl {
		// Enough pages that 12 nodes still crawl after starting.
		web := fetchtest.NewWeb(fetchtest.Config{Seed: 9, Hosts: 400, MeanPages: 20, ChangePeriods: []time.Duration{0},
			Latency: 20 * time.Millisecond, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
		defer web.Close()
		tc := newTestCluster(tb, web, n, opts)
		defer func() {
			for _, name := range tc.names {
				tc.stop(name)
			}
		}()
		tc.config = func(cfg *crawlkit.Config) { cfg.MaxRetries = -1; cfg.MaxPagesPerHost = 30 }
		startEach(tc.names, tc.start)
		pagesOf = func() int { return tc.pagesOf(tc.names...) }
		for pagesOf() < 200 {
			time.Sleep(10 * time.Millisecond)
		}
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("n%d", i))
		}
		var mu sync.Mutex
		var nodes []*Node
		defer func() {
			for _, nd := range nodes {
				nd.Close()
			}
		}()
		startEach(names, func(name, _ string) {
			o := opts(name)
			o.Name, o.Logger = name, quietLogger()
			nd, err := NewNode(ctx, &o)
			if err != nil {
				tb.Error(err)
				return
			}
			mu.Lock()
			nodes = append(nodes, nd)
			mu.Unlock()
			cfg := crawlkit.Config{Resolver: loopbackResolver(), Logger: quietLogger()}
			nd.Configure(&cfg)
			c, err := crawlkit.New(cfg)
			if err != nil {
				tb.Error(err)
				return
			}
			if err := nd.Start(ctx, c); err != nil {
				tb.Error(err)
			}
		})
		if tb.Failed() {
			tb.FailNow()
		}
		pagesOf = func() int { return 0 }
		// Past the joins and handoffs: every node's records and the
		// view are at their steady rate.
		time.Sleep(2 * time.Second)
	}
	c0, p0 := tp.snapshot(), pagesOf()
	in0, _ := serverMsgs(tb, srv)
	t0 := time.Now()
	time.Sleep(window)
	c1, p1 := tp.snapshot(), pagesOf()
	in1, _ := serverMsgs(tb, srv)
	secs := time.Since(t0).Seconds()
	d := diff(c0, c1)
	if b, ok := tb.(interface{ Logf(string, ...any) }); ok {
		b.Logf("nodes=%d crawl=%v: %s", n, crawl, breakdown(d, secs, "msgs/s"))
	}
	return float64(sum(d, controlKinds...)) / secs, float64(in1-in0) / secs, float64(p1-p0) / secs
}

// startAll starts the named nodes at once: joins and handoffs overlap.
func startAll(names []string, start func(name, dir string)) {
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() { start(name, "") })
	}
	wg.Wait()
}

// startEach starts the named nodes one after the other, as the operator's
// guide does: each Start returns once the shards given to it are claimed.
func startEach(names []string, start func(name, dir string)) {
	for _, name := range names {
		start(name, "")
	}
}

// BenchmarkMessagesMembers is BenchmarkMessages with membership (Lease
// 5 s): three nodes of 8 workers on an embedded NATS server crawl a
// worker-bound simulated web, and over 3 s of steady crawling the
// messages at the server are counted per fetched page. msgs/page are
// those clients sent (InMsgs, the measure of BenchmarkMessages);
// routed-msgs/page every message that passed the server once (the tap:
// what clients sent plus JetStream's acknowledgements and deliveries),
// and the per-kind figures split those: journal-msgs/page (shard journal
// writes and their acknowledgements), inbox-msgs/page (URL batches,
// acknowledgements, pull requests, deliveries), lookup-msgs/page,
// control-msgs/page (membership and backlog); batches/page and
// urls/batch are the URL batches the splitters published. Run it by hand:
// go test -run=^$ -bench=MessagesMembers -benchtime=1x.
func BenchmarkMessagesMembers(b *testing.B) {
	var pages, in, routed, urls, batches float64
	kinds := map[string]float64{}
	var elapsed time.Duration
	for b.Loop() {
		web := fetchtest.NewWeb(fetchtest.Config{Seed: 9, Hosts: 240, MeanPages: 20, ChangePeriods: []time.Duration{0},
			Latency: 20 * time.Millisecond, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
		srv := startTestServer(b)
		nopts := natsOptions()
		tp := newTap(b, srv, nopts)
		tc := newTestCluster(b, web, 3, memberBenchOptions(srv.ClientURL(), nopts))
		tc.config = func(cfg *crawlkit.Config) { cfg.MaxRetries = -1; cfg.MaxPagesPerHost = 30 }
		startEach(tc.names, tc.start)
		for tc.pagesOf(tc.names...) < 300 {
			time.Sleep(10 * time.Millisecond)
		}
		splits := func() (urls, msgs uint64) {
			for _, name := range tc.names {
				st := tc.node(name).Splitter().Stats()
				urls, msgs = urls+st.URLs, msgs+st.Messages
			}
			return urls, msgs
		}
		p0, c0, t0 := tc.pagesOf(tc.names...), tp.snapshot(), time.Now()
		in0, _ := serverMsgs(b, srv)
		u0, m0 := splits()
		time.Sleep(3 * time.Second)
		p1, c1 := tc.pagesOf(tc.names...), tp.snapshot()
		in1, _ := serverMsgs(b, srv)
		u1, m1 := splits()
		urls += float64(u1 - u0)
		batches += float64(m1 - m0)
		elapsed += time.Since(t0)
		d := diff(c0, c1)
		b.Logf("per page: %s", breakdown(d, float64(p1-p0), "msgs"))
		pages += float64(p1 - p0)
		in += float64(in1 - in0)
		routed += float64(sum(d))
		for k, v := range d {
			kinds[k] += float64(v)
		}
		for _, name := range tc.names {
			tc.stop(name)
		}
		web.Close()
	}
	b.ReportMetric(pages/elapsed.Seconds(), "pages/s")
	b.ReportMetric(in/pages, "msgs/page")
	b.ReportMetric(routed/pages, "routed-msgs/page")
	b.ReportMetric(kinds["journal"]/pages, "journal-msgs/page")
	b.ReportMetric(kinds["inbox"]/pages, "inbox-msgs/page")
	b.ReportMetric(kinds["lookup"]/pages, "lookup-msgs/page")
	b.ReportMetric((kinds["members"]+kinds["status"])/pages, "control-msgs/page")
	b.ReportMetric(batches/pages, "batches/page")
	b.ReportMetric(urls/batches, "urls/batch")
}

// memberSurvivorRates crawls a worker-bound simulated web with three
// members (Lease 2 s, HandoffGap 100 ms) on an embedded NATS server,
// measures the pages/s of n0 and n1 over window, hard-stops n2 (no
// heartbeat, no journal write, no release, no farewell: a kill -9 as far
// as the cluster can tell), waits until the survivors have claimed every
// shard (the takeover window) and measures their pages/s over window
// again. It returns both rates and the takeover time.
func memberSurvivorRates(t testing.TB, hosts int, window time.Duration) (before, after float64, takeover time.Duration) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 9, Hosts: hosts, MeanPages: 20, ChangePeriods: []time.Duration{0},
		Latency: 20 * time.Millisecond, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
	defer web.Close()
	srv := startTestServer(t)
	nopts := natsOptions()
	tc := newTestCluster(t, web, 3, func(string) Options {
		return Options{NATSURL: srv.ClientURL(), NATS: nopts, Shards: 256, Lease: 2 * time.Second, HandoffGap: 100 * time.Millisecond}
	})
	tc.config = func(cfg *crawlkit.Config) { cfg.MaxRetries = -1; cfg.MaxPagesPerHost = 30 }
	startEach(tc.names, tc.start)
	survivors := []string{"n0", "n1"}
	tc.waitPages(150, survivors...)
	rate := func() float64 {
		p0, t0 := tc.pagesOf(survivors...), time.Now()
		time.Sleep(window)
		return float64(tc.pagesOf(survivors...)-p0) / time.Since(t0).Seconds()
	}
	before = rate()
	tc.crash("n2")
	crashed := time.Now()
	shards := tc.node("n0").ring.Shards()
	for {
		a, b := tc.node("n0"), tc.node("n1")
		if a.OwnedShards()+b.OwnedShards() == shards && a.shards.moving() == 0 && b.shards.moving() == 0 {
			break
		}
		if time.Since(crashed) > 20*time.Second {
			t.Fatalf("the survivors own %d of %d shards 20 s after the crash", a.OwnedShards()+b.OwnedShards(), shards)
		}
		time.Sleep(10 * time.Millisecond)
	}
	takeover = time.Since(crashed)
	after = rate()
	for _, name := range survivors {
		if tc.node(name).localStatus().Busy == 0 {
			t.Fatalf("%s ran out of work during the measurement (%.0f pages/s before, %.0f after, takeover %v, %d pages in all): make the web larger",
				name, before, after, takeover, tc.pagesOf(survivors...))
		}
	}
	return before, after, takeover
}

// TestMembersSurvivorsKeepTheirRate hard-stops one of three members
// mid-crawl: after the takeover window the two others crawl at (nearly)
// their rate before. The bound is generous (half the rate) for loaded
// machines; BenchmarkSurvivorRateMembers reports the figure. The
// takeover is bounded too.
func TestMembersSurvivorsKeepTheirRate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a three-node crawl of several seconds")
	}
	before, after, takeover := memberSurvivorRates(t, 500, time.Second)
	t.Logf("survivors: %.0f pages/s before, %.0f after (%.0f%%); shards taken over %v after the crash",
		before, after, 100*after/before, takeover.Round(time.Millisecond))
	if after < before/2 {
		t.Errorf("the survivors fell from %.0f to %.0f pages/s", before, after)
	}
	// The coordinator drops the dead member a Lease (2 s) after its last
	// heartbeat, its shards are claimed HandoffGap (100 ms) later and
	// replayed; a replay that waited out a fetch's MaxWait took 7 s.
	if takeover > 5*time.Second {
		t.Errorf("the dead member's shards were taken over %v after the crash", takeover)
	}
}

// BenchmarkSurvivorRateMembers reports the survivors' pages/s after one
// of three members is hard-stopped, as a percentage of their rate
// before, over 3 s windows, and the takeover time (Lease 2 s). Run it by
// hand: go test -run=^$ -bench=SurvivorRateMembers -benchtime=1x.
func BenchmarkSurvivorRateMembers(b *testing.B) {
	var before, after float64
	var takeover time.Duration
	for b.Loop() {
		bf, af, to := memberSurvivorRates(b, 800, 3*time.Second)
		before += bf
		after += af
		takeover = max(takeover, to)
	}
	b.ReportMetric(before/float64(b.N), "pages/s-before")
	b.ReportMetric(after/float64(b.N), "pages/s-after")
	b.ReportMetric(100*after/before, "%-kept")
	b.ReportMetric(takeover.Seconds(), "s-takeover")
}
