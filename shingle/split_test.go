package shingle

import (
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
			want := slices.Collect(ShingleHashes([]byte(text), w, 5))
			if !slices.Equal(got, want) {
				t.Fatalf("w=%d %.20q: %d hashes, want %d", w, text, len(got), len(want))
			}
		}
	}
}
