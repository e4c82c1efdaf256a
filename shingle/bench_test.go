package shingle_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/shingle"
)

// benchDoc is a 16 KiB page-like text, the size of a typical page's text.
var benchDoc = benchText(16 << 10)

func BenchmarkTokenizer(b *testing.B) {
	var t shingle.Tokenizer
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	words := 0
	for b.Loop() {
		t.Reset(benchDoc)
		for t.Next() {
			words++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(words), "ns/word")
}

func benchSketch(b *testing.B, m shingle.Method, k int) {
	s, _ := shingle.NewSketcher(&shingle.Options{K: k, Method: m})
	dst := make(shingle.Signature, 0, k)
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	best := time.Duration(1 << 62)
	for b.Loop() {
		t0 := time.Now()
		dst = s.AppendSketch(dst[:0], benchDoc)
		best = min(best, time.Since(t0))
	}
	b.ReportMetric(float64(b.N)*float64(len(benchDoc))/1e6/b.Elapsed().Seconds(), "MB/s/core")
	// The fastest iteration: what the code does when the (shared) core
	// is not taken away from it.
	b.ReportMetric(float64(len(benchDoc))/1e6/best.Seconds(), "best-MB/s")
}

// BenchmarkSketch measures sketching throughput including tokenization
// (single goroutine, so MB/s is per core).
func BenchmarkSketch(b *testing.B) {
	b.Run("method=oph/K=128", func(b *testing.B) { benchSketch(b, shingle.OnePermutation, 128) })
	b.Run("method=classic/K=128", func(b *testing.B) { benchSketch(b, shingle.Classic, 128) })
	b.Run("method=oph/K=256", func(b *testing.B) { benchSketch(b, shingle.OnePermutation, 256) })
}

// BenchmarkSketchSpeedup sketches the same document with both methods in
// every iteration and reports how many times faster one-permutation
// hashing is than classic K-hash MinHash at K=128. The figures use the
// fastest iteration of each method: on a shared machine the slower ones
// measure the other tenants (a classic sketch takes ~40 times longer, so
// it is preempted more often, which would flatter the ratio).
func BenchmarkSketchSpeedup(b *testing.B) {
	oph, _ := shingle.NewSketcher(&shingle.Options{K: 128})
	classic, _ := shingle.NewSketcher(&shingle.Options{K: 128, Method: shingle.Classic})
	dst := make(shingle.Signature, 0, 128)
	minOPH, minClassic := time.Duration(1<<62), time.Duration(1<<62)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		dst = oph.AppendSketch(dst[:0], benchDoc)
		t1 := time.Now()
		dst = classic.AppendSketch(dst[:0], benchDoc)
		minClassic = min(minClassic, time.Since(t1))
		minOPH = min(minOPH, t1.Sub(t0))
	}
	mb := float64(len(benchDoc)) / 1e6
	b.ReportMetric(mb/minOPH.Seconds(), "oph-MB/s")
	b.ReportMetric(mb/minClassic.Seconds(), "classic-MB/s")
	b.ReportMetric(minClassic.Seconds()/minOPH.Seconds(), "speedup")
}

func BenchmarkSimhash(b *testing.B) {
	s, _ := shingle.NewSketcher(nil)
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		s.Simhash(benchDoc)
	}
}

func BenchmarkLSHQuery(b *testing.B) {
	s, _ := shingle.NewSketcher(nil)
	l, _ := shingle.NewLSH(nil)
	r := rand.New(rand.NewPCG(1, 2))
	items := make([]uint64, 200)
	for id := range 20000 {
		for i := range items {
			items[i] = r.Uint64()
		}
		_ = l.Insert(uint64(id), s.SketchSet(nil, items))
	}
	q := s.SketchSet(nil, items)
	var dst []uint64
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = l.Query(dst[:0], q)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/query")
}

func BenchmarkSimhashIndexQuery(b *testing.B) {
	x, _ := shingle.NewSimhashIndex(3, 0)
	r := rand.New(rand.NewPCG(1, 2))
	for id := range 100000 {
		_ = x.Insert(uint64(id), r.Uint64())
	}
	var dst []uint64
	q := r.Uint64()
	b.ReportAllocs()
	for b.Loop() {
		dst = x.Query(dst[:0], q)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/query")
}

func BenchmarkShingles(b *testing.B) {
	var s shingle.Shingles
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	var x uint64
	for b.Loop() {
		s.Reset(benchDoc, 4, 0)
		for s.Next() {
			x ^= s.Hash()
		}
	}
	_ = x
}

// BenchmarkLSHInsert reports the allocations of one Insert of a distinct
// document, the near-duplicate index's cost per page of a crawl.
func BenchmarkLSHInsert(b *testing.B) {
	s, _ := shingle.NewSketcher(nil)
	l, _ := shingle.NewLSH(nil)
	r := rand.New(rand.NewPCG(1, 3))
	items := make([]uint64, 200)
	sigs := make([]shingle.Signature, 1<<15) // distinct up to -benchtime 32768x
	for i := range sigs {
		for j := range items {
			items[j] = r.Uint64()
		}
		sigs[i] = s.SketchSet(nil, items)
	}
	b.ReportAllocs()
	id := uint64(0)
	for b.Loop() {
		_ = l.Insert(id, sigs[id%uint64(len(sigs))])
		id++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/insert")
}
