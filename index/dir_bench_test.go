package index_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// BenchmarkDirAdd measures indexing throughput (docs/s) into a Dir with
// the default options: log writes, flushes and background merges
// included, every URL new.
func BenchmarkDirAdd(b *testing.B) {
	docs, _ := benchData()
	d := openDir(b, b.TempDir(), index.DirOptions{})
	b.ReportAllocs()
	b.SetBytes(textBytes(docs) / int64(len(docs)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		doc := docs[i%len(docs)]
		if pass := i / len(docs); pass > 0 {
			doc.URL += "?" + strconv.Itoa(pass)
		}
		if err := d.Add(doc); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64(d.Info().Segments), "segments")
	d.Close()
}

// BenchmarkDirSearch is BenchmarkShardSearch over a Dir holding the same
// 20,000 documents: in 8 segments of 2,500 (no merge), and merged into
// one. Every query reads its dictionary entries, posting lists and
// document lengths through the page cache (8 MiB, warm after the first
// queries of the log).
func BenchmarkDirSearch(b *testing.B) {
	docs, _ := benchData()
	d := openDir(b, b.TempDir(), index.DirOptions{BufferDocs: 2500, MergeFactor: -1})
	defer d.Close()
	for _, doc := range docs {
		if err := d.Add(doc); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("segments=8/or", func(b *testing.B) { benchSearch(b, d, index.Or) })
	b.Run("segments=8/and", func(b *testing.B) { benchSearch(b, d, index.And) })
	if err := d.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("segments=1/or", func(b *testing.B) { benchSearch(b, d, index.Or) })
	b.Run("segments=1/and", func(b *testing.B) { benchSearch(b, d, index.And) })
}

// BenchmarkDirMemory indexes 50,000 and 200,000 generated pages (~150
// words each) into a Dir with the default options and reports the heap in
// use after a GC at the end (heap-MiB), with the Dir open, its buffer
// partly full and its cache warmed by queries: it stays flat as the
// collection grows, where a Shard's grows by ~1.1 KB per page (see
// BenchmarkShardMemory). peak-heap-MiB is the largest heap in use seen
// while indexing, garbage included (what GOGC lets the heap reach). The
// pages are generated 10,000 at a time and dropped (they count in the
// peak). Run with -benchtime 1x.
func BenchmarkDirMemory(b *testing.B) {
	for _, n := range []int{50000, 200000} {
		b.Run("docs="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				benchDirMemory(b, n)
			}
		})
	}
}

func benchDirMemory(b *testing.B, n int) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// The peak heap in use, garbage included, sampled every 20 ms.
	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	path := b.TempDir()
	d := openDir(b, path, index.DirOptions{})
	defer d.Close()
	const batch = 10000
	var queries []string
	for k := 0; k < n/batch; k++ {
		cfg := indextest.Config{Seed: uint64(k + 1), Docs: batch}
		docs := indextest.Corpus(cfg)
		suffix := "#" + strconv.Itoa(k)
		for _, doc := range docs {
			doc.URL += suffix
			if err := d.Add(doc); err != nil {
				b.Fatal(err)
			}
		}
		if k == 0 {
			queries = indextest.QueryLog(cfg, 500)
		}
	}
	if err := d.Merge(ctx); err != nil { // wait for the background merges
		b.Fatal(err)
	}
	for _, q := range queries {
		if _, err := d.Search(ctx, index.ParseQuery(nil, q, index.Or, 10), nil); err != nil {
			b.Fatal(err)
		}
	}
	close(stop)
	<-sampled
	runtime.GC()
	runtime.ReadMemStats(&after)
	in := d.Info()
	var disk int64
	files, _ := filepath.Glob(filepath.Join(path, "*"))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			disk += st.Size()
		}
	}
	const mib = 1 << 20
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/mib, "heap-MiB")
	b.ReportMetric(float64(int64(peak)-int64(before.HeapInuse))/mib, "peak-heap-MiB")
	b.ReportMetric(float64(in.BufferBytes)/mib, "buffer-MiB")
	b.ReportMetric(float64(in.CacheBytes)/mib, "cache-MiB")
	b.ReportMetric(float64(in.Segments), "segments")
	b.ReportMetric(float64(disk)/float64(n), "disk-B/doc")
}
