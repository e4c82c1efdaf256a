package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// serverMsgs returns the messages clients sent to srv (InMsgs: every
// publish, request, reply, acknowledgement and pull request) and those
// it delivered to them (OutMsgs).
func serverMsgs(tb testing.TB, srv *server.Server) (in, out int64) {
	v, err := srv.Varz(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return v.InMsgs, v.OutMsgs
}

// BenchmarkMessages crawls a worker-bound simulated web with three nodes
// (8 workers each) on an embedded NATS server and, over a window of
// steady crawling (past the start, before the tail), counts the messages
// at the server per fetched page: msgs/page are those clients sent to
// the server (InMsgs, everything: URL batches and their JetStream
// acknowledgements and pull requests, content lookups and answers, the
// quiescence rounds), out-msgs/page those it delivered. data-msgs/page
// are the URL batches and lookup requests and answers alone (the nodes'
// Traffic), urls/batch and lookups/batch their fill. Run it by hand:
// go test -run=^$ -bench=Messages -benchtime=1x.
func BenchmarkMessages(b *testing.B) {
	var pages, in, out, data, urls, batches, lookups, lreqs float64
	var elapsed time.Duration
	for b.Loop() {
		web := fetchtest.NewWeb(fetchtest.Config{Seed: 9, Hosts: 240, MeanPages: 20, ChangePeriods: []time.Duration{0},
			Latency: 20 * time.Millisecond, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
		srv := startTestServer(b)
		nopts := natsOptions()
		tp := newTap(b, srv, nopts)
		tc := newTestCluster(b, web, 3, func(string) Options {
			return Options{NATSURL: srv.ClientURL(), NATS: nopts, Shards: 256}
		})
		tc.config = func(cfg *crawlkit.Config) { cfg.MaxRetries = -1; cfg.MaxPagesPerHost = 30 }
		for _, name := range tc.names {
			tc.start(name, "")
		}
		for tc.pagesOf(tc.names...) < 300 {
			time.Sleep(10 * time.Millisecond)
		}
		type snap struct {
			pages                            int
			in, out                          int64
			data, urls, batches, look, lreqs uint64
		}
		take := func() snap {
			var s snap
			s.pages = tc.pagesOf(tc.names...)
			s.in, s.out = serverMsgs(b, srv)
			for _, name := range tc.names {
				nd := tc.node(name)
				m, _ := nd.Traffic()
				sp, cs := nd.Splitter().Stats(), nd.ContentSeen().Stats()
				s.data += m
				s.urls += sp.URLs
				s.batches += sp.Messages
				s.look += cs.Remote
				s.lreqs += cs.Batches
			}
			return s
		}
		s0, c0, t0 := take(), tp.snapshot(), time.Now()
		time.Sleep(3 * time.Second)
		s1, c1 := take(), tp.snapshot()
		b.Logf("per page: %s", breakdown(diff(c0, c1), float64(s1.pages-s0.pages), "msgs"))
		elapsed += time.Since(t0)
		pages += float64(s1.pages - s0.pages)
		in += float64(s1.in - s0.in)
		out += float64(s1.out - s0.out)
		data += float64(s1.data - s0.data)
		urls += float64(s1.urls - s0.urls)
		batches += float64(s1.batches - s0.batches)
		lookups += float64(s1.look - s0.look)
		lreqs += float64(s1.lreqs - s0.lreqs)
		for _, name := range tc.names {
			tc.stop(name)
		}
		web.Close()
	}
	b.ReportMetric(pages/elapsed.Seconds(), "pages/s")
	b.ReportMetric(in/pages, "msgs/page")
	b.ReportMetric(out/pages, "out-msgs/page")
	b.ReportMetric(data/pages, "data-msgs/page")
	b.ReportMetric(urls/batches, "urls/batch")
	b.ReportMetric(lookups/lreqs, "lookups/batch")
}

// BenchmarkControlPlane starts 3, 6 and 12 nodes on one embedded NATS
// server, each with a crawler that has nothing to do, and reports the
// messages per second clients send to the server (InMsgs) while the
// cluster idles: the cost of idle detection and progress alone. Run it
// by hand: go test -run=^$ -bench=ControlPlane -benchtime=1x.
func BenchmarkControlPlane(b *testing.B) {
	for _, n := range []int{3, 6, 12} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			var rate float64
			for b.Loop() {
				rate += controlRate(b, n, 2*time.Second)
			}
			b.ReportMetric(rate/float64(b.N), "msgs/s")
			b.ReportMetric(rate/float64(b.N)/float64(n), "msgs/s/node")
		})
	}
}

// controlRate returns the messages per second n idle nodes send to their
// NATS server, measured over window.
func controlRate(tb testing.TB, n int, window time.Duration) float64 {
	srv := startTestServer(tb)
	nopts := natsOptions()
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("n%d", i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, name := range names {
		nd, err := NewNode(ctx, &Options{Name: name, Nodes: names, NATSURL: srv.ClientURL(), NATS: nopts, Logger: quietLogger(), Linger: -1})
		if err != nil {
			tb.Fatal(err)
		}
		defer nd.Close()
		c, err := crawlkit.New(crawlkit.Config{Resolver: loopbackResolver(), Logger: quietLogger()})
		if err != nil {
			tb.Fatal(err)
		}
		if err := nd.Start(ctx, c); err != nil {
			tb.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // every node's rounds under way
	in0, _ := serverMsgs(tb, srv)
	t0 := time.Now()
	time.Sleep(window)
	in1, _ := serverMsgs(tb, srv)
	return float64(in1-in0) / time.Since(t0).Seconds()
}
