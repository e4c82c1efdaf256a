package bitio

import "math/bits"

// tableBits is the width of the decoding tables: a code word of at most
// tableBits bits is decoded with a single lookup on the next tableBits bits.
const tableBits = 12

// maxTableK is the largest ζ_k parameter with a decoding table.
const maxTableK = 8

// A table entry packs value<<8 | code length; 0 means "not in the table".
var (
	deltaTable [1 << tableBits]uint32
	zetaTables [maxTableK + 1]*[1 << tableBits]uint32
)

// The γ and ζ_3 tables, the hottest, are split into values and lengths (a
// length of 0 meaning "not in the table"): unpacking a packed entry needs
// it twice, and in a large decoding function the register allocator
// spilled it to the stack between the two uses, a store and a reload on
// the critical path of every code word (3.5% of cnr-2000's sequential
// decoding). The split tables are also smaller: 12 KiB instead of 16.
var (
	gammaVal, zeta3Val [1 << tableBits]uint16
	gammaLen, zeta3Len [1 << tableBits]uint8
)

// zeta3Long and zeta3Add decode by arithmetic every ζ_3 word whose first
// tableBits bits tell its length, not only the words that fit in them: a
// word of ζ_3 is h zeros, a one and a payload of 3h+2 or 3h+3 bits, and the
// payload's first two bits say which (00: the short one). With h ≤ 9 the
// twelve bits hold them, so for words of up to 40 bits (values below
// 2^30 − 1) zeta3Long is the word's length, and its value is the word read
// as an integer plus zeta3Add, the same for all words of that length and
// form. A length of 0 means h > 9.
var (
	zeta3Long [1 << tableBits]uint8
	zeta3Add  [1 << tableBits]int32
)

func init() {
	fill := func(t *[1 << tableBits]uint32, code func(uint64) (uint64, uint)) {
		for v := uint64(0); ; v++ {
			w, n := code(v)
			if n > tableBits {
				// Code lengths are non-decreasing in v for γ, δ and ζ, so
				// the first word that does not fit ends the table.
				return
			}
			shift := tableBits - n
			base := w << shift
			for j := uint64(0); j < 1<<shift; j++ {
				t[base|j] = uint32(v)<<8 | uint32(n)
			}
		}
	}
	var gammaTable [1 << tableBits]uint32
	fill(&gammaTable, gammaWord)
	fill(&deltaTable, deltaWord)
	for k := uint(1); k <= maxTableK; k++ {
		t := new([1 << tableBits]uint32)
		fill(t, func(v uint64) (uint64, uint) { return zetaWord(v, k) })
		zetaTables[k] = t
	}
	for i, e := range gammaTable {
		gammaVal[i], gammaLen[i] = uint16(e>>8), uint8(e)
	}
	for i, e := range zetaTables[3] {
		zeta3Val[i], zeta3Len[i] = uint16(e>>8), uint8(e)
	}
	for i := 1; i < 1<<tableBits; i++ {
		h := uint(bits.LeadingZeros16(uint16(i))) - (16 - tableBits)
		if h > tableBits-3 {
			continue // the payload's first two bits are not in the index
		}
		// The word is 1<<p | payload, read as an integer, with p payload
		// bits; its value m−1 (m ≥ 1 the number coded) is that integer
		// plus a constant per form.
		if i>>(tableBits-h-3)&3 == 0 { // short: payload m − 2^3h in 3h+2 bits
			p := 3*h + 2
			zeta3Long[i], zeta3Add[i] = uint8(h+1+p), int32(int64(1)<<(3*h)-1-int64(1)<<p)
		} else { // long: payload m in 3h+3 bits
			p := 3*h + 3
			zeta3Long[i], zeta3Add[i] = uint8(h+1+p), int32(-1-int64(1)<<p)
		}
	}
}

// gammaWord returns the γ code word of v (v < 2^32) right-aligned, and its length.
func gammaWord(v uint64) (uint64, uint) {
	m := v + 1
	l := uint(bits.Len64(m) - 1)
	return m, 2*l + 1 // l zeros, then the l+1 bits of m (leading one included)
}

func deltaWord(v uint64) (uint64, uint) {
	m := v + 1
	l := uint(bits.Len64(m) - 1)
	gw, gn := gammaWord(uint64(l))
	return gw<<l | (m & (1<<l - 1)), gn + l
}

func zetaWord(v uint64, k uint) (uint64, uint) {
	m := v + 1
	h := uint(bits.Len64(m)-1) / k
	left := uint64(1) << (h * k)
	// unary(h): h zeros then a one
	if m-left < left {
		n := h*k + k - 1
		return 1<<n | (m - left), h + 1 + n
	}
	n := h*k + k
	return 1<<n | m, h + 1 + n
}

// UnaryLen returns the length in bits of the unary code of v.
func UnaryLen(v uint64) uint64 { return v + 1 }

// GammaLen returns the length in bits of the γ code of v (v < 2^64−1).
func GammaLen(v uint64) uint64 {
	return 2*uint64(bits.Len64(v+1)-1) + 1
}

// DeltaLen returns the length in bits of the δ code of v (v < 2^64−1).
func DeltaLen(v uint64) uint64 {
	l := uint64(bits.Len64(v+1) - 1)
	return GammaLen(l) + l
}

// ZetaLen returns the length in bits of the ζ_k code of v (v < 2^64−1, k ≥ 1).
func ZetaLen(v uint64, k uint) uint64 {
	m := v + 1
	h := uint64(bits.Len64(m)-1) / uint64(k)
	hk := h * uint64(k)
	if m-(uint64(1)<<hk) < uint64(1)<<hk {
		return h + 1 + hk + uint64(k) - 1
	}
	return h + 1 + hk + uint64(k)
}

// NibbleLen returns the length in bits of the nibble code of v.
func NibbleLen(v uint64) uint64 {
	if v == 0 {
		return 4
	}
	return uint64((bits.Len64(v)-1)/3+1) * 4
}

// GolombLen returns the length in bits of the Golomb code of v with modulus b ≥ 1.
func GolombLen(v, b uint64) uint64 {
	q := v / b
	if b == 1 {
		return q + 1
	}
	log2b := uint64(bits.Len64(b) - 1)
	m := uint64(1)<<(log2b+1) - b
	if v-q*b < m {
		return q + 1 + log2b
	}
	return q + 1 + log2b + 1
}
