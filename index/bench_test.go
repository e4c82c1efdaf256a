package index_test

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

var benchCfg = indextest.Config{Seed: 5, Docs: 20000}

var benchData = sync.OnceValues(func() ([]index.Document, []string) {
	return indextest.Corpus(benchCfg), indextest.QueryLog(benchCfg, 1000)
})

var benchShard = sync.OnceValue(func() *index.Shard {
	docs, _ := benchData()
	s := index.NewShard(nil)
	for _, d := range docs {
		s.Add(d)
	}
	return s
})

func textBytes(docs []index.Document) int64 {
	n := 0
	for _, d := range docs {
		n += len(d.Title) + len(d.Text)
	}
	return int64(n)
}

// BenchmarkShardAdd measures indexing throughput (docs/s) and the heap
// kept per document.
func BenchmarkShardAdd(b *testing.B) {
	docs, _ := benchData()
	b.ReportAllocs()
	b.SetBytes(textBytes(docs) / int64(len(docs)))
	var s *index.Shard
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%len(docs) == 0 {
			s = index.NewShard(nil) // a fresh shard per pass: no replacements
		}
		s.Add(docs[i%len(docs)])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	runtime.KeepAlive(s)
}

// BenchmarkShardMemory reports the heap and the file size per indexed
// document for the benchmark collection (20,000 documents of ~150 words).
func BenchmarkShardMemory(b *testing.B) {
	docs, _ := benchData()
	b.ReportAllocs()
	var heap, file float64
	for b.Loop() {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		s := index.NewShard(nil)
		for _, d := range docs {
			s.Add(d)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		heap = float64(ms1.HeapAlloc-ms0.HeapAlloc) / float64(len(docs))
		var buf bytes.Buffer
		s.WriteTo(&buf)
		file = float64(buf.Len()) / float64(len(docs))
		runtime.KeepAlive(s)
	}
	b.ReportMetric(heap, "heap-B/doc")
	b.ReportMetric(file, "file-B/doc")
}

func benchSearch(b *testing.B, s index.Searcher, op index.Op) {
	_, log := benchData()
	qs := make([]index.Query, len(log))
	for i, t := range log {
		qs[i] = index.ParseQuery(nil, t, op, 10)
	}
	s.Search(ctx, qs[0], nil) // seal postings buffered by Add
	b.ReportAllocs()
	var postings int64
	lat := make([]time.Duration, 0, 4096)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		res, err := s.Search(ctx, qs[i%len(qs)], nil)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		postings += res.Postings
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/query")
	b.ReportMetric(float64(postings)/float64(b.N), "postings/query")
}

// BenchmarkShardSearch measures query latency over 20,000 documents with
// the skewed query log (top 10).
func BenchmarkShardSearch(b *testing.B) {
	s := benchShard()
	b.Run("or", func(b *testing.B) { benchSearch(b, s, index.Or) })
	b.Run("and", func(b *testing.B) { benchSearch(b, s, index.And) })
}

// BenchmarkBrokerSearch is BenchmarkShardSearch over four shards
// partitioned by URL, with global statistics.
func BenchmarkBrokerSearch(b *testing.B) {
	docs, _ := benchData()
	bk, _ := docBroker(b, docs, 4, index.ByURL, nil)
	b.Run("or", func(b *testing.B) { benchSearch(b, bk, index.Or) })
}

// BenchmarkTermIndexSearch is BenchmarkShardSearch over four term shards.
func BenchmarkTermIndexSearch(b *testing.B) {
	docs, _ := benchData()
	ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 4})
	for _, d := range docs {
		ti.Add(d)
	}
	b.Run("or", func(b *testing.B) { benchSearch(b, ti, index.Or) })
}

// BenchmarkPersist measures WriteTo and ReadFrom throughput.
func BenchmarkPersist(b *testing.B) {
	s := benchShard()
	var buf bytes.Buffer
	s.WriteTo(&buf)
	data := buf.Bytes()
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var w bytes.Buffer
			s.WriteTo(&w)
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r := index.NewShard(nil)
			if _, err := r.ReadFrom(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
