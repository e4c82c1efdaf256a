package webgraph

import (
	"math/rand/v2"
	"testing"
)

func TestEliasFano(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	tests := []struct {
		name string
		vals []uint64
	}{
		{"single zero", []uint64{0}},
		{"all equal", []uint64{5, 5, 5, 5}},
		{"consecutive", func() []uint64 {
			v := make([]uint64, 1000)
			for i := range v {
				v[i] = uint64(i)
			}
			return v
		}()},
		{"huge gaps", []uint64{0, 1 << 40, 1<<40 + 1, 1 << 50}},
		{"random offsets", func() []uint64 {
			v := make([]uint64, 5000)
			for i := 1; i < len(v); i++ {
				v[i] = v[i-1] + uint64(rng.IntN(100)) // gaps like node bit lengths, zeros included
			}
			return v
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ef := newEliasFano(tt.vals, tt.vals[len(tt.vals)-1])
			for i, v := range tt.vals {
				if got := ef.get(i); got != v {
					t.Fatalf("get(%d) = %d, want %d", i, got, v)
				}
			}
		})
	}
}

// TestSelect64 checks the broadword select against a bit-by-bit scan.
func TestSelect64(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	words := []uint64{1, 1 << 63, ^uint64(0), 0x8000000000000001, 0x00ff00ff00ff00ff, 0xf0f0f0f0f0f0f0f0}
	for i := 0; i < 2000; i++ {
		words = append(words, rng.Uint64()&rng.Uint64()|1<<rng.UintN(64))
	}
	for _, w := range words {
		k := 0
		for p := 0; p < 64; p++ {
			if w>>p&1 == 0 {
				continue
			}
			if got := select64(w, k); got != p {
				t.Fatalf("select64(%#x, %d) = %d, want %d", w, k, got, p)
			}
			k++
		}
	}
}
