package wire

import "encoding/binary"

// Decoder reads a record. The zero value reads nothing; set B to the
// record.
type Decoder struct {
	B   []byte // what is left to read
	Bad bool   // set by the first read the input could not satisfy
}

// Done reports whether the record was read to its end without a failure.
func (d *Decoder) Done() bool { return !d.Bad && len(d.B) == 0 }

func (d *Decoder) fail() { d.Bad, d.B = true, nil }

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if len(d.B) == 0 {
		d.fail()
		return 0
	}
	c := d.B[0]
	d.B = d.B[1:]
	return c
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Varint reads a signed (zig-zag) varint.
func (d *Decoder) Varint() int64 {
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Count reads the count of a list whose items take at least min bytes
// each (min < 1 counts as 1): a count the rest of the input cannot hold
// is a failure, so a caller may allocate the list's room at once.
func (d *Decoder) Count(min int) int {
	n := d.Uvarint()
	min = max(min, 1)
	if n > uint64(len(d.B)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

// Bytes reads a length-prefixed byte string of at most max bytes. The
// result aliases the record; copy it to keep it past the record's life.
func (d *Decoder) Bytes(max uint64) []byte {
	return d.Fixed(d.Uvarint(), max)
}

// Fixed reads n bytes, at most max. The result aliases the record.
func (d *Decoder) Fixed(n, max uint64) []byte {
	if d.Bad || n > max || n > uint64(len(d.B)) {
		d.fail()
		return nil
	}
	v := d.B[:n:n]
	d.B = d.B[n:]
	return v
}

// Uint64 reads a little-endian 64-bit word.
func (d *Decoder) Uint64() uint64 {
	b := d.Fixed(8, 8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}
