package bitio

import (
	"errors"
	"io"
	"math"
	"math/bits"
)

// ErrRange reports a value that the requested code cannot represent (for
// example γ(2^64−1), whose code word would need 129 bits, or ζ_0).
var ErrRange = errors.New("bitio: value out of range for code")

// Writer writes codes MSB-first, the bit layout of dsiutils' OutputBitStream
// (Java WebGraph) and webgraph-rs' big-endian streams.
//
// Output goes to an io.Writer in chunks, or, when the io.Writer is nil, to an
// internal buffer returned by Bytes. Close pads the last byte with zeros, as
// Java does. Errors (from the io.Writer, or ErrRange) are sticky and returned
// by Err and Close. Every Write method returns the number of bits written, so
// a Writer also serves as a bit counter.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	buf     []byte
	acc     uint64 // pending bits, right-aligned
	nacc    uint   // number of pending bits in acc (< 64)
	written uint64
	err     error
}

// flushAt is the buffered size at which a Writer with an io.Writer flushes.
const flushAt = 64 << 10

// NewWriter returns a Writer writing to w, or to memory if w is nil.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WrittenBits returns the number of bits written so far.
func (w *Writer) WrittenBits() uint64 { return w.written }

// Err returns the first error, or nil.
func (w *Writer) Err() error { return w.err }

// Bytes returns the bytes written to memory so far (complete bytes only;
// call Close first to include the padded last byte). Only meaningful for a
// Writer created with a nil io.Writer.
func (w *Writer) Bytes() []byte { return w.buf }

func (w *Writer) flushBuf() {
	if w.w == nil || len(w.buf) == 0 || w.err != nil {
		return
	}
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = err
	}
	w.buf = w.buf[:0]
}

// WriteBits writes the n ≤ 64 low bits of v, most significant first.
func (w *Writer) WriteBits(v uint64, n uint) uint64 {
	if n == 0 {
		return 0
	}
	if n > 64 {
		w.setErr(ErrRange)
		return 0
	}
	if n < 64 {
		v &= 1<<n - 1
	}
	w.written += uint64(n)
	free := 64 - w.nacc
	if n < free {
		w.acc = w.acc<<n | v
		w.nacc += n
		return uint64(n)
	}
	// Fill the accumulator to 64 bits, emit it, keep the rest.
	rest := n - free
	var full uint64
	if free == 64 {
		full = v
	} else {
		full = w.acc<<free | v>>rest
	}
	w.buf = append(w.buf, byte(full>>56), byte(full>>48), byte(full>>40), byte(full>>32),
		byte(full>>24), byte(full>>16), byte(full>>8), byte(full))
	if rest > 0 {
		w.acc = v & (1<<rest - 1)
	} else {
		w.acc = 0
	}
	w.nacc = rest
	if w.w != nil && len(w.buf) >= flushAt {
		w.flushBuf()
	}
	return uint64(n)
}

func (w *Writer) setErr(err error) {
	if w.err == nil {
		w.err = err
	}
}

// WriteBit writes one bit (the low bit of b).
func (w *Writer) WriteBit(b uint64) uint64 { return w.WriteBits(b&1, 1) }

// WriteUnary writes v zeros followed by a one.
func (w *Writer) WriteUnary(v uint64) uint64 {
	n := v + 1
	for v >= 64 {
		w.WriteBits(0, 64)
		v -= 64
	}
	w.WriteBits(1, uint(v)+1)
	return n
}

// WriteGamma writes the Elias γ code of v (v < 2^64−1).
func (w *Writer) WriteGamma(v uint64) uint64 {
	if v == math.MaxUint64 {
		w.setErr(ErrRange)
		return 0
	}
	m := v + 1
	l := uint(bits.Len64(m) - 1)
	if 2*l+1 <= 64 {
		return w.WriteBits(m, 2*l+1)
	}
	w.WriteUnary(uint64(l))
	w.WriteBits(m, l)
	return uint64(2*l + 1)
}

// WriteDelta writes the Elias δ code of v (v < 2^64−1).
func (w *Writer) WriteDelta(v uint64) uint64 {
	if v == math.MaxUint64 {
		w.setErr(ErrRange)
		return 0
	}
	m := v + 1
	l := uint(bits.Len64(m) - 1)
	n := w.WriteGamma(uint64(l))
	return n + w.WriteBits(m, l)
}

// WriteZeta writes the ζ_k code of v (v < 2^64−1, 1 ≤ k), as dsiutils
// writeZeta: h = ⌊log2(v+1)/k⌋ in unary, then v+1−2^{hk} in minimal binary
// over [0, 2^{(h+1)k}−2^{hk}).
func (w *Writer) WriteZeta(v uint64, k uint) uint64 {
	if v == math.MaxUint64 || k == 0 || k > 64 {
		w.setErr(ErrRange)
		return 0
	}
	m := v + 1
	h := uint(bits.Len64(m)-1) / k
	hk := h * k
	n := w.WriteUnary(uint64(h))
	if hk >= 64 {
		// Unreachable (m < 2^64 implies h·k ≤ 63); guards the shift below.
		w.setErr(ErrRange)
		return n
	}
	left := uint64(1) << hk
	if m-left < left {
		return n + w.writeWide(m-left, hk+k-1)
	}
	return n + w.writeWide(m, hk+k)
}

// writeWide writes v in n bits, n possibly above 64 (leading zeros).
func (w *Writer) writeWide(v uint64, n uint) uint64 {
	var c uint64
	for n > 64 {
		c += w.WriteBits(0, min(n-64, 64))
		n -= min(n-64, 64)
	}
	return c + w.WriteBits(v, n)
}

// WriteNibble writes the variable-length nibble code of v (dsiutils
// writeNibble: 3-bit groups, most significant first, each preceded by a bit
// that is 1 on the last group).
func (w *Writer) WriteNibble(v uint64) uint64 {
	if v == 0 {
		return w.WriteBits(8, 4)
	}
	h := (bits.Len64(v) - 1) / 3
	var n uint64
	for ; h >= 0; h-- {
		stop := uint64(0)
		if h == 0 {
			stop = 8
		}
		n += w.WriteBits(stop|(v>>(3*uint(h)))&7, 4)
	}
	return n
}

// WriteGolomb writes the Golomb code of v with modulus b ≥ 1.
func (w *Writer) WriteGolomb(v, b uint64) uint64 {
	if b == 0 {
		w.setErr(ErrRange)
		return 0
	}
	q := v / b
	r := v - q*b
	n := w.WriteUnary(q)
	if b == 1 {
		return n
	}
	log2b := uint(bits.Len64(b) - 1)
	if log2b >= 63 {
		w.setErr(ErrRange)
		return n
	}
	m := uint64(1)<<(log2b+1) - b
	if r < m {
		return n + w.WriteBits(r, log2b)
	}
	return n + w.WriteBits(r+m, log2b+1)
}

// Close pads the stream with zeros to a byte boundary, flushes it to the
// io.Writer (if any) and returns the first error. It does not close the
// io.Writer. Writing after Close starts a new, unaligned stream.
func (w *Writer) Close() error {
	if w.nacc > 0 {
		nb := (w.nacc + 7) / 8
		v := w.acc << (nb*8 - w.nacc)
		for i := int(nb) - 1; i >= 0; i-- {
			w.buf = append(w.buf, byte(v>>(8*uint(i))))
		}
		w.acc, w.nacc = 0, 0
	}
	w.flushBuf()
	return w.err
}
