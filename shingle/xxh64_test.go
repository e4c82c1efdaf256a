package shingle

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func refSeeded(b []byte, seed uint64) uint64 {
	d := xxhash.NewWithSeed(seed)
	d.Write(b)
	return d.Sum64()
}

func TestXXH64MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 200)
	for n := 0; n <= len(buf); n++ {
		for _, seed := range []uint64{0, 1, r.Uint64()} {
			for i := range buf[:n] {
				buf[i] = byte(r.Uint32())
			}
			if got, want := xxh64(buf[:n], seed), refSeeded(buf[:n], seed); got != want {
				t.Fatalf("xxh64(len %d, seed %d) = %x, want %x", n, seed, got, want)
			}
			if seed == 0 && xxh64(buf[:n], 0) != xxhash.Sum64(buf[:n]) {
				t.Fatalf("xxh64(len %d, seed 0) differs from xxhash.Sum64", n)
			}
		}
	}
	for n := 8; n < 16; n++ {
		var b [16]byte
		for i := range b[:n] {
			b[i] = byte(r.Uint32())
		}
		seed := r.Uint64()
		x0, x1 := binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:])
		if got, want := xxh64Upto16(x0, x1, n, seed), refSeeded(b[:n], seed); got != want {
			t.Fatalf("xxh64Upto16(len %d) = %x, want %x", n, got, want)
		}
	}
	for n := 0; n <= 20; n++ {
		words := make([]uint64, n)
		enc := make([]byte, 8*n)
		for i := range words {
			words[i] = r.Uint64()
			binary.LittleEndian.PutUint64(enc[8*i:], words[i])
		}
		seed := r.Uint64()
		if got, want := xxh64Words(words, seed), refSeeded(enc, seed); got != want {
			t.Fatalf("xxh64Words(%d words) = %x, want %x", n, got, want)
		}
		if n == 4 {
			if got, want := xxh64Words4(words[0], words[1], words[2], words[3], seed), refSeeded(enc, seed); got != want {
				t.Fatalf("xxh64Words4 = %x, want %x", got, want)
			}
		}
		if n == 1 {
			if got, want := xxh64Word(words[0], seed), refSeeded(enc, seed); got != want {
				t.Fatalf("xxh64Word = %x, want %x", got, want)
			}
		}
	}
}
