package crawldb_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawldb"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/warc"
)

// BenchmarkCrawlState crawls one simulated web with the crawl's state in
// memory (the default, nothing to resume) and on disk (crawldb: every page
// committed, resumable after a kill), each without sinks and with the
// file sinks of a real crawl (WARC, JSON Lines, link log, index), so that
// the cost of the durable state shows by itself. The figure is pages/s;
// the web's server runs in the same process and takes its share of the
// CPU.
//
//	go test ./crawldb -run '^$' -bench CrawlState -benchtime 3x
func BenchmarkCrawlState(b *testing.B) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 300, MeanPages: 40, MaxPages: 200, Mirrors: -1,
		ChangePeriods: []time.Duration{0}, CrawlDelay: time.Millisecond, RetryAfter: time.Millisecond})
	defer web.Close()
	resolver := dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	for _, sinks := range []string{"none", "files"} {
		for _, state := range []string{"memory", "crawldb"} {
			b.Run("sinks="+sinks+"/state="+state, func(b *testing.B) {
				var pages uint64
				var elapsed time.Duration
				for b.Loop() {
					dir := b.TempDir()
					cfg := crawlkit.Config{
						Seeds: web.Seeds(), Resolver: resolver, AllowPrivate: true,
						Workers: 64, DelayFactor: 1, MaxRetries: -1, MaxHostsPerDomain: -1, MaxPagesPerDomain: -1,
						Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
					}
					var closers []io.Closer
					if sinks == "files" {
						cfg.Sinks, closers = fileSinks(b, dir)
					}
					if state == "crawldb" {
						db, err := crawldb.Open(filepath.Join(dir, "state"), nil)
						if err != nil {
							b.Fatal(err)
						}
						closers = append(closers, db)
						cfg.State = db
					}
					c, err := crawlkit.New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					s, err := c.Run(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					for _, cl := range closers {
						cl.Close()
					}
					pages += s.Pages()
					elapsed += s.Elapsed
				}
				b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
				b.ReportMetric(float64(pages)/float64(b.N), "pages/crawl")
			})
		}
	}
}

// fileSinks opens the durable sinks of a crawl in dir, and what to close
// after the crawl.
func fileSinks(tb testing.TB, dir string) ([]crawlkit.Sink, []io.Closer) {
	tb.Helper()
	w, err := crawlkit.NewWARCSink(&warc.WriterOptions{Dir: filepath.Join(dir, "warc")})
	if err != nil {
		tb.Fatal(err)
	}
	links, err := crawlkit.OpenLinkLog(filepath.Join(dir, "links.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	pages, err := crawlkit.OpenJSONLines(filepath.Join(dir, "pages.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := index.OpenDir(filepath.Join(dir, "index"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return []crawlkit.Sink{w, links, pages, &crawlkit.IndexDirSink{Dir: ix}}, []io.Closer{ix}
}

// BenchmarkCommit commits page-like Txns (one URL done, ten new URLs,
// three key records, a progress record of 300 bytes) to a DB on disk:
// what every page costs the crawl's commit lock.
//
//	go test ./crawldb -run '^$' -bench Commit -benchtime 20000x
func BenchmarkCommit(b *testing.B) {
	db, err := crawldb.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	progress := make([]byte, 300)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		txn := crawlkit.Txn{Progress: progress}
		if i > 0 {
			txn.Done = []string{fmt.Sprintf("http://h%d.test/p%d", (i-1)%500, i-1)}
		}
		for j := range 10 {
			txn.Add = append(txn.Add, crawlkit.Pending{URL: frontier.URL{URL: fmt.Sprintf("http://h%d.test/p%d-%d", (i+j)%500, i, j), Depth: 3}})
		}
		txn.Keys = []crawlkit.KeyDelta{{Key: fmt.Sprintf("h:h%d.test", i%500), Admitted: 4, Next: time.Now(), Gap: time.Second},
			{Key: "d:test", Admitted: 10}, {Key: "n:test", Admitted: 1}}
		if err := db.Commit(ctx, &txn); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}
