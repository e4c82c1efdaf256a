package dns

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/internal/cputime"
)

// BenchmarkCacheHit measures a lookup answered from the cache: the path
// every fetch of an already resolved host takes. It must not allocate.
func BenchmarkCacheHit(b *testing.B) {
	srv := zone(b, dnstest.Config{})
	r := resolver(b, Options{}, srv)
	ctx := context.Background()
	hosts := make([]string, 1024)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%d.sim.test", i)
		if _, err := r.LookupNetIP(ctx, hosts[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		cpu0 := cputime.Now()
		for b.Loop() {
			addrs, err := r.LookupNetIP(ctx, hosts[i&1023])
			if err != nil || len(addrs) != 1 {
				b.Fatal(addrs, err)
			}
			i++
		}
		reportCPU(b, cpu0)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var seq atomic.Uint64
		cpu0 := cputime.Now()
		b.RunParallel(func(pb *testing.PB) {
			i := int(seq.Add(97))
			for pb.Next() {
				addrs, err := r.LookupNetIP(ctx, hosts[i&1023])
				if err != nil || len(addrs) != 1 {
					b.Error(addrs, err)
					return
				}
				i++
			}
		})
		reportCPU(b, cpu0)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	})
}

// BenchmarkCacheMiss measures full resolutions of distinct names against
// the local test server (A and AAAA, or A only), many in flight at once as
// in a crawler with hundreds of workers. The figure that matters is
// lookups/s.
func BenchmarkCacheMiss(b *testing.B) {
	for _, network := range []string{"ip", "ip4"} {
		b.Run(network, func(b *testing.B) {
			srv := dnstest.Start(b, dnstest.Config{})
			srv.AddWildcard("sim.test", 60, netip.MustParseAddr("127.0.0.1"))
			r := resolver(b, Options{Network: network}, srv)
			ctx := context.Background()
			names := make([]string, b.N)
			for i := range names {
				names[i] = fmt.Sprintf("m%d.sim.test", i)
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(64)
			b.ResetTimer()
			cpu0 := cputime.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					name := names[next.Add(1)-1]
					if addrs, err := r.LookupNetIP(ctx, name); err != nil || len(addrs) != 1 {
						b.Error(name, addrs, err)
						return
					}
				}
			})
			b.StopTimer()
			if cpu := cputime.Now() - cpu0; cpu > 0 {
				// Client and in-process server together: what the lookups
				// would reach on an otherwise idle machine, per core.
				b.ReportMetric(float64(b.N)/cpu.Seconds(), "lookups/cpu-s")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
			if st := r.Stats(); st.Misses != uint64(b.N) {
				b.Fatalf("%d misses for %d distinct names", st.Misses, b.N)
			}
		})
	}
}

// BenchmarkBurst measures the start of a crawl: a new resolver with the
// example crawler's options (Timeout 500 ms, 3 attempts) gets 1,000 new
// names at once from Prefetch, 2,000 A and AAAA queries, and every name is
// looked up until all have resolved. Against the local test server with
// the receive buffers of a tuned machine (4 MiB asked, as both ends do by
// default) and of a stock kernel (rmem_max 212992, about 512 datagrams).
// ms/burst is the time until the last name resolved; retries/name the
// queries sent again per name, which a lost query costs.
func BenchmarkBurst(b *testing.B) {
	for _, bc := range []struct {
		name   string
		rcvbuf int
	}{{"rcvbuf=4MiB", 0}, {"rcvbuf=stock", stockRmemMax}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := dnstest.Start(b, dnstest.Config{ReadBuffer: bc.rcvbuf})
			srv.AddWildcard("sim.test", 300, netip.MustParseAddr("127.0.0.1"))
			const names = 1000
			var took, worst time.Duration
			var retries uint64
			n := 0
			for b.Loop() {
				srv.ResetLog()
				r := bufResolver(b, Options{Timeout: 500 * time.Millisecond, Attempts: 3}, srv, bc.rcvbuf)
				d := burst(b, r, fmt.Sprintf("b%d-h", n), names)
				retries += r.Stats().Retries
				r.Close()
				took += d
				worst = max(worst, d)
				n++
			}
			b.ReportMetric(float64(took.Microseconds())/1e3/float64(n), "ms/burst")
			b.ReportMetric(float64(worst.Microseconds())/1e3, "max-ms/burst")
			b.ReportMetric(float64(retries)/float64(n*names), "retries/name")
		})
	}
}

// reportCPU reports the process CPU time per operation since cpu0: unlike
// ns/op it does not count time the benchmark waited for a CPU that other
// processes held.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu := cputime.Now() - cpu0; cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
