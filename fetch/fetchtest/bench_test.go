package fetchtest_test

import (
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/internal/cputime"
)

// BenchmarkServe measures serving throughput over loopback: parallel clients
// fetching the web's pages round-robin, as a crawl would (gzip on).
func BenchmarkServe(b *testing.B) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 50})
	defer w.Close()
	pages := w.Pages()
	tr := &http.Transport{DialContext: w.DialContext, MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var next, bytes atomic.Int64
	b.SetParallelism(8) // a crawler keeps many fetches in flight
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u := pages[int(next.Add(1))%len(pages)]
			resp, err := c.Get(u)
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			bytes.Add(n)
		}
	})
	el, cpu := time.Since(start), cputime.Now()-cpu0
	b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
	if cpu > 0 {
		// Client and server share the process: this is the cost of both.
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/req")
	}
	b.ReportMetric(float64(bytes.Load())/float64(b.N), "B/resp")
}

// BenchmarkGenerate measures generating a demo-sized web (300 hosts, about
// 30,000 pages) and its ground truth (Pages and Reachable) from scratch, and
// the heap the generated web keeps per page.
func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	var pages int
	var perPage float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 300, MeanPages: 100})
		pages = len(w.Pages())
		runtime.GC()
		runtime.ReadMemStats(&after)
		perPage = float64(after.HeapAlloc-before.HeapAlloc) / float64(pages)
		_ = w.Reachable("crawlkit")
		w.Close()
	}
	b.ReportMetric(float64(pages), "pages")
	b.ReportMetric(perPage, "heap-B/page")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(pages), "ns/page")
}
