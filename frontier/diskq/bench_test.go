package diskq_test

import (
	"bufio"
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/diskq"
)

var benchN = flag.Int("diskq.urls", 200_000, "URLs BenchmarkDiskEnqueue enqueues, over urls/10 hosts (the issue's figure: -diskq.urls=10000000)")

// peakRSS returns the process's peak resident set size in bytes (Linux
// VmHWM), 0 where unknown.
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) * 1024
		}
	}
	return 0
}

// BenchmarkDiskEnqueue adds -diskq.urls URLs over urls/10 hosts to a
// disk-backed Mercator frontier, in batches of 1,000, and closes it (all
// written out). It reports URLs per second and the process's peak RSS.
// URL strings are built with the timer stopped.
func BenchmarkDiskEnqueue(b *testing.B) {
	n := *benchN
	hosts := max(n/10, 1)
	b.ReportAllocs()
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		m, err := diskq.NewMercator(dir, &frontier.Options{Workers: 64}, nil)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, uint64(i)))
		batch := make([]frontier.URL, 1000)
		buf := make([]byte, 0, 64)
		for done := 0; done < n; done += len(batch) {
			batch = batch[:min(1000, n-done)]
			for k := range batch {
				buf = append(buf[:0], "http://h"...)
				buf = strconv.AppendInt(buf, int64(r.IntN(hosts)), 10)
				buf = append(buf, ".disk.test/p/"...)
				buf = strconv.AppendInt(buf, int64(done+k), 10)
				batch[k] = frontier.URL{URL: string(buf), Depth: k % 6}
			}
			b.StartTimer()
			if err := m.Add(ctx, batch...); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
		}
		b.StartTimer()
		if st := m.Stats(); st.Queued != n {
			b.Fatalf("queued %d, want %d", st.Queued, n)
		}
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
	b.ReportMetric(peakRSS()/(1<<20), "peak-RSS-MiB")
}

// BenchmarkDiskCycle measures Add + Next + Done on a disk-backed Mercator
// holding -diskq.urls/4 URLs.
func BenchmarkDiskCycle(b *testing.B) {
	n := *benchN / 4
	hosts := max(n/10, 1)
	m, err := diskq.NewMercator(b.TempDir(), &frontier.Options{Workers: 64, Politeness: frontier.Politeness{K: -1}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(2, 2))
	mk := func(i int) frontier.URL {
		return frontier.URL{URL: "http://h" + strconv.Itoa(r.IntN(hosts)) + ".disk.test/p/" + strconv.Itoa(i)}
	}
	for i := range n {
		if err := m.Add(ctx, mk(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.Add(ctx, mk(n+i)); err != nil {
			b.Fatal(err)
		}
		l, err := m.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Done(l, frontier.Result{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenDeferred measures Open of a store holding 200,000 revisits:
// Open counts them instead of trusting a recorded count (a corrupt count
// could make the frontier spin), so its cost grows with them.
func BenchmarkOpenDeferred(b *testing.B) {
	const n = 200_000
	dir := b.TempDir()
	s, err := diskq.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	due := time.Now().Add(time.Hour)
	batch := make([]frontier.URL, 0, 1000)
	for i := range n {
		batch = append(batch, frontier.URL{URL: "http://h" + strconv.Itoa(i%1000) + ".test/p" + strconv.Itoa(i), Due: due})
		if len(batch) == cap(batch) {
			if err := s.Defer(batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := diskq.Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		if s.Deferred() != n {
			b.Fatalf("%d deferred, want %d", s.Deferred(), n)
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/revisit")
}
