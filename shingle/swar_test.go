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
