package shingle

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Serialised forms (all integers little-endian):
//
//	Signature: 'S' 0x01 uvarint(K) then K × uint64
//	Packed:    'P' 0x01 byte(b) uvarint(K) then ceil(K·b/64) × uint64,
//	           value i in bits [(i·b) mod 64, +b) of word i·b/64, unused
//	           high bits of the last word zero.
const (
	sigTag    = 'S'
	packedTag = 'P'
	version   = 1
)

// MarshalBinary encodes s (see the package documentation for the format).
func (s Signature) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+8*len(s))
	b = append(b, sigTag, version)
	b = binary.AppendUvarint(b, uint64(len(s)))
	for _, v := range s {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b, nil
}

// UnmarshalBinary decodes data written by MarshalBinary into s. Errors
// wrap ErrCorrupt; s is left unchanged on error.
func (s *Signature) UnmarshalBinary(data []byte) error {
	if len(data) < 2 || data[0] != sigTag || data[1] != version {
		return errorf("UnmarshalBinary", ErrCorrupt, "signature header")
	}
	k, n := binary.Uvarint(data[2:])
	if n <= 0 || k > MaxK || n != uvarintLen(k) {
		return errorf("UnmarshalBinary", ErrCorrupt, "signature length")
	}
	body := data[2+n:]
	if uint64(len(body)) != 8*k {
		return errorf("UnmarshalBinary", ErrCorrupt, "signature of %d values in %d bytes", k, len(body))
	}
	out := make(Signature, k)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(body[8*i:])
	}
	*s = out
	return nil
}

// Packed is a b-bit MinHash signature (Li & König 2010): only the lowest b
// bits of each value are kept, cutting memory by 64/b at the price of
// chance agreements (probability 2⁻ᵇ), which Jaccard corrects for. The
// zero value is an empty signature. Packed values are immutable and safe
// for concurrent reads.
type Packed struct {
	b     int
	k     int
	words []uint64
}

// Pack keeps the lowest b bits of each value of s. b must be 1, 2, 4, 8,
// 16, 32 or 64. Memory: K·b/8 bytes.
func (s Signature) Pack(b int) (Packed, error) {
	if b < 1 || b > 64 || b&(b-1) != 0 {
		return Packed{}, errorf("Pack", ErrInvalidOptions, "b=%d (want a power of two ≤ 64)", b)
	}
	p := Packed{b: b, k: len(s), words: make([]uint64, (len(s)*b+63)/64)}
	mask := uint64(math.MaxUint64)
	if b < 64 {
		mask = 1<<b - 1
	}
	for i, v := range s {
		bit := i * b
		p.words[bit/64] |= (v & mask) << (bit % 64)
	}
	return p, nil
}

// Bits returns b, the bits kept per value.
func (p Packed) Bits() int { return p.b }

// Len returns K, the number of values.
func (p Packed) Len() int { return p.k }

// Value returns the i-th b-bit value; 0 ≤ i < Len().
func (p Packed) Value(i int) uint64 {
	bit := i * p.b
	v := p.words[bit/64] >> (bit % 64)
	if p.b < 64 {
		v &= 1<<p.b - 1
	}
	return v
}

// Jaccard estimates the Jaccard similarity from two packed signatures of
// equal K and b: with E the fraction of equal values, J = (E − 2⁻ᵇ)/(1 −
// 2⁻ᵇ), clamped to [0, 1]. It returns 0 for incompatible or empty
// signatures. Cost: O(K·b/64) word operations.
func (p Packed) Jaccard(q Packed) float64 {
	if p.b != q.b || p.k != q.k || p.k == 0 || len(p.words) != len(q.words) {
		return 0
	}
	// Count the fields that differ: OR each field's bits into its lowest
	// bit, then count lowest bits. Padding fields are zero in both.
	var low uint64 // bit 0 of every field
	for i := 0; i < 64; i += p.b {
		low |= 1 << i
	}
	diff := 0
	for i := range p.words {
		x := p.words[i] ^ q.words[i]
		for s := 1; s < p.b; s <<= 1 {
			x |= x >> s
		}
		diff += bits.OnesCount64(x & low)
	}
	e := float64(p.k-diff) / float64(p.k)
	c := math.Ldexp(1, -p.b)
	j := (e - c) / (1 - c)
	return min(max(j, 0), 1)
}

// MarshalBinary encodes p (see the package documentation for the format).
func (p Packed) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 3+binary.MaxVarintLen64+8*len(p.words))
	b = append(b, packedTag, version, byte(p.b))
	b = binary.AppendUvarint(b, uint64(p.k))
	for _, w := range p.words {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b, nil
}

// UnmarshalBinary decodes data written by MarshalBinary into p. Errors
// wrap ErrCorrupt; p is left unchanged on error.
func (p *Packed) UnmarshalBinary(data []byte) error {
	if len(data) < 3 || data[0] != packedTag || data[1] != version {
		return errorf("UnmarshalBinary", ErrCorrupt, "packed header")
	}
	b := int(data[2])
	if b < 1 || b > 64 || b&(b-1) != 0 {
		return errorf("UnmarshalBinary", ErrCorrupt, "packed b=%d", b)
	}
	k, n := binary.Uvarint(data[3:])
	if n <= 0 || k > MaxK || n != uvarintLen(k) {
		return errorf("UnmarshalBinary", ErrCorrupt, "packed length")
	}
	body := data[3+n:]
	nw := (int(k)*b + 63) / 64
	if len(body) != 8*nw {
		return errorf("UnmarshalBinary", ErrCorrupt, "packed %d×%d bits in %d bytes", k, b, len(body))
	}
	words := make([]uint64, nw)
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(body[8*i:])
	}
	if used := int(k) * b % 64; used != 0 && words[nw-1]>>used != 0 {
		return errorf("UnmarshalBinary", ErrCorrupt, "packed padding bits set")
	}
	*p = Packed{b: b, k: int(k), words: words}
	return nil
}

// uvarintLen is the length of x's shortest uvarint encoding; longer ones
// are rejected so every value has exactly one serialised form.
func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}
