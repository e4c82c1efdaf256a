package pebblecontent

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"
	"github.com/crawlkit/crawlkit/shingle"
)

// b-bit minwise hashing (Li & König 2010): a stored signature keeps the
// lowest b bits of each MinHash value, b/8 bytes little-endian per value.
// The low bits of a one-permutation value are uniform (its high bits
// choose the bin), so two values agree by chance with probability 2⁻ᵇ,
// which the estimator corrects for exactly as shingle.Packed.Jaccard does.

// pack appends the b-bit form of sig (width bytes per value) to dst.
func pack(dst []byte, sig shingle.Signature, width int) []byte {
	var buf [8]byte
	for _, v := range sig {
		binary.LittleEndian.PutUint64(buf[:], v)
		dst = append(dst, buf[:width]...)
	}
	return dst
}

// bandHash returns the hash of band i of a packed signature: XXH64 of the
// band's bytes. Bands are hashed from the packed values, not the full
// ones, so that Forget can find a document's buckets from its stored
// signature; at b = 8 and 9 rows a band still has 72 bits, so unrelated
// documents share a bucket with probability 2⁻⁷² per band.
func bandHash(packed []byte, i, rows, width int) uint64 {
	n := rows * width
	return xxhash.Sum64(packed[i*n : (i+1)*n])
}

// jaccard estimates the Jaccard similarity of the sets two packed
// signatures (k values of width bytes) were made from: the fraction E of
// equal values, corrected for chance agreement, (E − 2⁻ᵇ)/(1 − 2⁻ᵇ)
// clamped to [0, 1]; at b = 64, E itself (shingle.Jaccard). Cost: K·b/64
// word operations.
func jaccard(a, b []byte, k, width int) float64 {
	if len(a) != len(b) || len(a) != k*width || k == 0 {
		return 0
	}
	// Count the values that differ: OR each value's bits into its lowest
	// bit, then count lowest bits, eight bytes at a time.
	var low uint64
	for i := 0; i < 64; i += 8 * width {
		low |= 1 << i
	}
	diff, i := 0, 0
	for ; i+8 <= len(a); i += 8 {
		x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:])
		for s := 1; s < 8*width; s <<= 1 {
			x |= x >> s
		}
		diff += bits.OnesCount64(x & low)
	}
	for ; i < len(a); i += width {
		for j := range width {
			if a[i+j] != b[i+j] {
				diff++
				break
			}
		}
	}
	e := float64(k-diff) / float64(k)
	if width == 8 {
		return e
	}
	c := math.Ldexp(1, -8*width)
	return min(max((e-c)/(1-c), 0), 1)
}
