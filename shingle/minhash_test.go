package shingle_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/crawlkit/crawlkit/shingle"
)

func collect(text string, w int, seed uint64) []uint64 {
	return slices.Collect(shingle.ShingleHashes([]byte(text), w, seed))
}

func TestShingles(t *testing.T) {
	tests := []struct {
		text     string
		w        int
		n        int // shingles
		distinct int
	}{
		{"", 4, 0, 0},
		{" ... ", 4, 0, 0},
		{"a", 4, 1, 1},
		{"a b c", 4, 1, 1},
		{"a b c d", 4, 1, 1},
		{"a rose is a rose is a rose", 4, 5, 3}, // IIR/lecture example
		{"a rose is a rose is a rose", 1, 8, 3},
		{"a rose is a rose is a rose", 2, 7, 3},
		{"A, Rose. IS a ROSE is; a rose!", 4, 5, 3},
	}
	for _, tt := range tests {
		hs := collect(tt.text, tt.w, 0)
		u := slices.Compact(slices.Sorted(slices.Values(hs)))
		if len(hs) != tt.n || len(u) != tt.distinct {
			t.Errorf("%q w=%d: %d shingles (%d distinct), want %d (%d)", tt.text, tt.w, len(hs), len(u), tt.n, tt.distinct)
		}
	}
	if a, b := collect("a b c", 4, 0), collect("a b c", 3, 0); !slices.Equal(a, b) {
		t.Error("short text: the single shingle should be all its words")
	}
	if a, b := collect("a b c d e", 4, 1), collect("a b c d e", 4, 2); slices.Equal(a, b) {
		t.Error("seed has no effect")
	}
}

// refShingleHash computes a shingle's hash as Shingles documents it,
// with the reference XXH64: each word's code (its bytes as a
// little-endian integer if shorter than 8 bytes, else XXH64(seed, word)
// with the top bit set), then XXH64 of the codes' little-endian bytes.
func refShingleHash(seed uint64, words ...string) uint64 {
	sum := func(b []byte) uint64 {
		d := xxhash.NewWithSeed(seed)
		d.Write(b)
		return d.Sum64()
	}
	var enc []byte
	for _, w := range words {
		var c [8]byte
		if len(w) < 8 {
			copy(c[:], w)
		} else {
			binary.LittleEndian.PutUint64(c[:], sum([]byte(w))|1<<63)
		}
		enc = append(enc, c[:]...)
	}
	return sum(enc)
}

// TestShingleEncoding pins the documented encoding, computed with the
// reference XXH64, and golden values so any change shows.
func TestShingleEncoding(t *testing.T) {
	const seed = 42
	got := collect("STRASSE? no: Straße is a street", 4, seed)
	want := []uint64{
		refShingleHash(seed, "strasse", "no", "straße", "is"),
		refShingleHash(seed, "no", "straße", "is", "a"),
		refShingleHash(seed, "straße", "is", "a", "street"),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("shingle hashes %x, want %x", got, want)
	}
	if got := collect("Two words", 4, seed); !slices.Equal(got, []uint64{refShingleHash(seed, "two", "words")}) {
		t.Fatalf("short text: %x", got)
	}
	// A long text, with words of every length the vocabulary has.
	words := randomWords(rand.New(rand.NewPCG(1, 1)), 3000)
	for _, w := range []int{1, 3, 4, 5} {
		got = collect(joinWords(words), w, seed)
		for i := range len(words) - w + 1 {
			if got[i] != refShingleHash(seed, words[i:i+w]...) {
				t.Fatalf("w=%d: shingle %d differs", w, i)
			}
		}
	}
	// Golden values, computed once with the reference implementation
	// above; they change only if the encoding does (a breaking change:
	// stored signatures become incomparable).
	golden := []struct {
		text string
		seed uint64
		hash uint64
	}{
		{"a rose is a", 0, 0xd5af95f02394ccd6},
		{"Extraordinary ROSES are roses", 0, 0x7ed9233392273ca1},
		{"a rose is a", 7, 0x7eb62dae9f5e95fc},
	}
	for _, g := range golden {
		if h := collect(g.text, 4, g.seed); h[0] != g.hash {
			t.Errorf("golden shingle hash of %q seed %d changed: %#x, want %#x", g.text, g.seed, h[0], g.hash)
		}
	}
}

func TestNewSketcherOptions(t *testing.T) {
	for _, o := range []shingle.Options{{K: -1}, {K: shingle.MaxK + 1}, {W: shingle.MaxW + 1}, {W: -2}, {Method: 7}} {
		if _, err := shingle.NewSketcher(&o); !errors.Is(err, shingle.ErrInvalidOptions) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
	s, err := shingle.NewSketcher(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Options(); o.K != 128 || o.W != 4 || o.Method != shingle.OnePermutation {
		t.Fatalf("defaults %+v", o)
	}
}

func TestSketchBasics(t *testing.T) {
	for _, m := range []shingle.Method{shingle.OnePermutation, shingle.Classic} {
		s, _ := shingle.NewSketcher(&shingle.Options{K: 64, Method: m})
		empty := s.Sketch(nil)
		for _, v := range empty {
			if v != shingle.Empty {
				t.Fatalf("%v: empty text has value %x", m, v)
			}
		}
		a := s.Sketch([]byte("one two three four five six"))
		b := s.Sketch([]byte("One, two; THREE four five six!"))
		if !slices.Equal(a, b) || shingle.Jaccard(a, b) != 1 {
			t.Fatalf("%v: normalised-equal texts differ", m)
		}
		for _, v := range a {
			if v == shingle.Empty {
				t.Fatalf("%v: densification left an empty value", m)
			}
		}
		if j := shingle.Jaccard(a, empty); j != 0 {
			t.Fatalf("%v: J(text, empty) = %v", m, j)
		}
		sig, _ := s.AppendSketchSimhash([]uint64{7}, []byte("one two three four five six"))
		if sig[0] != 7 || !slices.Equal(sig[1:], a) {
			t.Fatalf("%v: AppendSketchSimhash signature differs from Sketch", m)
		}
	}
	if shingle.Jaccard(shingle.Signature{1}, shingle.Signature{1, 2}) != 0 {
		t.Fatal("mismatched lengths should give 0")
	}
}

func TestSketchNoAllocs(t *testing.T) {
	s, _ := shingle.NewSketcher(nil)
	text := benchText(4 << 10)
	dst := make(shingle.Signature, 0, 128)
	if a := testing.AllocsPerRun(10, func() { dst = s.AppendSketch(dst[:0], text) }); a != 0 {
		t.Fatalf("%v allocations per sketch", a)
	}
}

func exactJaccard(a, b []uint64) float64 {
	in := make(map[uint64]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	inter, union := 0, len(in)
	seen := make(map[uint64]bool, len(b))
	for _, x := range b {
		if seen[x] {
			continue
		}
		seen[x] = true
		if in[x] {
			inter++
		} else {
			union++
		}
	}
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// genPair returns two random sets whose union has n elements and whose
// Jaccard similarity is as close to j as n allows.
func genPair(r *rand.Rand, n int, j float64) (a, b []uint64) {
	inter := int(math.Round(j * float64(n)))
	onlyA := (n - inter) / 2
	onlyB := n - inter - onlyA
	for range inter {
		x := r.Uint64()
		a, b = append(a, x), append(b, x)
	}
	for range onlyA {
		a = append(a, r.Uint64())
	}
	for range onlyB {
		b = append(b, r.Uint64())
	}
	r.Shuffle(len(b), func(i, k int) { b[i], b[k] = b[k], b[i] })
	return a, b
}

// TestAccuracy measures the estimators against exact Jaccard similarity
// on generated sets: K=256, J in 0.1…0.9, sets larger and smaller than K
// (the small ones leave most bins empty, testing densification).
func TestAccuracy(t *testing.T) {
	const k, pairsPerJ = 256, 30
	for _, m := range []shingle.Method{shingle.OnePermutation, shingle.Classic} {
		sizes := []int{60, 1000}
		if m == shingle.Classic { // O(K) per item: keep the reference fast
			sizes = []int{60, 200}
		}
		for _, n := range sizes {
			s, _ := shingle.NewSketcher(&shingle.Options{K: k, Method: m, Seed: 7})
			r := rand.New(rand.NewPCG(uint64(n), 99))
			var absErr, signedErr float64
			var count int
			for ji := 1; ji <= 9; ji++ {
				for range pairsPerJ {
					a, b := genPair(r, n, float64(ji)/10)
					want := exactJaccard(a, b)
					got := shingle.Jaccard(s.SketchSet(nil, a), s.SketchSet(nil, b))
					absErr += math.Abs(got - want)
					signedErr += got - want
					count++
				}
			}
			mae, mse := absErr/float64(count), signedErr/float64(count)
			t.Logf("%v K=%d |set∪|=%d: MAE %.4f, mean signed error %+.4f over %d pairs", m, k, n, mae, mse, count)
			if mae > 0.03 || math.Abs(mse) > 0.01 {
				t.Errorf("%v n=%d: MAE %.4f (want ≤ 0.03), mean signed error %+.4f (want |·| ≤ 0.01)", m, n, mae, mse)
			}
		}
	}
}

// TestAccuracyText checks the text path end to end: documents sharing a
// known fraction of their shingles.
func TestAccuracyText(t *testing.T) {
	s, _ := shingle.NewSketcher(&shingle.Options{K: 256})
	r := rand.New(rand.NewPCG(3, 4))
	var absErr float64
	const docs = 40
	for range docs {
		base := randomWords(r, 400)
		edited := slices.Clone(base)
		for range 1 + r.IntN(20) { // point edits
			edited[r.IntN(len(edited))] = randomWord(r)
		}
		ha := collect(joinWords(base), 4, 0)
		hb := collect(joinWords(edited), 4, 0)
		want := exactJaccard(ha, hb)
		got := shingle.Jaccard(s.Sketch([]byte(joinWords(base))), s.Sketch([]byte(joinWords(edited))))
		absErr += math.Abs(got - want)
	}
	if mae := absErr / docs; mae > 0.03 {
		t.Fatalf("text MAE %.4f > 0.03", mae)
	}
}

func TestSimhash(t *testing.T) {
	s, _ := shingle.NewSketcher(nil)
	r := rand.New(rand.NewPCG(5, 6))
	base := randomWords(r, 300)
	edited := slices.Clone(base)
	edited[150] = "changed"
	other := randomWords(r, 300)
	a, b, c := s.Simhash([]byte(joinWords(base))), s.Simhash([]byte(joinWords(edited))), s.Simhash([]byte(joinWords(other)))
	if d := shingle.Hamming(a, b); d > 6 {
		t.Errorf("one-word edit: Hamming %d", d)
	}
	if d := shingle.Hamming(a, c); d < 16 {
		t.Errorf("unrelated texts: Hamming %d", d)
	}
	if _, sh := s.AppendSketchSimhash(nil, []byte(joinWords(base))); sh != a {
		t.Error("AppendSketchSimhash simhash differs from Simhash")
	}
}
