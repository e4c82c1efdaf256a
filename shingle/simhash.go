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
	for i, h := range s.hashShingles(text) {
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

type simAcc struct {
	n   int32
	cnt [64]int32
}

func (a *simAcc) add(h uint64) {
	a.n++
	for b := range a.cnt {
		a.cnt[b] += int32(h >> b & 1)
	}
}

func (a *simAcc) sum() uint64 {
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
