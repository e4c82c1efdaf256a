package webgraph

import (
	"math/bits"
)

// eliasFano is a static monotone sequence of uint64 in Elias–Fano
// representation: about 2 + log2(U/n) bits per element, Get in O(1)
// expected time (one sampled select and a short word scan).
type eliasFano struct {
	n     int
	l     uint     // number of lower bits
	lower []uint64 // packed lower bits
	upper []uint64 // unary-coded high parts: bit (v>>l)+i is set for element i
	// sampleWord[s] is the word of upper holding one number s·selectStep,
	// sampleRank[s] the number of ones before that word.
	sampleWord, sampleRank []uint32
}

const selectStep = 64

// newEliasFano builds the structure from a nondecreasing sequence with
// last value ≤ max.
func newEliasFano(vals []uint64, max uint64) *eliasFano {
	n := len(vals)
	ef := &eliasFano{n: n}
	if n == 0 {
		return ef
	}
	if max/uint64(n) > 0 {
		ef.l = uint(bits.Len64(max/uint64(n)) - 1)
	}
	ef.lower = make([]uint64, (uint64(n)*uint64(ef.l)+63)/64+1)
	upperBits := max>>ef.l + uint64(n) + 1
	ef.upper = make([]uint64, (upperBits+63)/64+1)
	mask := uint64(1)<<ef.l - 1
	for i, v := range vals {
		if ef.l > 0 {
			pos := uint64(i) * uint64(ef.l)
			lo := v & mask
			w, s := pos/64, pos%64
			ef.lower[w] |= lo << s
			if s+uint64(ef.l) > 64 {
				ef.lower[w+1] |= lo >> (64 - s)
			}
		}
		u := v>>ef.l + uint64(i)
		ef.upper[u/64] |= 1 << (u % 64)
	}
	// For every selectStep-th one, record the word holding it and the
	// number of ones before that word.
	count := 0
	for w, word := range ef.upper {
		c := bits.OnesCount64(word)
		for next := len(ef.sampleWord) * selectStep; next < n && next < count+c; next = len(ef.sampleWord) * selectStep {
			ef.sampleWord = append(ef.sampleWord, uint32(w))
			ef.sampleRank = append(ef.sampleRank, uint32(count))
		}
		count += c
	}
	return ef
}

// get returns element i (0 ≤ i < n).
func (ef *eliasFano) get(i int) uint64 {
	s := i / selectStep
	w := int(ef.sampleWord[s])
	rank := int(ef.sampleRank[s])
	for {
		c := bits.OnesCount64(ef.upper[w])
		if rank+c > i {
			break
		}
		rank += c
		w++
	}
	hi := uint64(w)*64 + uint64(select64(ef.upper[w], i-rank)) - uint64(i)
	if ef.l == 0 {
		return hi
	}
	pos := uint64(i) * uint64(ef.l)
	wl, sh := pos/64, pos%64
	lo := ef.lower[wl] >> sh
	if sh+uint64(ef.l) > 64 {
		lo |= ef.lower[wl+1] << (64 - sh)
	}
	return hi<<ef.l | lo&(1<<ef.l-1)
}

// sizeBits returns the memory used, in bits.
func (ef *eliasFano) sizeBits() uint64 {
	return uint64(len(ef.lower)+len(ef.upper))*64 + uint64(len(ef.sampleWord)+len(ef.sampleRank))*32
}

// selectInByte[b][k] is the position of the k-th set bit of byte b.
var selectInByte = func() (t [256][8]uint8) {
	for b := 0; b < 256; b++ {
		k := 0
		for p := 0; p < 8; p++ {
			if b>>p&1 == 1 {
				t[b][k] = uint8(p)
				k++
			}
		}
	}
	return t
}()

const (
	ones8 = 0x0101010101010101
	msb8  = 0x8080808080808080
)

// select64 returns the position of the k-th (0-based) set bit of w, which
// must have more than k set bits (k < 64). Broadword (Vigna, "Broadword
// implementation of rank/select queries"): the cumulative popcounts of the
// bytes, computed in parallel, locate the byte with one comparison of all
// eight at once; a table finishes within the byte. No loop, no branch.
func select64(w uint64, k int) int {
	s := w - (w>>1)&0x5555555555555555
	s = s&0x3333333333333333 + (s>>2)&0x3333333333333333
	s = (s + s>>4) & 0x0f0f0f0f0f0f0f0f
	cum := s * ones8 // byte i: set bits in bytes 0..i
	// Bytes whose cumulative count is ≤ k have their high bit set here.
	le := ((uint64(k)*ones8 | msb8) - cum) & msb8
	place := uint(bits.OnesCount64(le)) * 8 & 63
	before := int((cum << 8 >> place) & 0xff)
	return int(place) + int(selectInByte[uint8(w>>place)][(k-before)&7])
}
