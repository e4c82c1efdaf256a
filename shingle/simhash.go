package shingle

import "math/bits"

// Simhash returns the 64-bit simhash (Charikar 2002; Manku, Jain & Das
// Sarma 2007) of text's w-shingles: bit b is set if more than half of the
// shingle hashes have bit b set. Texts whose shingle multisets are close
// have simhashes at a small Hamming distance. Cost: one pass over text and
// 64 additions per shingle; no allocation.
func (s *Sketcher) Simhash(text []byte) uint64 {
	var acc simAcc
	for _, h := range s.hashShingles(text) {
		acc.add(h)
	}
	return acc.sum()
}

// AppendSketchSimhash computes both the signature (appended to dst) and
// the simhash of text in one pass, for the combined near-duplicate filter
// (NearIndex).
func (s *Sketcher) AppendSketchSimhash(dst Signature, text []byte) (Signature, uint64) {
	var acc simAcc
	dst, sig := grow(dst, s.opts.K)
	k := uint64(s.opts.K)
	hs := s.hashShingles(text)
	if s.opts.Method == Classic {
		s.indexWords()
	}
	for i, h := range hs {
		acc.add(h)
		if s.opts.Method == Classic {
			s.addClassic(sig, s.shingleBytes(i))
			continue
		}
		h = min(h, Empty-1)
		bin, _ := bits.Mul64(h, k)
		if h < sig[bin] {
			sig[bin] = h
		}
	}
	if s.opts.Method == OnePermutation {
		s.densify(sig)
	}
	return dst, acc.sum()
}

// simAcc counts, for each of the 64 bit positions, how many added hashes
// have that bit set. Counting is bit-sliced: lanes[k] holds eight 8-bit
// counters for the bits of byte k, bumped with one table lookup and one
// addition per byte, and flushed to cnt before they can overflow.
type simAcc struct {
	n     int32
	lanes [8]uint64
	cnt   [64]int32
}

// spread[b] has byte i equal to bit i of b.
var spread = func() (t [256]uint64) {
	for b := range t {
		for i := range 8 {
			t[b] |= uint64(b>>i&1) << (8 * i)
		}
	}
	return t
}()

func (a *simAcc) add(h uint64) {
	for k := range a.lanes {
		a.lanes[k] += spread[byte(h>>(8*k))]
	}
	if a.n++; a.n%255 == 0 {
		a.flush()
	}
}

func (a *simAcc) flush() {
	for k, l := range a.lanes {
		for i := range 8 {
			a.cnt[8*k+i] += int32(l >> (8 * i) & 0xff)
		}
	}
	a.lanes = [8]uint64{}
}

func (a *simAcc) sum() uint64 {
	a.flush()
	var fp uint64
	for b, c := range a.cnt {
		if 2*c > a.n {
			fp |= 1 << b
		}
	}
	return fp
}

// Hamming returns the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }
