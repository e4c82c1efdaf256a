package shingle

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSplitMatchesShingles checks that the Sketcher's two-pass shingle
// hashing yields exactly what the streaming Shingles iterator does.
func TestSplitMatchesShingles(t *testing.T) {
	long := strings.Repeat("Ünïcödé words, and MORE words; ", 400)
	for _, text := range []string{"", ".", "one", "one two", "a rose is a rose is a rose", long} {
		for _, w := range []int{1, 2, 4, 9} {
			s, err := NewSketcher(&Options{W: w, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(s.hashShingles([]byte(text)))
			var words []string
			for w := range Words([]byte(text)) {
				words = append(words, string(w))
			}
			if norm := string(s.Normalized()); norm != strings.Join(words, " ") {
				t.Fatalf("Normalized() = %.20q", norm)
			}
			want := slices.Collect(ShingleHashes([]byte(text), w, 5))
			if !slices.Equal(got, want) {
				t.Fatalf("w=%d %.20q: %d hashes, want %d", w, text, len(got), len(want))
			}
		}
	}
}

// TestSplitRandom compares the Sketcher's bitmap tokenizer with the
// Tokenizer on random texts whose words have every length from 1 to 40
// bytes, mixed case, digits and non-ASCII letters, separated by ASCII and
// non-ASCII separators, so words start and end at every offset of the
// 64-byte bitmap words and cross them.
func TestSplitRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "Z", "q", "7", "é", "Ü", "ß", "東", "e\u0301"}
	seps := []string{" ", ", ", ".", "\n", "\u00a0", "😀", "\xff", " - "}
	s, _ := NewSketcher(&Options{W: 3, Seed: 9})
	for range 300 {
		var b strings.Builder
		for range r.IntN(60) {
			for range 1 + r.IntN(40) {
				if r.IntN(8) == 0 {
					b.WriteString(pieces[r.IntN(len(pieces))])
				} else {
					b.WriteByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789"[r.IntN(46)])
				}
			}
			b.WriteString(seps[r.IntN(len(seps))])
		}
		text := []byte(b.String())
		for cut := range min(len(text), 3) { // also without the final separator
			text := text[:len(text)-cut]
			got := slices.Clone(s.hashShingles(text))
			var words []string
			for w := range Words(text) {
				words = append(words, string(w))
			}
			if norm := string(s.Normalized()); norm != strings.Join(words, " ") {
				t.Fatalf("Normalized() = %q, want %q", norm, strings.Join(words, " "))
			}
			if want := slices.Collect(ShingleHashes(text, 3, 9)); !slices.Equal(got, want) {
				t.Fatalf("%q: hashes differ", text)
			}
		}
	}
}

// FuzzSplit checks, on arbitrary bytes, that the Sketcher's two-pass
// shingle hashing agrees with the streaming Shingles iterator and that
// signatures of both methods are well formed.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"", "a rose is a rose is a rose", "ÉCOLE\xff straße, Ⱥ İ", strings.Repeat("x ", 40)} {
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, text []byte, w uint8) {
		w = w%MaxW + 1
		s, err := NewSketcher(&Options{K: 16, W: int(w)})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(s.hashShingles(text))
		want := slices.Collect(ShingleHashes(text, int(w), 0))
		if !slices.Equal(got, want) {
			t.Fatalf("w=%d: %d hashes, want %d", w, len(got), len(want))
		}
		sig := s.Sketch(text)
		empty := len(want) == 0
		for _, v := range sig {
			if (v == Empty) != empty {
				t.Fatalf("value %x for a text with %d shingles", v, len(want))
			}
		}
	})
}

// TestSimAcc checks the bit-sliced simhash counter against direct
// counting, across the flush boundary.
func TestSimAcc(t *testing.T) {
	for _, n := range []int{0, 1, 2, 254, 255, 256, 1000} {
		var acc simAcc
		var cnt [64]int
		x := uint64(n) + 1
		for range n {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			acc.add(x)
			for b := range cnt {
				cnt[b] += int(x >> b & 1)
			}
		}
		var want uint64
		for b, c := range cnt {
			if 2*c > n {
				want |= 1 << b
			}
		}
		if got := acc.sum(); got != want {
			t.Fatalf("n=%d: simhash %x, want %x", n, got, want)
		}
	}
}
