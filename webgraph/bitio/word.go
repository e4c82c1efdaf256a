package bitio

import "math/bits"

// The functions of this file are the word-level core of the decoders, for
// hot loops that keep the bit position in a local variable instead of a
// Reader: Peek loads the next 64 bits, and GammaWord, ZetaWord and UnaryWord
// decode one code word from them without touching memory (except a table).
// A length of 0 means the word does not fit in the 64 bits (or they are all
// zero); the caller then falls back to a Reader, which handles long words,
// overflow and the end of the stream.

// Peek returns the 64 bits of words starting at bit pos, MSB-aligned; bits
// past the end of words read as zero. Cost: two loads.
func Peek(words []uint64, pos uint64) uint64 {
	i := pos >> 6
	if i+1 < uint64(len(words)) {
		s := pos & 63
		return words[i]<<s | words[i+1]>>(63-s)>>1
	}
	return peekTail(words, pos)
}

func peekTail(words []uint64, pos uint64) uint64 {
	i := pos >> 6
	if i >= uint64(len(words)) {
		return 0
	}
	return words[i] << (pos & 63)
}

// UnaryWord decodes the unary code word at the top of w: its value and
// length, or 0, 0 when w is zero.
func UnaryWord(w uint64) (v uint64, n uint) {
	if w == 0 {
		return 0, 0
	}
	z := uint(bits.LeadingZeros64(w))
	return uint64(z), z + 1
}

// GammaWord decodes the γ code word at the top of w: its value and length,
// or 0, 0 when the word is longer than 64 bits. Words of up to 12 bits take
// one table lookup, longer ones a leading-zero count.
func GammaWord(w uint64) (v uint64, n uint) {
	i := w >> (64 - tableBits)
	if n := uint(gammaLen[i]); n != 0 {
		return uint64(gammaVal[i]), n
	}
	return gammaWordLong(w)
}

func gammaWordLong(w uint64) (uint64, uint) {
	lz := uint(bits.LeadingZeros64(w))
	if lz > 31 {
		return 0, 0
	}
	return w>>(63-2*lz) - 1, 2*lz + 1
}

// ZetaWord decodes the ζ_k code word (k ≥ 1) at the top of w: its value and
// length, or 0, 0 when the word is longer than 64 bits. For k ≤ 8 words of
// up to 12 bits take one table lookup.
func ZetaWord(w uint64, k uint) (v uint64, n uint) {
	if k-1 < maxTableK {
		if e := zetaTables[k][w>>(64-tableBits)]; e != 0 {
			return uint64(e >> 8), uint(e & 0xff)
		}
	}
	return zetaWordLong(w, k)
}

// Zeta3Short decodes the ζ_3 code word (k = 3 is the default of the BV
// format) at the top of w if it has at most 12 bits (values below 63: most
// gaps of a web graph), with one table lookup; otherwise it returns 0, 0 and
// the caller goes on with ZetaWord(w, 3). It is small enough to be inlined
// into a decoding loop, which ZetaWord is not.
func Zeta3Short(w uint64) (v uint64, n uint) {
	i := w >> (64 - tableBits)
	return uint64(zeta3Val[i]), uint(zeta3Len[i])
}

// Zeta3Fast decodes the ζ_3 code word at the top of w if its first 12
// bits tell its length, which they do for every word of up to 40 bits
// (values below 2^30 − 1): one table lookup for the length and constant,
// and a shift. It returns the value and the length, or a length of 0 (and
// a meaningless value) for a longer word. Unlike Zeta3Short it does not
// miss on the words of 13 to 40 bits, which in a web graph are a fifth of
// the residual gaps; the caller still checks that the length is within its
// window.
func Zeta3Fast(w uint64) (v uint64, n uint) {
	i := w >> (64 - tableBits)
	n = uint(zeta3Long[i])
	return w>>((64-n)&63) + uint64(int64(zeta3Add[i])), n
}

// Zeta3Word decodes the ζ_3 code word at the top of w with arithmetic
// instead of a table, for words of any length: it returns the value and
// the length, and a length above 64 means the word does not fit in w (the
// value is then meaningless). It has no branch and inlines, for the words
// a table does not hold: in a BV record, the first residual (a distance
// from the node) is often one.
func Zeta3Word(w uint64) (v uint64, n uint) {
	h := uint(bits.LeadingZeros64(w))
	hk := 3 * h
	t := w << (h + 1) >> (61 - hk) // the hk+3 bits after the unary part
	m, left := t>>1, uint64(1)<<hk
	v, n = m+left-1, 4*h+3
	if m >= left { // the longer of the minimal binary code's two lengths
		v, n = t-1, n+1
	}
	return v, n
}

func zetaWordLong(w uint64, k uint) (uint64, uint) {
	h := uint(bits.LeadingZeros64(w))
	if k == 0 || h == 64 || k > 64 {
		return 0, 0
	}
	hk := h * k
	if h+1+hk+k > 64 {
		return 0, 0
	}
	rest := w << (h + 1)
	left := uint64(1) << hk
	n := h + hk + k // h+1 + hk+k−1
	m := rest >> (64 - (hk + k - 1))
	if m < left {
		return m + left - 1, n
	}
	return rest>>(64-(hk+k)) - 1, n + 1
}
