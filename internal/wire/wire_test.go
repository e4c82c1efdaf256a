package wire_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/crawlkit/crawlkit/internal/wire"
)

func TestDecoder(t *testing.T) {
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	tests := []struct {
		name string
		in   []byte
		read func(d *wire.Decoder) any
		want any
		ok   bool // Done after the read
	}{
		{"byte", []byte{7}, func(d *wire.Decoder) any { return d.Byte() }, byte(7), true},
		{"byte of nothing", nil, func(d *wire.Decoder) any { return d.Byte() }, byte(0), false},
		{"uvarint", uv(300), func(d *wire.Decoder) any { return d.Uvarint() }, uint64(300), true},
		{"uvarint truncated", uv(300)[:1], func(d *wire.Decoder) any { return d.Uvarint() }, uint64(0), false},
		{"uvarint overflow", bytes.Repeat([]byte{0xff}, 11), func(d *wire.Decoder) any { return d.Uvarint() }, uint64(0), false},
		{"varint", binary.AppendVarint(nil, -5), func(d *wire.Decoder) any { return d.Varint() }, int64(-5), true},
		{"trailing bytes", []byte{1, 2}, func(d *wire.Decoder) any { return d.Byte() }, byte(1), false},
		{"count", cat(uv(2), []byte{1, 2, 3, 4}), func(d *wire.Decoder) any { n := d.Count(2); d.B = nil; return n }, 2, true},
		{"count beyond the input", cat(uv(3), []byte{1, 2, 3, 4, 5}), func(d *wire.Decoder) any { return d.Count(2) }, 0, false},
		{"count of min 0", cat(uv(1), []byte{9}), func(d *wire.Decoder) any { n := d.Count(0); d.Byte(); return n }, 1, true},
		{"huge count", uv(math.MaxUint64), func(d *wire.Decoder) any { return d.Count(1) }, 0, false},
		{"bytes", cat(uv(3), []byte("abc")), func(d *wire.Decoder) any { return string(d.Bytes(3)) }, "abc", true},
		{"bytes over max", cat(uv(3), []byte("abc")), func(d *wire.Decoder) any { return string(d.Bytes(2)) }, "", false},
		{"bytes truncated", cat(uv(4), []byte("abc")), func(d *wire.Decoder) any { return string(d.Bytes(9)) }, "", false},
		{"empty bytes", uv(0), func(d *wire.Decoder) any { return len(d.Bytes(0)) }, 0, true},
		{"uint64", binary.LittleEndian.AppendUint64(nil, 1<<60+1), func(d *wire.Decoder) any { return d.Uint64() }, uint64(1<<60 + 1), true},
		{"uint64 truncated", make([]byte, 7), func(d *wire.Decoder) any { return d.Uint64() }, uint64(0), false},
		{"failure sticks", cat(uv(5), []byte("ab")), func(d *wire.Decoder) any { d.Bytes(9); return d.Byte() }, byte(0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := wire.Decoder{B: tt.in}
			if got := tt.read(&d); got != tt.want {
				t.Errorf("read = %v (%T), want %v (%T)", got, got, tt.want, tt.want)
			}
			if d.Done() != tt.ok {
				t.Errorf("Done() = %v, want %v (Bad %v, %d bytes left)", d.Done(), tt.ok, d.Bad, len(d.B))
			}
		})
	}
}

// FuzzDecoder reads arbitrary input as a list of byte strings: no input
// panics, and a count or length that the input cannot hold fails.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte{2, 1, 'a', 2, 'b', 'c'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := wire.Decoder{B: b}
		n := d.Count(1)
		if n > len(b) {
			t.Fatalf("count %d from %d bytes", n, len(b))
		}
		got := 0
		for range n {
			s := d.Bytes(uint64(len(b)))
			got += len(s)
			d.Varint()
		}
		if got > len(b) {
			t.Fatalf("read %d bytes from %d", got, len(b))
		}
		if d.Bad && len(d.B) != 0 {
			t.Fatal("a failed decoder has input left")
		}
		_ = d.Uint64()
	})
}

func BenchmarkDecoder(b *testing.B) {
	var rec []byte
	for i := range 16 {
		rec = binary.AppendUvarint(rec, uint64(i)<<20)
		rec = binary.AppendVarint(rec, -int64(i))
		rec = binary.AppendUvarint(rec, 8)
		rec = append(rec, "abcdefgh"...)
	}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		d := wire.Decoder{B: rec}
		for !d.Bad && len(d.B) > 0 {
			d.Uvarint()
			d.Varint()
			d.Bytes(64)
		}
		if !d.Done() {
			b.Fatal("bad record")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*48), "ns/field")
}
