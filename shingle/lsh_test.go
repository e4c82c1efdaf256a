package shingle_test

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crawlkit/crawlkit/shingle"
)

func TestOptimalBanding(t *testing.T) {
	tests := []struct {
		t    float64
		k    int
		b, r int
	}{
		// Values datasketch's _optimal_param returns for the same inputs.
		{0.8, 128, 9, 13},
		{0.5, 128, 25, 5},
		{0.9, 128, 5, 25},
		{0.8, 256, 17, 15},
	}
	for _, tt := range tests {
		b, r := shingle.OptimalBanding(tt.t, tt.k, 0.5, 0.5)
		if b != tt.b || r != tt.r {
			t.Errorf("OptimalBanding(%v, %d) = %d, %d; want %d, %d", tt.t, tt.k, b, r, tt.b, tt.r)
		}
	}
	// Weighting false negatives more must not raise the S-curve's midpoint.
	b1, r1 := shingle.OptimalBanding(0.8, 128, 0.5, 0.5)
	b2, r2 := shingle.OptimalBanding(0.8, 128, 0.1, 0.9)
	if shingle.CandidateProbability(0.8, b2, r2) < shingle.CandidateProbability(0.8, b1, r1) {
		t.Errorf("FN-weighted banding (%d,%d) recalls less than (%d,%d)", b2, r2, b1, r1)
	}
}

func TestNewLSHOptions(t *testing.T) {
	bad := []shingle.LSHOptions{
		{Threshold: 1}, {Threshold: -0.1}, {K: -1}, {Bands: 3}, {Bands: 20, Rows: 7},
		{FPWeight: -1, FNWeight: 1},
	}
	for _, o := range bad {
		if _, err := shingle.NewLSH(&o); !errors.Is(err, shingle.ErrInvalidOptions) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
	l, err := shingle.NewLSH(&shingle.LSHOptions{Bands: 16, Rows: 8})
	if err != nil {
		t.Fatal(err)
	}
	if b, r := l.Banding(); b != 16 || r != 8 {
		t.Fatalf("override ignored: %d, %d", b, r)
	}
}

func TestLSHInsertQueryRemove(t *testing.T) {
	l, _ := shingle.NewLSH(nil)
	s, _ := shingle.NewSketcher(nil)
	r := rand.New(rand.NewPCG(1, 1))
	base := randomWords(r, 500)
	near := slices.Clone(base)
	near[250] = "different"
	sigA := s.Sketch([]byte(joinWords(base)))
	sigB := s.Sketch([]byte(joinWords(near)))
	sigC := s.Sketch([]byte(joinWords(randomWords(r, 500))))

	if err := l.Insert(1, sigA); err != nil {
		t.Fatal(err)
	}
	if err := l.Insert(1, sigC); !errors.Is(err, shingle.ErrDuplicateID) {
		t.Fatalf("duplicate insert: %v", err)
	}
	if err := l.Insert(2, sigC[:10]); !errors.Is(err, shingle.ErrMismatch) {
		t.Fatalf("short signature: %v", err)
	}
	if err := l.Insert(3, sigC); err != nil {
		t.Fatal(err)
	}
	if err := l.Insert(4, sigA); err != nil { // exact copy under another id
		t.Fatal(err)
	}
	tests := []struct {
		sig  shingle.Signature
		want []uint64
	}{
		{sigA, []uint64{1, 4}},
		{sigB, []uint64{1, 4}},
		{sigC, []uint64{3}},
	}
	for i, tt := range tests {
		got, err := l.Query([]uint64{99}, tt.sig)
		if err != nil || got[0] != 99 || !slices.Equal(got[1:], tt.want) {
			t.Errorf("query %d = %v, %v; want [99 %v]", i, got, err, tt.want)
		}
	}
	if !l.Remove(1) || l.Remove(1) || l.Len() != 2 {
		t.Fatal("Remove")
	}
	if got, _ := l.Query(nil, sigA); !slices.Equal(got, []uint64{4}) {
		t.Fatalf("after remove: %v", got)
	}
	if _, err := l.Query(nil, sigA[:3]); !errors.Is(err, shingle.ErrMismatch) {
		t.Fatalf("short query: %v", err)
	}
}

// TestLSHRecall measures LSH at threshold 0.8 (default K=128, banding
// tuned by OptimalBanding) on generated pairs of known Jaccard similarity.
func TestLSHRecall(t *testing.T) {
	const pairs = 300
	s, _ := shingle.NewSketcher(&shingle.Options{Seed: 3})
	l, _ := shingle.NewLSH(&shingle.LSHOptions{Threshold: 0.8})
	r := rand.New(rand.NewPCG(8, 9))
	type pair struct {
		j   float64
		sig shingle.Signature
	}
	var queries []pair
	for i := range 2 * pairs {
		j := 0.9 + 0.1*r.Float64() // high: J ≥ 0.9
		if i >= pairs {
			j = 0.1 + 0.5*r.Float64() // low: J ≤ 0.6
		}
		a, b := genPair(r, 300, j)
		if err := l.Insert(uint64(i), s.SketchSet(nil, a)); err != nil {
			t.Fatal(err)
		}
		queries = append(queries, pair{exactJaccard(a, b), s.SketchSet(nil, b)})
	}
	var hi, hiFound, lo, loFound int
	for i, q := range queries {
		cands, err := l.Query(nil, q.sig)
		if err != nil {
			t.Fatal(err)
		}
		_, found := slices.BinarySearch(cands, uint64(i))
		switch {
		case q.j >= 0.9:
			hi++
			if found {
				hiFound++
			}
		case q.j <= 0.6:
			lo++
			if found {
				loFound++
			}
		}
	}
	b, rows := l.Banding()
	recall, fp := float64(hiFound)/float64(hi), float64(loFound)/float64(lo)
	t.Logf("b=%d r=%d: recall %.3f of %d pairs J≥0.9; %.3f of %d pairs J≤0.6 returned", b, rows, recall, hi, fp, lo)
	if recall < 0.95 || fp > 0.05 {
		t.Fatalf("recall %.3f (want ≥ 0.95), false candidates %.3f (want ≤ 0.05)", recall, fp)
	}
}

func TestSimhashIndex(t *testing.T) {
	// tables is C(blocks, k), blocks defaulting to k+1.
	for _, tc := range []struct{ k, blocks, tables int }{{3, 0, 4}, {3, 6, 20}, {0, 0, 1}, {6, 8, 28}} {
		x, err := shingle.NewSimhashIndex(tc.k, tc.blocks)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Tables(); got != tc.tables {
			t.Errorf("k=%d blocks=%d: Tables() = %d, want %d", tc.k, tc.blocks, got, tc.tables)
		}
		r := rand.New(rand.NewPCG(uint64(tc.k), uint64(tc.blocks)))
		var fps []uint64
		for i := range 500 {
			fp := r.Uint64()
			if i%2 == 1 { // a near neighbour of the previous one
				fp = fps[i-1]
				for range r.IntN(tc.k + 3) {
					fp ^= 1 << r.IntN(64)
				}
			}
			fps = append(fps, fp)
			if err := x.Insert(uint64(i), fp); err != nil {
				t.Fatal(err)
			}
		}
		check := func(q uint64) {
			var want []uint64
			for i, fp := range fps {
				if fp != 0 && bits.OnesCount64(fp^q) <= tc.k {
					want = append(want, uint64(i))
				}
			}
			if got := x.Query(nil, q); !slices.Equal(got, want) {
				t.Fatalf("k=%d blocks=%d: query %x = %v, want %v", tc.k, tc.blocks, q, got, want)
			}
		}
		for i := range 200 {
			check(fps[i] ^ 1<<(i%64))
			check(r.Uint64())
		}
		for i := 0; i < 500; i += 3 {
			if !x.Remove(uint64(i)) {
				t.Fatal("Remove")
			}
			fps[i] = 0 // removed (no random fingerprint is 0 here)
		}
		if x.Remove(0) || x.Len() != 500-167 {
			t.Fatalf("Len %d", x.Len())
		}
		for i := range 100 {
			check(fps[i+1] ^ 1<<(i%64))
		}
		if err := x.Insert(1, 5); !errors.Is(err, shingle.ErrDuplicateID) {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ k, blocks int }{{-1, 0}, {64, 0}, {3, 3}, {3, 65}, {10, 40}} {
		if _, err := shingle.NewSimhashIndex(tc.k, tc.blocks); !errors.Is(err, shingle.ErrInvalidOptions) {
			t.Errorf("k=%d blocks=%d: %v", tc.k, tc.blocks, err)
		}
	}
}

func TestNearIndex(t *testing.T) {
	s, _ := shingle.NewSketcher(nil)
	r := rand.New(rand.NewPCG(2, 2))
	base := randomWords(r, 400)
	edit := func(n int) []byte {
		w := slices.Clone(base)
		for i := range n {
			w[(i*37)%len(w)] = "edited"
		}
		return []byte(joinWords(w))
	}
	for _, tc := range []struct {
		name       string
		opts       shingle.NearOptions
		edits      int
		wantMatch  bool
		maxHamming int
	}{
		{"one edit", shingle.NearOptions{}, 1, true, 0},
		{"heavy edits", shingle.NearOptions{}, 60, false, 0},
		{"combined, close", shingle.NearOptions{MaxHamming: 10}, 1, true, 10},
		{"combined rejects", shingle.NearOptions{MaxHamming: 1, MinJaccard: -1}, 15, false, 1},
	} {
		x, err := shingle.NewNearIndex(&tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		sig, sh := s.AppendSketchSimhash(nil, []byte(joinWords(base)))
		if err := x.Insert(10, sig, sh); err != nil {
			t.Fatal(err)
		}
		other, osh := s.AppendSketchSimhash(nil, []byte(joinWords(randomWords(r, 400))))
		if err := x.Insert(11, other, osh); err != nil {
			t.Fatal(err)
		}
		qsig, qsh := s.AppendSketchSimhash(nil, edit(tc.edits))
		got, err := x.Query(qsig, qsh)
		if err != nil {
			t.Fatal(err)
		}
		if matched := len(got) == 1 && got[0].ID == 10; matched != tc.wantMatch || (!tc.wantMatch && len(got) != 0) {
			t.Errorf("%s: %+v", tc.name, got)
		}
		if !x.Remove(10) || x.Len() != 1 {
			t.Errorf("%s: Remove", tc.name)
		}
		if got, _ := x.Query(qsig, qsh); len(got) != 0 {
			t.Errorf("%s: after remove %+v", tc.name, got)
		}
	}
	if _, err := shingle.NewNearIndex(&shingle.NearOptions{MaxHamming: -1}); !errors.Is(err, shingle.ErrInvalidOptions) {
		t.Fatal(err)
	}
}

// TestLSHRemoveShared removes, in every order, items that share every
// band key (exact copies): the others stay candidates, each once.
func TestLSHRemoveShared(t *testing.T) {
	s, _ := shingle.NewSketcher(nil)
	sig := s.Sketch([]byte(joinWords(randomWords(rand.New(rand.NewPCG(2, 2)), 300))))
	for _, order := range [][]uint64{{1, 2, 3}, {2, 1, 3}, {3, 2, 1}, {1, 3, 2}} {
		l, _ := shingle.NewLSH(nil)
		for id := uint64(1); id <= 3; id++ {
			if err := l.Insert(id, sig); err != nil {
				t.Fatal(err)
			}
		}
		left := []uint64{1, 2, 3}
		for _, id := range order {
			if !l.Remove(id) {
				t.Fatalf("order %v: Remove(%d) = false", order, id)
			}
			left = slices.DeleteFunc(left, func(x uint64) bool { return x == id })
			got, _ := l.Query(nil, sig)
			if !slices.Equal(got, left) {
				t.Fatalf("order %v: after Remove(%d) Query = %v, want %v", order, id, got, left)
			}
		}
		if l.Len() != 0 || l.Remove(1) {
			t.Errorf("order %v: %d items left", order, l.Len())
		}
		if err := l.Insert(1, sig); err != nil { // empty again: usable
			t.Fatal(err)
		}
	}
}
