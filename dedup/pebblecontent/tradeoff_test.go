package pebblecontent_test

import (
	"fmt"
	"testing"

	"github.com/crawlkit/crawlkit/shingle"
)

// recallBins are the similarity ranges the recall figures are given for:
// near-duplicates well above the 0.8 threshold, pairs just below it, and
// pairs clearly below it.
var recallBins = []jaccardBin{{0.85, 0.95}, {0.75, 0.8}, {0.6, 0.75}}

// BenchmarkSketchTradeoff measures what b-bit minwise hashing (keeping b
// bits of each MinHash value) and a smaller K cost in accuracy on
// near-duplicate pairs of real text: the fraction of pairs at Jaccard
// 0.85–0.95 that become LSH candidates and are confirmed at estimated
// Jaccard ≥ 0.8 (recall-%), and the fractions of pairs at 0.75–0.8 and
// 0.6–0.75 confirmed all the same (fp75-%, fp60-%). The banding is
// dedup.Content's for each K; b=64 is dedup.Content's estimator.
func BenchmarkSketchTradeoff(b *testing.B) {
	pairs := nearPairs(b, 1, 1000, recallBins)
	for _, k := range []int{64, 128, 256} {
		sk, err := shingle.NewSketcher(&shingle.Options{K: k})
		if err != nil {
			b.Fatal(err)
		}
		bands, rows := shingle.OptimalBanding(0.8, k, 0.1, 0.9)
		type sigPair struct{ a, b shingle.Signature }
		sigs := make([][]sigPair, len(pairs))
		for i, bin := range pairs {
			for _, p := range bin {
				sigs[i] = append(sigs[i], sigPair{sk.Sketch(p.a), sk.Sketch(p.b)})
			}
		}
		candidate := func(x, y shingle.Signature) bool {
			for band := range bands {
				eq := true
				for r := band * rows; r < (band+1)*rows; r++ {
					eq = eq && x[r] == y[r]
				}
				if eq {
					return true
				}
			}
			return false
		}
		for _, bits := range []int{1, 2, 4, 8, 16, 64} {
			b.Run(fmt.Sprintf("K=%d/b=%d", k, bits), func(b *testing.B) {
				var rates [3]float64
				for b.Loop() {
					for i, bin := range sigs {
						hit := 0
						for _, sp := range bin {
							var j float64
							if bits == 64 {
								j = shingle.Jaccard(sp.a, sp.b)
							} else {
								pa, _ := sp.a.Pack(bits)
								pb, _ := sp.b.Pack(bits)
								j = pa.Jaccard(pb)
							}
							if j >= 0.8 && candidate(sp.a, sp.b) {
								hit++
							}
						}
						rates[i] = 100 * float64(hit) / float64(len(bin))
					}
				}
				b.ReportMetric(rates[0], "recall-%")
				b.ReportMetric(rates[1], "fp75-%")
				b.ReportMetric(rates[2], "fp60-%")
				b.ReportMetric(float64(k*bits/8), "sig-B")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
