package index

import (
	"encoding/binary"
	"errors"
	"math"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
)

// enc appends the primitive encodings shared by the file format and the
// wire protocol: unsigned varints, length-prefixed strings, and posting
// lists as (count, id gaps, frequencies) varints.
type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) float(f float64)  { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f)) }
func (e *enc) byte1(c byte)     { e.b = append(e.b, c) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) postings(docs *roaring.Bitmap, n int, freq func(int) uint32) {
	e.uvarint(uint64(n))
	prev := uint32(0)
	it := docs.Iterator()
	for first := true; it.HasNext(); first = false {
		d := it.Next()
		if first {
			e.uvarint(uint64(d))
		} else {
			e.uvarint(uint64(d - prev))
		}
		prev = d
	}
	for i := range n {
		e.uvarint(uint64(freq(i)))
	}
}

// errShort is the cause of every decoding failure on truncated input.
var errShort = errors.New("truncated")

// dec reads what enc writes. The first failure sticks: later reads return
// zero values, so decoders check err once at the end of a section.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *dec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length that announces at least minSize bytes per element,
// so a hostile length cannot make the decoder allocate more than the input.
func (d *dec) count(minSize int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(len(d.b)/minSize) {
		d.fail(errShort)
		return 0
	}
	return int(n)
}

func (d *dec) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) byte1() byte {
	if len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *dec) float() float64 {
	if len(d.b) < 8 {
		d.fail(errShort)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return math.Float64frombits(v)
}

// postings decodes a posting list whose ids must be < limit and whose
// frequencies must be ≥ 1. lens, when non-nil, gives document lengths for
// the list's pruning bounds.
func (d *dec) postings(limit uint64, lens func(uint32) uint32) *postingList {
	n := d.count(2)
	if d.err != nil {
		return nil
	}
	if n == 0 {
		d.fail(errors.New("empty posting list"))
		return nil
	}
	ids := make([]uint32, n)
	var prev uint64
	for i := range ids {
		g := d.uvarint()
		if i > 0 && g == 0 {
			d.fail(errors.New("posting ids not increasing"))
		}
		if g >= limit {
			d.fail(errors.New("posting id out of range"))
			return nil
		}
		prev += g
		if d.err != nil || prev >= limit {
			d.fail(errors.New("posting id out of range"))
			return nil
		}
		ids[i] = uint32(prev)
	}
	pl := &postingList{docs: roaring.New(), freqs: make([]uint8, 0, n)}
	for i := range n {
		f := d.uvarint()
		if d.err != nil {
			return nil
		}
		if f == 0 || f > math.MaxUint32 {
			d.fail(errors.New("bad term frequency"))
			return nil
		}
		pl.appendFreq(uint32(f))
		dl := uint32(0)
		if lens != nil {
			dl = lens(ids[i])
		}
		pl.note(uint32(f), dl)
	}
	pl.docs.AddMany(ids)
	pl.docs.RunOptimize()
	return pl
}

func validString(s string) bool { return utf8.ValidString(s) }
