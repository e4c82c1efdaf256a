package bitio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// ErrOverrun reports a read past the end of the stream (or past the limit
// set with SetLimit). It is returned by Reader.Err, wrapped in an *Error.
var ErrOverrun = errors.New("bitio: read past end of stream")

// ErrOverflow reports a code word whose value does not fit in 64 bits: the
// stream is corrupt (or is not the code the caller expected).
var ErrOverflow = errors.New("bitio: code value overflows 64 bits")

// Error records a failed read: the operation, the bit position where the
// code word started and the underlying cause (ErrOverrun or ErrOverflow).
type Error struct {
	Op  string // "gamma", "delta", "zeta", "unary", "nibble", "golomb", "bits", ...
	Pos uint64 // bit position of the code word that failed
	Err error
}

// Error formats the code, the bit position and the cause.
func (e *Error) Error() string {
	return fmt.Sprintf("bitio: %s at bit %d: %v", e.Op, e.Pos, e.Err)
}

// Unwrap returns ErrOverrun or ErrOverflow.
func (e *Error) Unwrap() error { return e.Err }

// Reader reads codes MSB-first from a bit stream held in memory as 64-bit
// big-endian words (see PackWords), so any 64-bit window costs two loads.
//
// Errors are sticky and checked once per batch of reads: a code word whose
// value does not fit in 64 bits, or a read that crosses the end of the
// stream (or the limit set with SetLimit), makes Err return an *Error
// (unwrapping to ErrOverflow or ErrOverrun). Values returned by reads after
// the position passed the limit are meaningless; callers validate what they
// decode and check Err, for example once per successor list. The work done
// by any single read is bounded by the stream length, so a corrupt stream can
// never make a read loop forever.
//
// The zero value is an empty stream. A Reader is not safe for concurrent use;
// create one per goroutine (NewWordReader and ResetWords do not copy).
type Reader struct {
	words []uint64
	limit uint64 // number of readable bits
	pos   uint64
	err   error
}

// PackWords returns p as big-endian 64-bit words, zero-padded, with one
// extra zero word so that reads near the end take the fast path. Cost: one
// copy of p.
func PackWords(p []byte) []uint64 {
	w := make([]uint64, len(p)/8+2)
	i := 0
	for ; i+8 <= len(p); i += 8 {
		w[i/8] = binary.BigEndian.Uint64(p[i:])
	}
	var last [8]byte
	copy(last[:], p[i:])
	w[i/8] = binary.BigEndian.Uint64(last[:])
	return w
}

// NewReader returns a Reader over a copy of p (see PackWords); all
// len(p)*8 bits are readable.
func NewReader(p []byte) *Reader {
	return NewWordReader(PackWords(p), uint64(len(p))*8)
}

// NewWordReader returns a Reader over the first nbits bits of words, which
// are not copied and must not change while the Reader is in use.
func NewWordReader(words []uint64, nbits uint64) *Reader {
	r := &Reader{}
	r.ResetWords(words, nbits)
	return r
}

// Reset makes r read a copy of p from bit 0 and clears any error.
func (r *Reader) Reset(p []byte) {
	r.ResetWords(PackWords(p), uint64(len(p))*8)
}

// ResetWords makes r read the first nbits bits of words from bit 0 and
// clears any error.
func (r *Reader) ResetWords(words []uint64, nbits uint64) {
	*r = Reader{words: words}
	r.SetLimit(nbits)
}

// SetLimit restricts the readable bits to the first n (n is clamped to the
// stream length). Reads past the limit fail with ErrOverrun.
func (r *Reader) SetLimit(n uint64) {
	if m := uint64(len(r.words)) * 64; n > m {
		n = m
	}
	r.limit = n
}

// Limit returns the number of readable bits.
func (r *Reader) Limit() uint64 { return r.limit }

// Position returns the current bit position.
func (r *Reader) Position() uint64 { return r.pos }

// SetPosition moves to bit p and clears any error. Positions past the limit
// are accepted; the next read then fails.
func (r *Reader) SetPosition(p uint64) {
	r.pos = p
	r.err = nil
}

// Err returns the first error since the last SetPosition/Reset, or nil.
func (r *Reader) Err() error {
	if r.err == nil && r.pos > r.limit {
		r.err = &Error{Op: "read", Pos: r.limit, Err: ErrOverrun}
	}
	return r.err
}

func (r *Reader) fail(op string, start uint64, err error) {
	if r.err == nil {
		r.err = &Error{Op: op, Pos: start, Err: err}
	}
	r.pos = r.limit + 1
}

// peek returns the 64 bits starting at the current position, MSB-aligned;
// bits past the end of the words read as zero.
func (r *Reader) peek() uint64 {
	i := r.pos >> 6
	if i+1 < uint64(len(r.words)) {
		s := r.pos & 63
		return r.words[i]<<s | r.words[i+1]>>(63-s)>>1
	}
	return r.peekSlow()
}

func (r *Reader) peekSlow() uint64 {
	i := r.pos >> 6
	var a, b uint64
	if i < uint64(len(r.words)) {
		a = r.words[i]
	}
	if i+1 < uint64(len(r.words)) {
		b = r.words[i+1]
	}
	s := r.pos & 63
	return a<<s | b>>(63-s)>>1
}

// advance moves forward n bits after a successful decode and checks the limit.
func (r *Reader) advance(n uint64, op string, start uint64) {
	r.pos += n
	if r.pos > r.limit {
		r.fail(op, start, ErrOverrun)
	}
}

// ReadBit reads one bit.
func (r *Reader) ReadBit() uint64 {
	start := r.pos
	v := r.peek() >> 63
	r.advance(1, "bit", start)
	if r.err != nil {
		return 0
	}
	return v
}

// ReadBits reads n ≤ 64 bits as an unsigned integer, most significant first.
func (r *Reader) ReadBits(n uint) uint64 {
	if n == 0 {
		return 0
	}
	start := r.pos
	if n > 64 {
		r.fail("bits", start, ErrOverflow)
		return 0
	}
	v := r.peek() >> (64 - n)
	r.advance(uint64(n), "bits", start)
	if r.err != nil {
		return 0
	}
	return v
}

// ReadUnary reads a unary code: n zeros followed by a one. Cost: one
// 64-bit load per 64 zeros.
func (r *Reader) ReadUnary() uint64 {
	if i := r.pos >> 6; i+1 < uint64(len(r.words)) {
		s := r.pos & 63
		w := r.words[i]<<s | r.words[i+1]>>(63-s)>>1
		if w != 0 {
			lz := uint64(bits.LeadingZeros64(w))
			r.pos += lz + 1
			return lz
		}
	}
	return r.readUnarySlow()
}

func (r *Reader) readUnarySlow() uint64 {
	start := r.pos
	var z uint64
	for {
		if r.pos >= r.limit {
			r.fail("unary", start, ErrOverrun)
			return 0
		}
		w := r.peek()
		if w != 0 {
			lz := uint64(bits.LeadingZeros64(w))
			r.advance(lz+1, "unary", start)
			if r.err != nil {
				return 0
			}
			return z + lz
		}
		z += 64
		r.pos += 64
	}
}

// ReadGamma reads an Elias γ code. Code words of up to 12 bits (values up to
// 62) are decoded with one table lookup.
func (r *Reader) ReadGamma() uint64 {
	if i := r.pos >> 6; i+1 < uint64(len(r.words)) {
		s := r.pos & 63
		w := r.words[i]<<s | r.words[i+1]>>(63-s)>>1
		if t := w >> (64 - tableBits); gammaLen[t] != 0 {
			r.pos += uint64(gammaLen[t])
			return uint64(gammaVal[t])
		}
	}
	return r.readGammaSlow()
}

func (r *Reader) readGammaSlow() uint64 {
	start := r.pos
	w := r.peek()
	if t := w >> (64 - tableBits); gammaLen[t] != 0 {
		r.advance(uint64(gammaLen[t]), "gamma", start)
		if r.err != nil {
			return 0
		}
		return uint64(gammaVal[t])
	}
	if w != 0 {
		lz := uint(bits.LeadingZeros64(w))
		if 2*lz+1 <= 64 {
			v := w>>(63-2*lz) - 1
			r.advance(uint64(2*lz+1), "gamma", start)
			if r.err != nil {
				return 0
			}
			return v
		}
	}
	l := r.ReadUnary()
	if r.err != nil {
		return 0
	}
	if l >= 64 {
		r.fail("gamma", start, ErrOverflow)
		return 0
	}
	v := (uint64(1)<<l | r.ReadBits(uint(l))) - 1
	if r.err != nil {
		return 0
	}
	return v
}

// ReadDelta reads an Elias δ code. Code words of up to 12 bits are decoded
// with one table lookup.
func (r *Reader) ReadDelta() uint64 {
	start := r.pos
	w := r.peek()
	if e := deltaTable[w>>(64-tableBits)]; e != 0 {
		r.advance(uint64(e&0xff), "delta", start)
		if r.err != nil {
			return 0
		}
		return uint64(e >> 8)
	}
	l := r.ReadGamma()
	if r.err != nil {
		return 0
	}
	if l >= 64 {
		r.fail("delta", start, ErrOverflow)
		return 0
	}
	v := (uint64(1)<<l | r.ReadBits(uint(l))) - 1
	if r.err != nil {
		return 0
	}
	return v
}

// ReadZeta reads a ζ_k code (Boldi–Vigna), k ≥ 1. For k ≤ 8 code words of
// up to 12 bits are decoded with one table lookup.
func (r *Reader) ReadZeta(k uint) uint64 {
	if i := r.pos >> 6; k <= maxTableK && i+1 < uint64(len(r.words)) {
		s := r.pos & 63
		w := r.words[i]<<s | r.words[i+1]>>(63-s)>>1
		if k == 3 { // the BV default
			if v, n := Zeta3Fast(w); n != 0 {
				r.pos += uint64(n)
				return v
			}
		} else if e := zetaTables[k][w>>(64-tableBits)]; e != 0 {
			r.pos += uint64(e & 0xff)
			return uint64(e >> 8)
		}
		// Longer words that still fit in the 64 bits of w: decode from w
		// directly.
		h := uint(bits.LeadingZeros64(w))
		if hk := h * k; h+1+hk+k <= 64 {
			rest := w << (h + 1)
			left := uint64(1) << hk
			n := uint64(h + hk + k) // h+1 + hk+k−1
			m := rest >> (64 - (hk + k - 1))
			if m >= left {
				m = rest >> (64 - (hk + k))
				n++
				m -= left // undone below: value = m − 1 = (m − left) + left − 1
			}
			r.pos += n
			return m + left - 1
		}
	}
	return r.readZetaSlow(k)
}

func (r *Reader) readZetaSlow(k uint) uint64 {
	start := r.pos
	if k == 0 || k > 64 {
		r.fail("zeta", start, ErrOverflow)
		return 0
	}
	if k <= maxTableK {
		w := r.peek()
		if e := zetaTables[k][w>>(64-tableBits)]; e != 0 {
			r.advance(uint64(e&0xff), "zeta", start)
			if r.err != nil {
				return 0
			}
			return uint64(e >> 8)
		}
	}
	h := r.ReadUnary()
	if r.err != nil {
		return 0
	}
	if h*uint64(k) >= 64 {
		r.fail("zeta", start, ErrOverflow)
		return 0
	}
	hk := uint(h) * k
	left := uint64(1) << hk
	m := r.readWide(hk+k-1, start)
	if r.err != nil {
		return 0
	}
	if m < left {
		return m + left - 1
	}
	if m>>63 != 0 {
		r.fail("zeta", start, ErrOverflow)
		return 0
	}
	m = m<<1 | r.ReadBit()
	if r.err != nil {
		return 0
	}
	if m == 0 {
		// m ≥ left ≥ 1 before the shift, so m+1 wrapped: value 2^64−1.
		r.fail("zeta", start, ErrOverflow)
		return 0
	}
	return m - 1
}

// readWide reads an n-bit value, n possibly above 64; the bits above the
// low 64 must be zero.
func (r *Reader) readWide(n uint, start uint64) uint64 {
	for n > 64 {
		c := min(n-64, 64)
		if r.ReadBits(c) != 0 {
			r.fail("zeta", start, ErrOverflow)
			return 0
		}
		n -= c
	}
	return r.ReadBits(n)
}

// ReadNibble reads a variable-length nibble code (dsiutils writeNibble):
// groups of a stop bit and 3 value bits, the stop bit set on the last group.
func (r *Reader) ReadNibble() uint64 {
	start := r.pos
	var x uint64
	for {
		if x>>61 != 0 {
			r.fail("nibble", start, ErrOverflow)
			return 0
		}
		g := r.ReadBits(4)
		if r.err != nil {
			return 0
		}
		x = x<<3 | g&7
		if g&8 != 0 {
			return x
		}
	}
}

// ReadGolomb reads a Golomb code with modulus b ≥ 1 (dsiutils readGolomb):
// the quotient in unary, the remainder in minimal binary.
func (r *Reader) ReadGolomb(b uint64) uint64 {
	start := r.pos
	if b == 0 {
		r.fail("golomb", start, ErrOverflow)
		return 0
	}
	q := r.ReadUnary()
	if r.err != nil {
		return 0
	}
	hi, lo := bits.Mul64(q, b)
	if hi != 0 {
		r.fail("golomb", start, ErrOverflow)
		return 0
	}
	rem := r.readMinimalBinary(b)
	if r.err != nil {
		return 0
	}
	v, c := bits.Add64(lo, rem, 0)
	if c != 0 {
		r.fail("golomb", start, ErrOverflow)
		return 0
	}
	return v
}

func (r *Reader) readMinimalBinary(b uint64) uint64 {
	if b == 1 {
		return 0
	}
	log2b := uint(bits.Len64(b) - 1)
	if log2b >= 63 {
		r.fail("golomb", r.pos, ErrOverflow)
		return 0
	}
	m := uint64(1)<<(log2b+1) - b
	x := r.ReadBits(log2b)
	if x < m {
		return x
	}
	return (x<<1 | r.ReadBit()) - m
}
