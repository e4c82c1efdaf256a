package shingle_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crawlkit/crawlkit/shingle"
)

func TestPack(t *testing.T) {
	s, _ := shingle.NewSketcher(&shingle.Options{K: 256, Seed: 1})
	r := rand.New(rand.NewPCG(4, 4))
	for _, b := range []int{1, 2, 4, 8, 16, 32, 64} {
		var absErr float64
		const pairs = 60
		for i := range pairs {
			x, y := genPair(r, 500, 0.2+0.6*float64(i)/pairs)
			sx, sy := s.SketchSet(nil, x), s.SketchSet(nil, y)
			px, err := sx.Pack(b)
			if err != nil {
				t.Fatal(err)
			}
			py, _ := sy.Pack(b)
			if px.Bits() != b || px.Len() != 256 {
				t.Fatal("Bits/Len")
			}
			for k := range sx {
				want := sx[k]
				if b < 64 {
					want &= 1<<b - 1
				}
				if px.Value(k) != want {
					t.Fatalf("b=%d: Value(%d) = %x, want %x", b, k, px.Value(k), want)
				}
			}
			absErr += math.Abs(px.Jaccard(py) - exactJaccard(x, y))
			if b == 64 && px.Jaccard(py) != shingle.Jaccard(sx, sy) {
				t.Fatal("64-bit packed estimate differs from the full one")
			}
		}
		// b-bit estimates have variance growing as b shrinks (Li & König).
		limit := map[int]float64{1: 0.09, 2: 0.05}[b]
		if limit == 0 {
			limit = 0.03
		}
		if mae := absErr / pairs; mae > limit {
			t.Errorf("b=%d: MAE %.4f > %.2f", b, mae, limit)
		}
	}
	for _, b := range []int{0, 3, 65, -1} {
		if _, err := (shingle.Signature{1, 2}).Pack(b); !errors.Is(err, shingle.ErrInvalidOptions) {
			t.Errorf("Pack(%d): %v", b, err)
		}
	}
	p1, _ := shingle.Signature{1, 2, 3}.Pack(8)
	p2, _ := shingle.Signature{1, 2, 3}.Pack(4)
	if p1.Jaccard(p2) != 0 || (shingle.Packed{}).Jaccard(shingle.Packed{}) != 0 {
		t.Error("incompatible packed signatures should give 0")
	}
}

func TestSerialisation(t *testing.T) {
	sig := shingle.Signature{0, 1, math.MaxUint64, 0xdeadbeef, 5}
	data, _ := sig.MarshalBinary()
	var got shingle.Signature
	if err := got.UnmarshalBinary(data); err != nil || !slices64Equal(got, sig) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, b := range []int{1, 4, 8, 64} {
		p, _ := sig.Pack(b)
		data, _ := p.MarshalBinary()
		var q shingle.Packed
		if err := q.UnmarshalBinary(data); err != nil || q.Len() != p.Len() || q.Bits() != b {
			t.Fatalf("packed round trip b=%d: %v", b, err)
		}
		for i := range sig {
			if q.Value(i) != p.Value(i) {
				t.Fatalf("b=%d value %d", b, i)
			}
		}
	}
	bad := [][]byte{
		nil, {'S'}, {'S', 2, 0}, {'S', 1, 1, 0}, {'S', 1, 0x80}, {'X', 1, 0},
		{'P', 1, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0}, {'P', 1, 8, 1, 0xff, 1, 0, 0, 0, 0, 0, 0},
		{'P', 1, 8, 2, 0, 0, 0, 0, 0, 0, 0},
	}
	for _, d := range bad {
		var s shingle.Signature
		var p shingle.Packed
		if err := s.UnmarshalBinary(d); !errors.Is(err, shingle.ErrCorrupt) {
			t.Errorf("Signature.UnmarshalBinary(%x): %v", d, err)
		}
		if err := p.UnmarshalBinary(d); !errors.Is(err, shingle.ErrCorrupt) {
			t.Errorf("Packed.UnmarshalBinary(%x): %v", d, err)
		}
	}
}

func slices64Equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzSignatureUnmarshal(f *testing.F) {
	for _, s := range []shingle.Signature{{}, {1}, {1, 2, 3, math.MaxUint64}} {
		d, _ := s.MarshalBinary()
		f.Add(d)
	}
	f.Add([]byte{'S', 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s shingle.Signature
		if err := s.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, shingle.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, _ := s.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding %x gives %x", data, again)
		}
	})
}

func FuzzPackedUnmarshal(f *testing.F) {
	for _, b := range []int{1, 2, 8, 64} {
		p, _ := shingle.Signature{1, 2, 3, 0xabcdef}.Pack(b)
		d, _ := p.MarshalBinary()
		f.Add(d)
	}
	f.Add([]byte{'P', 1, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var p shingle.Packed
		if err := p.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, shingle.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		for i := range p.Len() {
			_ = p.Value(i)
		}
		if j := p.Jaccard(p); p.Len() > 0 && j != 1 {
			t.Fatalf("self-similarity %v", j)
		}
		again, _ := p.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding %x gives %x", data, again)
		}
	})
}
