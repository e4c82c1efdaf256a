package frontier

import (
	"math/rand/v2"
	"testing"
)

// TestHostTable checks T against a map through random puts and deletes,
// with keys crowded into few home slots so that probe runs wrap around
// and deletions shift entries back.
func TestHostTable(t *testing.T) {
	for _, b := range []int{1, 3, 64, 1000} {
		tab := newHostTable(b)
		want := make(map[uint64]int32)
		r := rand.New(rand.NewPCG(uint64(b), 9))
		// Keys share their low bits in groups, and some sit at the end
		// of the slots so that their runs wrap.
		key := func() uint64 {
			home := uint64(r.IntN(4)) * (tab.mask / 3)
			return uint64(r.IntN(3*b+1))<<32 | home
		}
		for range 20000 {
			k := key()
			if _, ok := want[k]; ok {
				tab.del(k)
				delete(want, k)
			} else if len(want) < b {
				j := int32(r.IntN(b))
				tab.put(k, j)
				want[k] = j
			}
			if tab.len() != len(want) {
				t.Fatalf("b=%d: len %d, want %d", b, tab.len(), len(want))
			}
			for k, j := range want {
				if got, ok := tab.get(k); !ok || got != j {
					t.Fatalf("b=%d: get(%x) = %d, %v; want %d", b, k, got, ok, j)
				}
			}
			if _, ok := tab.get(key() | 1<<63); ok {
				t.Fatalf("b=%d: found a key never put", b)
			}
		}
	}
}
