package frontier_test

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
	"github.com/crawlkit/crawlkit/internal/cputime"
)

// benchURL returns the URL of page i on host h; the politeness key
// HostKey derives is a substring of it.
func benchURL(buf []byte, h, i int) string {
	buf = append(buf[:0], "http://h"...)
	buf = strconv.AppendInt(buf, int64(h), 10)
	buf = append(buf, ".bench.test/page/"...)
	buf = strconv.AppendInt(buf, int64(i), 10)
	return string(buf)
}

func benchURLs(n, hosts int) []string {
	out := make([]string, n)
	buf := make([]byte, 0, 64)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range out {
		out[i] = benchURL(buf, r.IntN(hosts), i)
	}
	return out
}

func addAll(b *testing.B, f frontier.Frontier, raw []string) {
	batch := make([]frontier.URL, 0, 1024)
	for i, r := range raw {
		batch = append(batch, frontier.URL{URL: r, Depth: i % 5})
		if len(batch) == cap(batch) || i == len(raw)-1 {
			if err := f.Add(context.Background(), batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

type benchFrontier interface {
	frontier.Frontier
	frontier.Stater
	Close() error
}

func newBench(b *testing.B, impl string, o frontier.Options) benchFrontier {
	var f benchFrontier
	var err error
	if impl == "fifo" {
		f, err = frontier.NewFIFO(&o)
	} else {
		f, err = frontier.NewMercator(&o)
	}
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkCycle measures one Add + Next + Done cycle on a frontier
// holding 1M URLs over 100k hosts, 64 workers' worth of back queues,
// politeness gaps of zero (a clock that never moves), so that the figure
// is the frontier's own cost. Run with GOMAXPROCS=1 for "one core".
func BenchmarkCycle(b *testing.B) {
	for _, impl := range []string{"mercator", "fifo"} {
		b.Run(impl, func(b *testing.B) { benchCycle(b, impl) })
	}
}

func benchCycle(b *testing.B, impl string) {
	const n, hosts = 1_000_000, 100_000
	raw := benchURLs(n, hosts)
	m := newBench(b, impl, frontier.Options{Workers: 64, Clock: frontiertest.NewFakeClock(frontiertest.Epoch), Politeness: frontier.Politeness{K: -1}})
	defer m.Close()
	addAll(b, m, raw)
	more := benchURLs(1<<16, hosts)
	ctx := context.Background()
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Now()
	one := make([]frontier.URL, 1) // a crawler passes its links as a slice
	for i := 0; i < b.N; i++ {
		one[0] = frontier.URL{URL: more[i&(1<<16-1)], Depth: i % 5}
		if err := m.Add(ctx, one...); err != nil {
			b.Fatal(err)
		}
		l, err := m.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Done(l, frontier.Result{Duration: time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/cycle")
	// CPU time, GC included: the figure that holds on a shared machine
	// (run with GOMAXPROCS=1 for "one core").
	b.ReportMetric(float64((cputime.Now()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/cycle")
	if st := m.Stats(); st.Queued != n {
		b.Fatalf("queued %d, want %d", st.Queued, n)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemory measures the heap a queued URL costs beyond its URL
// string (1M URLs over 100k hosts).
func BenchmarkMemory(b *testing.B) {
	for _, impl := range []string{"mercator", "fifo"} {
		b.Run(impl, func(b *testing.B) { benchMemory(b, impl) })
	}
}

func benchMemory(b *testing.B, impl string) {
	const n, hosts = 1_000_000, 100_000
	raw := benchURLs(n, hosts)
	strBytes := 0
	for _, r := range raw {
		strBytes += len(r)
	}
	b.ReportAllocs()
	b.SetBytes(int64(strBytes))
	var perURL float64
	for i := 0; i < b.N; i++ {
		before := heapInUse()
		m := newBench(b, impl, frontier.Options{Workers: 64, Clock: frontiertest.NewFakeClock(frontiertest.Epoch)})
		addAll(b, m, raw)
		after := heapInUse()
		perURL = float64(int64(after)-int64(before)) / n
		if st := m.Stats(); st.Queued != n {
			b.Fatalf("queued %d", st.Queued)
		}
		m.Close()
	}
	b.ReportMetric(perURL, "B/url")
}

// BenchmarkBurstyCrawl simulates a crawl in fake time on a web whose
// links are local (90% to the page's own host), as IIR §20.2.3 warns:
// 16 workers, 10 ms per fetch, K = 10. The figure is pages fetched per
// simulated second; the FIFO baseline stalls behind each host's gap while
// Mercator keeps the workers busy.
func BenchmarkBurstyCrawl(b *testing.B) {
	for _, impl := range []string{"mercator", "fifo"} {
		b.Run(impl, func(b *testing.B) {
			b.ReportAllocs()
			var rate, busy float64
			for i := 0; i < b.N; i++ {
				rate, busy = simulateCrawl(b, impl, 16, 3000)
			}
			b.ReportMetric(rate, "pages/sim-s")
			b.ReportMetric(100*busy, "%busy")
		})
	}
}

type completion struct {
	at time.Time
	l  *frontier.Lease
}

type completions []completion

func (c completions) Len() int           { return len(c) }
func (c completions) Less(i, j int) bool { return c[i].at.Before(c[j].at) }
func (c completions) Swap(i, j int)      { c[i], c[j] = c[j], c[i] }
func (c *completions) Push(x any)        { *c = append(*c, x.(completion)) }
func (c *completions) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}

// simulateCrawl is a discrete-event crawl over the Poller interface. It
// returns pages per simulated second and the workers' busy fraction.
func simulateCrawl(b *testing.B, impl string, workers, pages int) (float64, float64) {
	const (
		fetch  = 10 * time.Millisecond
		hosts  = 2000
		fanout = 5
		local  = 0.9
	)
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	o := frontier.Options{Workers: workers, Clock: clk, Seed: 1}
	var f interface {
		frontier.Frontier
		frontier.Poller
		Close() error
	}
	var err error
	if impl == "fifo" {
		f, err = frontier.NewFIFO(&o)
	} else {
		f, err = frontier.NewMercator(&o)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewPCG(3, 4))
	next := 0
	buf := make([]byte, 0, 64)
	host := make(map[string]int)
	newURL := func(h, depth int) frontier.URL {
		s := benchURL(buf, h, next)
		next++
		host[s] = h
		return frontier.URL{URL: s, Depth: depth}
	}
	ctx := context.Background()
	for h := range 8 {
		f.Add(ctx, newURL(h, 0))
	}
	var inflight completions
	idle, fetched := workers, 0
	var busy time.Duration
	for fetched < pages {
		var ready time.Time
		for idle > 0 {
			l, rd, err := f.Poll()
			if err != nil {
				b.Fatal(err)
			}
			if l == nil {
				ready = rd
				break
			}
			heap.Push(&inflight, completion{clk.Now().Add(fetch), l})
			idle--
		}
		t := ready
		if len(inflight) > 0 && (t.IsZero() || inflight[0].at.Before(t)) {
			t = inflight[0].at
		}
		if t.IsZero() {
			b.Fatal("simulation stalled: nothing in flight, nothing ready")
		}
		clk.Set(t)
		for len(inflight) > 0 && !inflight[0].at.After(clk.Now()) {
			c := heap.Pop(&inflight).(completion)
			h := host[c.l.URL.URL]
			kids := make([]frontier.URL, fanout)
			for k := range kids {
				kh := h
				if r.Float64() >= local {
					kh = r.IntN(hosts)
				}
				kids[k] = newURL(kh, c.l.URL.Depth+1)
			}
			f.Add(ctx, kids...)
			if err := f.Done(c.l, frontier.Result{Duration: fetch}); err != nil {
				b.Fatal(err)
			}
			idle++
			fetched++
			busy += fetch
		}
	}
	el := clk.Now().Sub(frontiertest.Epoch)
	return float64(fetched) / el.Seconds(), busy.Seconds() / (el.Seconds() * float64(workers))
}
