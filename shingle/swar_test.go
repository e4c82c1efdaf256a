package shingle

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func TestClassify(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for n := range 200000 {
		for i := range b {
			if n < 256*8 { // every byte value in every position
				b[i] = byte(r.Uint32())
				b[n%8] = byte(n / 8)
			} else {
				b[i] = byte(r.Uint32())
			}
		}
		low, up := classify(binary.LittleEndian.Uint64(b[:]))
		for i, c := range b {
			if got, want := low>>(8*i+7)&1 == 1, byteClass[c] == lower; got != want {
				t.Fatalf("classify(%q) byte %d (%#x) lower: %v, want %v", b, i, c, got, want)
			}
			if got, want := up>>(8*i+7)&1 == 1, byteClass[c] == upper; got != want {
				t.Fatalf("classify(%q) byte %d (%#x) upper: %v, want %v", b, i, c, got, want)
			}
		}
	}
}

// TestWordMask checks the bitmap of candidate word bytes against the
// byte classes, for every byte value at every position.
func TestWordMask(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var b [64]byte
	for n := range 20000 {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if n < 256*64 {
			b[n%64] = byte(n / 64)
		}
		m := wordMask(b[:])
		for i, c := range b {
			if got, want := m>>i&1 == 1, byteClass[c] != sep; got != want {
				t.Fatalf("wordMask byte %d (%#x): %v, want %v", i, c, got, want)
			}
		}
	}
}
