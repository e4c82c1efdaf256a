package webgraph

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/crawlkit/crawlkit/internal/cputime"
)

// BenchmarkSharedSequential decodes all of cnr-2000 sequentially.
func BenchmarkSharedSequential(b *testing.B) {
	g := openShared(b, "cnr-2000")
	b.SetBytes(int64(g.StreamBits() / 8))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Now()
	var arcs int64
	for i := 0; i < b.N; i++ {
		it := g.NodeIterator()
		for it.Next() {
			arcs += int64(len(it.Successors()))
		}
		if it.Err() != nil {
			b.Fatal(it.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(arcs), "ns/arc")
	b.ReportMetric(float64((cputime.Now()-cpu0).Nanoseconds())/float64(arcs), "cpu-ns/arc")
	b.ReportMetric(float64(g.StreamBits())/float64(g.NumArcs()), "bits/link")
}

// BenchmarkSharedParallel decodes all of cnr-2000 with one split iterator
// per processor, each in its goroutine: ns/arc is wall time, cpu-ns/arc the
// processor time of all of them.
func BenchmarkSharedParallel(b *testing.B) {
	g := openShared(b, "cnr-2000")
	p := runtime.GOMAXPROCS(0)
	b.SetBytes(int64(g.StreamBits() / 8))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Now()
	var arcs atomic.Int64
	for i := 0; i < b.N; i++ {
		its, err := g.SplitNodeIterators(p)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, it := range its {
			wg.Go(func() {
				var n int64
				for it.Next() {
					n += int64(len(it.Successors()))
				}
				arcs.Add(n)
			})
		}
		wg.Wait()
		for _, it := range its {
			if it.Err() != nil {
				b.Fatal(it.Err())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(arcs.Load()), "ns/arc")
	b.ReportMetric(float64((cputime.Now()-cpu0).Nanoseconds())/float64(arcs.Load()), "cpu-ns/arc")
	b.ReportMetric(float64(p), "goroutines")
}

// BenchmarkSharedRandomAccess enumerates the successors of random nodes.
func BenchmarkSharedRandomAccess(b *testing.B) {
	g := openShared(b, "cnr-2000")
	rng := rand.New(rand.NewPCG(1, 2))
	nodes := make([]int, 1<<16)
	for i := range nodes {
		nodes[i] = rng.IntN(g.NumNodes())
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Now()
	var arcs int64
	var buf []int
	var err error
	for i := 0; i < b.N; i++ {
		if buf, err = g.Successors(nodes[i&(len(nodes)-1)], buf); err != nil {
			b.Fatal(err)
		}
		arcs += int64(len(buf))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(arcs, 1)), "ns/arc")
	b.ReportMetric(float64((cputime.Now()-cpu0).Nanoseconds())/float64(max(arcs, 1)), "cpu-ns/arc")
	b.ReportMetric(float64(g.OffsetsBits())/float64(g.NumNodes()), "offset-bits/node")
}

// BenchmarkSharedEncode re-encodes cnr-2000 with its parameters.
func BenchmarkSharedEncode(b *testing.B) {
	g := openShared(b, "cnr-2000")
	lists := make([][]int, 0, g.NumNodes())
	it := g.NodeIterator()
	for it.Next() {
		lists = append(lists, append([]int(nil), it.Successors()...))
	}
	p := g.Properties()
	o := optionsFromProperties(&p)
	b.ReportAllocs()
	b.ResetTimer()
	var gb bytes.Buffer
	for i := 0; i < b.N; i++ {
		gb.Reset()
		enc, _ := NewEncoder(&gb, nil, &o)
		for _, l := range lists {
			enc.Add(l)
		}
		if _, err := enc.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*g.NumArcs()), "ns/arc")
	b.ReportMetric(float64(gb.Len()*8)/float64(g.NumArcs()), "bits/link")
}

// BenchmarkReadURLMap loads a map of 200,000 URLs (500 hosts): the cost is
// the order check, which decodes every URL and computes its SortKey.
func BenchmarkReadURLMap(b *testing.B) {
	urls := make([]string, 0, 200_000)
	for h := range 500 {
		for p := range 400 {
			urls = append(urls, fmt.Sprintf("http://www.h%03d.example.com/section-%d/page-%d.html", h, p%7, p))
		}
	}
	m, err := NewURLMap(urls)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadURLMap(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(urls)), "ns/URL")
}
