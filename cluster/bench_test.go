package cluster

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// BenchmarkCrawl crawls the simulated web with 1 and 3 nodes on an
// embedded NATS server and reports pages/s, and the messages and bytes
// the nodes sent (URL batches, content lookups and answers) per fetched
// page. Each node has 8 workers; the web has 60 hosts answering in
// 20 ms; 429/503 answers are not retried. Run it by hand: go test -run=^$
// -bench=Crawl -benchtime=1x.
func BenchmarkCrawl(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			srv := startTestServer(b)
			var pages, msgs, bytes, batches, urls uint64
			var elapsed time.Duration
			for b.Loop() {
				// Many hosts and 20 ms answers: one node's 8 workers are
				// the bottleneck, not the politeness of a few big hosts.
				web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 60, MeanPages: 8, ChangePeriods: []time.Duration{0},
					Latency: 20 * time.Millisecond, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
				nopts := natsOptions()
				tc := newTestCluster(b, web, n, func(string) Options {
					return Options{NATSURL: srv.ClientURL(), NATS: nopts, Shards: 256}
				})
				tc.config = func(cfg *crawlkit.Config) {
					// No waiting out 429/503 answers (Retry-After is
					// at least 1 s), fewer trap URLs: what is measured is
					// fetching, not waiting.
					cfg.MaxRetries = -1
					cfg.MaxPagesPerHost = 20
				}
				start := time.Now()
				for _, name := range tc.names {
					tc.start(name, "")
				}
				for _, name := range tc.names {
					tc.wait(name)
				}
				elapsed += time.Since(start)
				for _, name := range tc.names {
					m, by := tc.node(name).Traffic()
					msgs += m
					bytes += by
					st := tc.node(name).Splitter().Stats()
					batches += st.Messages
					urls += st.URLs
					pages += uint64(tc.pages[name])
					tc.stop(name)
				}
				web.Close()
			}
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(msgs)/float64(pages), "msgs/page")
			b.ReportMetric(float64(bytes)/float64(pages), "bytes/page")
			if batches > 0 {
				b.ReportMetric(float64(urls)/float64(batches), "urls/batch")
			}
		})
	}
}

// BenchmarkURLsCodec measures encoding and decoding a 256-URL batch.
func BenchmarkURLsCodec(b *testing.B) {
	urls := make([]frontier.URL, 256)
	for i := range urls {
		urls[i] = frontier.URL{URL: fmt.Sprintf("http://h%03d.sim.test/stories/page-%d.html", i%50, i), Depth: 3,
			Source: "http://h001.sim.test/index.html", Anchor: "a story"}
	}
	buf := AppendURLs(nil, urls)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendURLs(buf[:0], urls)
		if _, err := DecodeURLs(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf))/256, "bytes/url")
}

// BenchmarkContentSeenRemote measures lookups of fingerprints another
// node owns over Mem, 64 concurrent lookups per batch.
func BenchmarkContentSeenRemote(b *testing.B) {
	tr := NewMem()
	defer tr.Close()
	names := []string{"a", "b"}
	var nodes []*Node
	for _, name := range names {
		nd, err := NewNode(context.Background(), &Options{Name: name, Nodes: names, Transport: tr, Logger: quietLogger(), LookupDelay: time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		defer nd.Close()
		nodes = append(nodes, nd)
	}
	b.ReportAllocs()
	b.SetParallelism(32)
	var i atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := i.Add(1)
			d := dedup.Doc{URL: fmt.Sprintf("http://x.test/%d", n), Text: fmt.Appendf(nil, "document number %d", n)}
			if _, err := nodes[0].ContentSeen().Seen(context.Background(), d); err != nil {
				b.Error(err)
				return
			}
		}
	})
	msgs, _ := nodes[0].Traffic()
	b.ReportMetric(float64(msgs)/float64(b.N), "msgs/lookup")
}
