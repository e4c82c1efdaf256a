package index

import (
	"math/rand/v2"
	"testing"
)

// TestFrontierBound checks that the Pareto frontier gives exactly the
// largest contribution of any posting, for several avgdl values.
func TestFrontierBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := BM25{}.withDefaults()
	for trial := range 200 {
		pl := newPostingList()
		n := 1 + r.IntN(300)
		type post struct{ tf, len uint32 }
		var posts []post
		for i := range n {
			tf := uint32(1 + r.IntN(1+r.IntN(20)))
			dl := tf + uint32(r.IntN(500))
			pl.add(uint32(i), tf, dl)
			posts = append(posts, post{tf, dl})
		}
		for i := 1; i < len(pl.front); i++ {
			if pl.front[i].tf <= pl.front[i-1].tf || pl.front[i].len <= pl.front[i-1].len {
				t.Fatalf("trial %d: frontier not strictly ascending: %v", trial, pl.front)
			}
		}
		for _, avgdl := range []float64{1, 37.5, 250, 4000} {
			want := 0.0
			for _, ps := range posts {
				want = max(want, p.termScore(2, ps.tf, p.norm(ps.len, avgdl)))
			}
			got := pl.upperBound(p, 2, avgdl)
			if got < want || got > want*(1+2e-9) {
				t.Fatalf("trial %d avgdl %v: bound %v, exact max %v (frontier %v)", trial, avgdl, got, want, pl.front)
			}
		}
	}
}
