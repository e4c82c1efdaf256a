package pebblecontent_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
)

// pageDocs returns n distinct page-length texts (1000 words, about 6 KB,
// as dedup's BenchmarkContentSeen) and a near-duplicate of each.
func pageDocs(n int) (pages, near [][]byte) { return docs(n, 50000, 1000) }

type impl struct {
	name string
	new  func(b *testing.B) dedup.ContentSeen
}

func impls() []impl {
	return []impl{
		{"Content", func(b *testing.B) dedup.ContentSeen {
			c, err := dedup.NewContent(nil)
			if err != nil {
				b.Fatal(err)
			}
			return c
		}},
		{"pebble", func(b *testing.B) dedup.ContentSeen { return openBench(b, nil) }},
		{"pebble/sync", func(b *testing.B) dedup.ContentSeen { return openBench(b, &pebblecontent.Options{Sync: true}) }},
	}
}

// openBench opens a store on disk, closed at the end of the benchmark.
func openBench(b *testing.B, o *pebblecontent.Options) *pebblecontent.Content {
	c := open(b, b.TempDir(), o)
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkSeen measures Seen on page-length texts: documents all new
// (the lookups and the insert), exact repeats and near-duplicates of
// recorded documents, on one goroutine.
func BenchmarkSeen(b *testing.B) {
	ctx := context.Background()
	pages, near := pageDocs(2000)
	size := 0
	for _, p := range pages {
		size += len(p)
	}
	for _, im := range impls() {
		b.Run("impl="+im.name+"/new", func(b *testing.B) {
			b.SetBytes(int64(size)) // an op is the whole set
			b.ReportAllocs()
			docs := 0
			for b.Loop() {
				c := im.new(b) // a fresh store: every document is new
				for i, p := range pages {
					if m, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprint("http://a.test/", i), Text: p}); err != nil || m.Seen {
						b.Fatalf("page %d: %+v, %v", i, m, err)
					}
				}
				docs += len(pages)
			}
			b.ReportMetric(float64(docs)/b.Elapsed().Seconds(), "docs/s")
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(docs), "ns/doc")
			b.ReportMetric(0, "ns/op")
		})
		for _, kind := range []string{"exact", "near"} {
			b.Run("impl="+im.name+"/"+kind, func(b *testing.B) {
				c := im.new(b)
				for i, p := range pages {
					if _, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprint("http://a.test/", i), Text: p}); err != nil {
						b.Fatal(err)
					}
				}
				queries := pages
				if kind == "near" {
					queries = near
				}
				b.SetBytes(int64(size / len(pages)))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					m, err := c.Seen(ctx, dedup.Doc{URL: "http://b.test/", Text: queries[i%len(queries)]})
					if err != nil || !m.Seen || m.Near != (kind == "near") {
						b.Fatalf("%+v, %v", m, err)
					}
					i++
				}
				b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "docs/s")
			})
		}
	}
}

// BenchmarkSeenParallel records new page-length documents from several
// goroutines at once: the lock held over lookup and insert against the
// shingling done outside it.
func BenchmarkSeenParallel(b *testing.B) {
	ctx := context.Background()
	pages, _ := pageDocs(2000)
	for _, im := range impls() {
		for _, workers := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("impl=%s/workers=%d", im.name, workers), func(b *testing.B) {
				docs := 0
				for b.Loop() {
					c := im.new(b)
					var next atomic.Int64
					var wg sync.WaitGroup
					for range workers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for i := int(next.Add(1)) - 1; i < len(pages); i = int(next.Add(1)) - 1 {
								if _, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprint("http://a.test/", i), Text: pages[i]}); err != nil {
									b.Error(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					docs += len(pages)
				}
				b.ReportMetric(float64(docs)/b.Elapsed().Seconds(), "docs/s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkMemory records 200,000 generated documents (300 words each)
// and reports, every 50,000, the Go heap in use after a collection
// (HeapInuse) plus Pebble's block cache and memtables (outside the Go
// heap with cgo) (MiB@n); the two parts after 50,000 and 200,000; the
// growth of the heap per document between them; and the process's
// resident set. dedup.Content's heap grows with every document; the
// Pebble store's stays flat, and Pebble's part grows only until the
// block cache is full (36 MiB with the defaults). Run one impl per
// process for a meaningful resident set. ns/doc includes generating the
// text; disk-B/doc is the store's size on disk.
func BenchmarkMemory(b *testing.B) {
	ctx := context.Background()
	const n, every = 200_000, 50_000
	for _, name := range []string{"Content", "pebble"} {
		b.Run("impl="+name, func(b *testing.B) {
			for b.Loop() {
				dir := b.TempDir()
				var c dedup.ContentSeen
				var pc *pebblecontent.Content
				if name == "Content" {
					c, _ = dedup.NewContent(nil)
				} else {
					pc = open(b, dir, nil)
					c = pc
				}
				type sample struct{ heap, pebble, rss float64 }
				var samples []sample
				start := time.Now()
				for i := range n {
					text := []byte(deduptest.Text(uint64(i), 300))
					if _, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://host%d.test/page/%d", i%1000, i), Text: text}); err != nil {
						b.Fatal(err)
					}
					if (i+1)%every == 0 {
						debug.FreeOSMemory() // a collection, and the freed heap returned
						var ms runtime.MemStats
						runtime.ReadMemStats(&ms)
						s := sample{heap: float64(ms.HeapInuse), rss: vmRSS()}
						if pc != nil {
							s.pebble = float64(pc.MemoryBytes())
						}
						samples = append(samples, s)
					}
				}
				perDoc := time.Since(start).Seconds() * 1e9 / n
				const mib = 1 << 20
				for i, s := range samples {
					b.ReportMetric((s.heap+s.pebble)/mib, fmt.Sprintf("MiB@%dk", (i+1)*every/1000))
				}
				first, last := samples[0], samples[len(samples)-1]
				b.ReportMetric(first.heap/mib, "heap-MiB@50k")
				b.ReportMetric(last.heap/mib, "heap-MiB@200k")
				b.ReportMetric(first.pebble/mib, "pebble-MiB@50k")
				b.ReportMetric(last.pebble/mib, "pebble-MiB@200k")
				b.ReportMetric((last.heap-first.heap)/(n-every), "heap-B/doc")
				b.ReportMetric(first.rss/mib, "rss-MiB@50k")
				b.ReportMetric(last.rss/mib, "rss-MiB@200k")
				b.ReportMetric(perDoc, "ns/doc")
				if pc != nil {
					b.ReportMetric(float64(dirBytes(b, dir))/n, "disk-B/doc")
					if err := pc.Close(); err != nil {
						b.Fatal(err)
					}
				}
				runtime.KeepAlive(c)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// dirBytes returns the size of the files in dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, err := d.Info()
			if err == nil {
				n += info.Size()
			}
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// vmRSS returns the process's resident set size, or 0 where /proc is
// missing.
func vmRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkRecall measures the decisions of dedup.Content and of the
// Pebble store (Bits 8, the default, and 16 and 64) on near-duplicate
// pairs cut from real pages: the percentage of pairs at each range of
// exact Jaccard similarity reported as near-duplicates. Above the 0.8
// threshold that is recall; below it, false matches.
func BenchmarkRecall(b *testing.B) {
	ctx := context.Background()
	bins := []jaccardBin{{0.85, 0.95}, {0.8, 0.85}, {0.75, 0.8}, {0.6, 0.75}}
	units := []string{"recall85-95-%", "recall80-85-%", "match75-80-%", "match60-75-%"}
	pairs := nearPairs(b, 2, 1000, bins)
	type store struct {
		name string
		new  func() dedup.ContentSeen
	}
	stores := []store{{"Content", func() dedup.ContentSeen { c, _ := dedup.NewContent(nil); return c }}}
	for _, bits := range []int{8, 16, 64} {
		stores = append(stores, store{fmt.Sprintf("pebble/bits=%d", bits), func() dedup.ContentSeen {
			return openBench(b, &pebblecontent.Options{Bits: bits, FS: vfs.NewMem(), SyncInterval: -1})
		}})
	}
	for _, s := range stores {
		b.Run("impl="+s.name, func(b *testing.B) {
			var rates [4]float64
			for b.Loop() {
				c := s.new()
				for i, bin := range pairs {
					hit := 0
					for k, p := range bin {
						ma, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprint("a", k), Text: p.a})
						if err != nil || ma.Seen {
							b.Fatalf("pair %d: %+v, %v", k, ma, err)
						}
						mb, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprint("b", k), Text: p.b})
						if err != nil {
							b.Fatal(err)
						}
						if mb.Seen && mb.URL == fmt.Sprint("a", k) {
							hit++
						}
						if !mb.Seen {
							c.Forget(ctx, mb.Fingerprint)
						}
						c.Forget(ctx, ma.Fingerprint)
					}
					rates[i] = 100 * float64(hit) / float64(len(bin))
				}
			}
			for i, u := range units {
				b.ReportMetric(rates[i], u)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
