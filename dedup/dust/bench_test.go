package dust_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/crawlkit/crawlkit/dedup/dust"
)

// benchLearner has the rules of trained (one of every kind) and 200
// more hosts with an alias and a parameter rule each.
func benchLearner(b *testing.B) *dust.Learner {
	c := trained(b)
	for h := range 200 {
		for i := range minSupport {
			canon := fmt.Sprintf("http://h%d.sim.test/p%d", h, i)
			c.l.Observe(canon, uint64(h<<8|i), "")
			c.l.Observe(fmt.Sprintf("http://www.h%d.sim.test/p%d", h, i), uint64(h<<8|i), canon)
			c.l.Observe(fmt.Sprintf("%s?sid=%d", canon, i), uint64(h<<8|i), canon)
		}
	}
	if st := c.l.Stats(); st.Active < 400 {
		b.Fatalf("%d active rules", st.Active)
	}
	return c.l
}

func links(format string) []string {
	out := make([]string, 1024)
	for i := range out {
		out[i] = fmt.Sprintf(format, i%200, i)
	}
	return out
}

// BenchmarkRewrite measures link admission: ns/link and allocs/op when
// no rule names the host, and when rules rewrite the link.
func BenchmarkRewrite(b *testing.B) {
	l := benchLearner(b)
	for _, bc := range []struct {
		name  string
		links []string
		ok    bool
	}{
		{"no-rule", links("http://other%d.sim.test/section/page%d.html?q=1"), false},
		{"rule-host", links("http://h%d.sim.test/section/page%d.html?q=1"), false},
		{"alias+param", links("http://www.h%d.sim.test/section/page%d.html?sid=1&q=1"), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, ok := l.Rewrite(bc.links[i%len(bc.links)]); ok != bc.ok {
					b.Fatalf("Rewrite(%q): %v", bc.links[i%len(bc.links)], ok)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/link")
		})
	}
	b.Run("alias+param-parallel", func(b *testing.B) {
		ls := links("http://www.h%d.sim.test/section/page%d.html?sid=1&q=1")
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				l.Rewrite(ls[i%len(ls)])
			}
		})
	})
}

// BenchmarkObserve measures an observation of a fetch on a host with
// active rules and a full sample: ns/fetch.
func BenchmarkObserve(b *testing.B) {
	l := benchLearner(b)
	ls := links("http://h%d.sim.test/section/page%d.html?q=1")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Observe(ls[i%len(ls)], uint64(i), "")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/fetch")
}

// BenchmarkSampleMemory reports the heap a full sample takes per URL.
func BenchmarkSampleMemory(b *testing.B) {
	const n = 1 << 14
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h%d.sim.test/section/page%d.html", i%64, i)
	}
	var per float64
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		l, _ := dust.New(&dust.Options{SampleSize: n, HostSample: n / 64})
		for i, u := range urls {
			l.Observe(u, uint64(i), "")
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		per = float64(m1.HeapAlloc-m0.HeapAlloc) / n
		runtime.KeepAlive(l)
	}
	b.ReportMetric(per, "B/url")
}
