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
