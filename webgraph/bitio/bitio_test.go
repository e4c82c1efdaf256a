package bitio

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// bitsOf renders the first n bits of p as a string of '0'/'1'.
func bitsOf(p []byte, n uint64) string {
	var sb strings.Builder
	for i := uint64(0); i < n; i++ {
		if p[i/8]>>(7-i%8)&1 == 1 {
			sb.WriteByte('1')
		} else {
			sb.WriteByte('0')
		}
	}
	return sb.String()
}

// fromBits packs a '0'/'1' string MSB-first.
func fromBits(s string) []byte {
	p := make([]byte, (len(s)+7)/8)
	for i, c := range s {
		if c == '1' {
			p[i/8] |= 1 << (7 - i%8)
		}
	}
	return p
}

type codec struct {
	name  string
	write func(w *Writer, v uint64) uint64
	read  func(r *Reader) uint64
	len   func(v uint64) uint64
}

var codecs = []codec{
	{"unary", (*Writer).WriteUnary, (*Reader).ReadUnary, UnaryLen},
	{"gamma", (*Writer).WriteGamma, (*Reader).ReadGamma, GammaLen},
	{"delta", (*Writer).WriteDelta, (*Reader).ReadDelta, DeltaLen},
	{"zeta1", func(w *Writer, v uint64) uint64 { return w.WriteZeta(v, 1) }, func(r *Reader) uint64 { return r.ReadZeta(1) }, func(v uint64) uint64 { return ZetaLen(v, 1) }},
	{"zeta2", func(w *Writer, v uint64) uint64 { return w.WriteZeta(v, 2) }, func(r *Reader) uint64 { return r.ReadZeta(2) }, func(v uint64) uint64 { return ZetaLen(v, 2) }},
	{"zeta3", func(w *Writer, v uint64) uint64 { return w.WriteZeta(v, 3) }, func(r *Reader) uint64 { return r.ReadZeta(3) }, func(v uint64) uint64 { return ZetaLen(v, 3) }},
	{"zeta5", func(w *Writer, v uint64) uint64 { return w.WriteZeta(v, 5) }, func(r *Reader) uint64 { return r.ReadZeta(5) }, func(v uint64) uint64 { return ZetaLen(v, 5) }},
	{"zeta9", func(w *Writer, v uint64) uint64 { return w.WriteZeta(v, 9) }, func(r *Reader) uint64 { return r.ReadZeta(9) }, func(v uint64) uint64 { return ZetaLen(v, 9) }},
	{"nibble", (*Writer).WriteNibble, (*Reader).ReadNibble, NibbleLen},
	{"golomb3", func(w *Writer, v uint64) uint64 { return w.WriteGolomb(v, 3) }, func(r *Reader) uint64 { return r.ReadGolomb(3) }, func(v uint64) uint64 { return GolombLen(v, 3) }},
}

func codecByName(t *testing.T, name string) codec {
	for _, c := range codecs {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no codec %q", name)
	return codec{}
}

// TestKnownCodeWords checks code words against the definitions (Elias 1975;
// Boldi–Vigna, "Codes for the World-Wide Web"; dsiutils writeNibble/writeGolomb).
func TestKnownCodeWords(t *testing.T) {
	tests := []struct {
		code string
		v    uint64
		want string
	}{
		{"unary", 0, "1"},
		{"unary", 3, "0001"},
		{"unary", 70, strings.Repeat("0", 70) + "1"},
		{"gamma", 0, "1"},
		{"gamma", 1, "010"},
		{"gamma", 2, "011"},
		{"gamma", 3, "00100"},
		{"gamma", 4, "00101"},
		{"gamma", 7, "0001000"},
		{"gamma", 62, "00000111111"},
		{"gamma", 63, "0000001000000"},
		{"delta", 0, "1"},
		{"delta", 1, "0100"},
		{"delta", 2, "0101"},
		{"delta", 3, "01100"},
		{"delta", 4, "01101"},
		{"delta", 7, "00100000"},
		{"zeta1", 4, "00101"}, // ζ_1 is γ
		{"zeta2", 0, "10"},
		{"zeta2", 1, "110"},
		{"zeta2", 2, "111"},
		{"zeta2", 3, "01000"},
		{"zeta2", 14, "011111"}, // m=15: h=1, left=4, 11 ≥ 4 → m in 4 bits
		{"zeta3", 0, "100"},
		{"zeta3", 1, "1010"}, // 7 values in h=0: threshold 1, so only m=1 takes 2 bits
		{"zeta3", 2, "1011"},
		{"zeta3", 3, "1100"},
		{"zeta3", 6, "1111"},
		{"zeta3", 7, "0100000"},
		{"zeta3", 62, "01111111"}, // m=63: h=1, 63−8=55 ≥ 8 → m in 6 bits
		{"nibble", 0, "1000"},
		{"nibble", 5, "1101"},
		{"nibble", 8, "00011000"},
		{"nibble", 511, "011101111111"},
		{"golomb3", 0, "10"},
		{"golomb3", 1, "110"},
		{"golomb3", 2, "111"},
		{"golomb3", 3, "010"},
	}
	for _, tt := range tests {
		c := codecByName(t, tt.code)
		t.Run(tt.code, func(t *testing.T) {
			w := NewWriter(nil)
			n := c.write(w, tt.v)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := bitsOf(w.Bytes(), n); got != tt.want {
				t.Errorf("%s(%d) = %s, want %s", tt.code, tt.v, got, tt.want)
			}
			if l := c.len(tt.v); l != uint64(len(tt.want)) {
				t.Errorf("%s len(%d) = %d, want %d", tt.code, tt.v, l, len(tt.want))
			}
			r := NewReader(fromBits(tt.want))
			r.SetLimit(uint64(len(tt.want)))
			if got := c.read(r); got != tt.v || r.Err() != nil || r.Position() != uint64(len(tt.want)) {
				t.Errorf("read %s(%s) = %d at %d (err %v), want %d", tt.code, tt.want, got, r.Position(), r.Err(), tt.v)
			}
		})
	}
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			vals := make([]uint64, 5000)
			for i := range vals {
				switch i % 4 {
				case 0:
					vals[i] = rng.Uint64N(16)
				case 1:
					vals[i] = rng.Uint64N(1 << 12)
				case 2:
					vals[i] = rng.Uint64N(1 << 30)
				default:
					vals[i] = rng.Uint64() >> rng.UintN(64)
				}
				if c.name == "unary" || c.name == "golomb3" {
					vals[i] %= 300
				}
				if vals[i] == math.MaxUint64 {
					vals[i]--
				}
			}
			w := NewWriter(nil)
			var total uint64
			for _, v := range vals {
				n := c.write(w, v)
				if n != c.len(v) {
					t.Fatalf("write %d: %d bits, len says %d", v, n, c.len(v))
				}
				total += n
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.WrittenBits() != total {
				t.Fatalf("WrittenBits = %d, want %d", w.WrittenBits(), total)
			}
			r := NewReader(w.Bytes())
			for i, v := range vals {
				if got := c.read(r); got != v {
					t.Fatalf("value %d: got %d want %d (err %v)", i, got, v, r.Err())
				}
			}
			if r.Err() != nil || r.Position() != total {
				t.Fatalf("end at %d, want %d, err %v", r.Position(), total, r.Err())
			}
		})
	}
}

func TestBitsAcrossWords(t *testing.T) {
	w := NewWriter(nil)
	widths := []uint{1, 63, 64, 7, 33, 64, 2, 0, 5}
	vals := []uint64{1, 1<<62 | 5, math.MaxUint64, 0x55, 1<<32 | 9, 0x0123456789abcdef, 3, 0, 17}
	for i := range widths {
		w.WriteBits(vals[i], widths[i])
	}
	w.Close()
	r := NewReader(w.Bytes())
	for i := range widths {
		want := vals[i]
		if widths[i] < 64 {
			want &= 1<<widths[i] - 1
		}
		if got := r.ReadBits(widths[i]); got != want {
			t.Fatalf("field %d: got %#x want %#x", i, got, want)
		}
	}
}

// TestWriteBit writes single bits across a word boundary, only the low
// bit of each argument, and reads them back with ReadBit.
func TestWriteBit(t *testing.T) {
	w := NewWriter(nil)
	var want strings.Builder
	for i := range uint64(70) {
		b := i*0x9e3779b97f4a7c15>>61 | 0xf0 // the high bits must be ignored
		if n := w.WriteBit(b); n != 1 {
			t.Fatalf("WriteBit returned %d bits, want 1", n)
		}
		want.WriteByte('0' + byte(b&1))
	}
	w.Close()
	if got := bitsOf(w.Bytes(), 70); got != want.String() {
		t.Fatalf("bits\n got %s\nwant %s", got, want.String())
	}
	r := NewReader(w.Bytes())
	for i := range 70 {
		if got := r.ReadBit(); got != uint64(want.String()[i]-'0') {
			t.Fatalf("bit %d: ReadBit = %d", i, got)
		}
	}
	if w.WrittenBits() != 70 || r.Err() != nil {
		t.Fatalf("written %d bits, read error %v", w.WrittenBits(), r.Err())
	}
}

func TestOverrunIsSticky(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			// All zeros: every code needs a one bit somewhere.
			r := NewReader(make([]byte, 3))
			for i := 0; i < 10; i++ {
				c.read(r)
			}
			if !errors.Is(r.Err(), ErrOverrun) {
				t.Fatalf("err = %v, want ErrOverrun", r.Err())
			}
			var e *Error
			if !errors.As(r.Err(), &e) || e.Op == "" {
				t.Fatalf("err %v is not an *Error", r.Err())
			}
			if got := c.read(r); got != 0 {
				t.Fatalf("read after error = %d, want 0", got)
			}
		})
	}
}

func TestOverflow(t *testing.T) {
	// γ with 64 leading zeros cannot be represented.
	p := fromBits(strings.Repeat("0", 64) + "1" + strings.Repeat("1", 64))
	r := NewReader(p)
	r.ReadGamma()
	if !errors.Is(r.Err(), ErrOverflow) {
		t.Fatalf("gamma: err = %v, want ErrOverflow", r.Err())
	}
	r = NewReader(fromBits(strings.Repeat("0001", 30)))
	r.ReadNibble()
	if !errors.Is(r.Err(), ErrOverflow) {
		t.Fatalf("nibble: err = %v, want ErrOverflow", r.Err())
	}
	w := NewWriter(nil)
	w.WriteGamma(math.MaxUint64)
	if !errors.Is(w.Err(), ErrRange) {
		t.Fatalf("writer: err = %v, want ErrRange", w.Err())
	}
}

func TestLimit(t *testing.T) {
	r := NewReader([]byte{0xff})
	r.SetLimit(3)
	for i := 0; i < 3; i++ {
		if r.ReadGamma() != 0 {
			t.Fatal("γ(0) expected")
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	r.ReadGamma()
	if !errors.Is(r.Err(), ErrOverrun) {
		t.Fatalf("err = %v, want ErrOverrun", r.Err())
	}
	r.SetPosition(0)
	if r.Err() != nil || r.ReadBit() != 1 {
		t.Fatal("SetPosition must clear the error")
	}
}

// FuzzReader feeds arbitrary bytes to every decoder: reads must terminate,
// never panic, and a value decoded without error must re-encode to the same
// bits.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0x80}, byte(0))
	f.Add([]byte{0x00, 0x00, 0x01, 0xff}, byte(1))
	f.Add([]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x11}, byte(5))
	f.Add(make([]byte, 20), byte(8))
	f.Fuzz(func(t *testing.T, data []byte, sel byte) {
		c := codecs[int(sel)%len(codecs)]
		r := NewReader(data)
		for i := 0; i < 64 && r.Err() == nil; i++ {
			start := r.Position()
			v := c.read(r)
			if r.Err() != nil {
				break
			}
			if v == math.MaxUint64 || c.name == "nibble" {
				continue // nibble words may carry leading zero groups
			}
			if n := r.Position() - start; n != c.len(v) {
				t.Fatalf("%s: consumed %d bits for %d, code length is %d", c.name, n, v, c.len(v))
			}
		}
	})
}
