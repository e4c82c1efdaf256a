package bitio

import (
	"math/rand/v2"
	"testing"
)

func benchmarkRead(b *testing.B, c codec, maxv uint64) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := NewWriter(nil)
	const n = 1 << 16
	for i := 0; i < n; i++ {
		// Geometric-ish values: the small gaps that dominate graph streams.
		c.write(w, rng.Uint64N(maxv)>>rng.UintN(8))
	}
	w.Close()
	data := w.Bytes()
	b.SetBytes(int64(len(data)) / n)
	b.ReportAllocs()
	b.ResetTimer()
	r := NewReader(data)
	for i := 0; i < b.N; i++ {
		if i%n == 0 {
			r.SetPosition(0)
		}
		c.read(r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/code")
}

func BenchmarkReadGamma(b *testing.B) { benchmarkRead(b, codecs[1], 1<<10) }
func BenchmarkReadDelta(b *testing.B) { benchmarkRead(b, codecs[2], 1<<10) }
func BenchmarkReadZeta3(b *testing.B) { benchmarkRead(b, codecs[5], 1<<16) }

func BenchmarkWriteZeta3(b *testing.B) {
	w := NewWriter(nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i&0xffff == 0 {
			w = NewWriter(nil)
		}
		w.WriteZeta(uint64(i&0xfff), 3)
	}
	b.ReportMetric(float64(w.WrittenBits())/float64(min(b.N, 0x10000)), "bits/code")
}
