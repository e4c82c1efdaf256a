package shingle

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func TestNonWord(t *testing.T) {
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
		got := nonWord(binary.LittleEndian.Uint64(b[:]))
		for i, c := range b {
			want := byteClass[c] != lower
			if (got>>(8*i+7)&1 == 1) != want {
				t.Fatalf("nonWord(%q) byte %d (%#x): got %v, want %v", b, i, c, !want, want)
			}
		}
	}
}
