package bitio

import (
	"math/rand/v2"
	"testing"
)

// TestWordDecoders checks the word decoders (γ, ζ_k and its ζ_3 forms,
// unary) against the Reader on random streams, word by word, including the
// words they decline.
func TestWordDecoders(t *testing.T) {
	tests := []struct {
		name string
		c    string
		dec  func(w uint64) (uint64, uint)
		maxv uint64
	}{
		{"unary", "unary", UnaryWord, 200},
		{"gamma small", "gamma", GammaWord, 100},
		{"gamma wide", "gamma", GammaWord, 1 << 40},
		{"zeta1", "zeta1", func(w uint64) (uint64, uint) { return ZetaWord(w, 1) }, 1 << 20},
		{"zeta2", "zeta2", func(w uint64) (uint64, uint) { return ZetaWord(w, 2) }, 1 << 30},
		{"zeta3", "zeta3", func(w uint64) (uint64, uint) { return ZetaWord(w, 3) }, 1 << 50},
		{"zeta3 two steps", "zeta3", func(w uint64) (uint64, uint) {
			if v, n := Zeta3Short(w); n != 0 {
				return v, n
			}
			return ZetaWord(w, 3)
		}, 1 << 50},
		{"zeta3 by length", "zeta3", func(w uint64) (uint64, uint) {
			if v, n := Zeta3Fast(w); n != 0 {
				return v, n
			}
			return ZetaWord(w, 3)
		}, 1 << 50},
		{"zeta3 arithmetic", "zeta3", func(w uint64) (uint64, uint) {
			if v, n := Zeta3Word(w); n <= 64 {
				return v, n
			}
			return 0, 0
		}, 1 << 50},
		{"zeta5", "zeta5", func(w uint64) (uint64, uint) { return ZetaWord(w, 5) }, 1 << 40},
		{"zeta9", "zeta9", func(w uint64) (uint64, uint) { return ZetaWord(w, 9) }, 1 << 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := codecByName(t, tt.c)
			rng := rand.New(rand.NewPCG(7, 8))
			w := NewWriter(nil)
			var vals []uint64
			for i := 0; i < 4000; i++ {
				v := rng.Uint64N(tt.maxv) >> rng.UintN(40)
				vals = append(vals, v)
				c.write(w, v)
			}
			w.Close()
			words := PackWords(w.Bytes())
			var pos uint64
			for i, want := range vals {
				v, n := tt.dec(Peek(words, pos))
				if n == 0 {
					if c.len(want) <= 64 {
						t.Fatalf("value %d (%d bits) declined", want, c.len(want))
					}
					pos += c.len(want)
					continue
				}
				if v != want || uint64(n) != c.len(want) {
					t.Fatalf("code %d: got %d (%d bits), want %d (%d bits)", i, v, n, want, c.len(want))
				}
				pos += uint64(n)
			}
		})
	}
}

// TestZeta3Word checks the arithmetic ζ_3 decoder against ZetaWord on
// words of every unary length, including those too long for 64 bits.
func TestZeta3Word(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for h := 0; h <= 64; h++ {
		for i := 0; i < 200; i++ {
			w := uint64(0)
			if h < 64 {
				w = (rng.Uint64() | 1<<63) >> h
			}
			v, n := Zeta3Word(w)
			wv, wn := ZetaWord(w, 3)
			if wn == 0 {
				if n <= 64 {
					t.Fatalf("Zeta3Word(%#x) = %d, %d bits; ZetaWord declines it", w, v, n)
				}
				continue
			}
			if v != wv || n != wn {
				t.Fatalf("Zeta3Word(%#x) = %d, %d bits, want %d, %d", w, v, n, wv, wn)
			}
		}
	}
}

func TestPeekTail(t *testing.T) {
	words := []uint64{0x0123456789abcdef, 0xfedcba9876543210}
	tests := []struct {
		pos  uint64
		want uint64
	}{
		{0, 0x0123456789abcdef},
		{4, 0x123456789abcdeff},
		{64, 0xfedcba9876543210},
		{68, 0xedcba98765432100},
		{128, 0},
		{1 << 62, 0},
	}
	for _, tt := range tests {
		if got := Peek(words, tt.pos); got != tt.want {
			t.Errorf("Peek(%d) = %#x, want %#x", tt.pos, got, tt.want)
		}
	}
	if v, n := GammaWord(0); n != 0 || v != 0 {
		t.Errorf("GammaWord(0) = %d, %d", v, n)
	}
	if v, n := Zeta3Short(1); n != 0 || v != 0 {
		t.Errorf("Zeta3Short(1) = %d, %d", v, n)
	}
	if v, n := ZetaWord(0, 3); n != 0 || v != 0 {
		t.Errorf("ZetaWord(0) = %d, %d", v, n)
	}
	if _, n := ZetaWord(1<<63, 0); n != 0 {
		t.Errorf("ZetaWord(k=0) accepted")
	}
}

// TestZeta3Fast checks Zeta3Fast against the ζ_3 encoder for every value
// below 2^16 and for values of every length up to 40 bits, followed by
// random bits, and that longer words report a length of 0.
func TestZeta3Fast(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(v uint64) {
		cw, n := zetaWord(v, 3)
		w := cw<<(64-n) | r.Uint64()>>n // the word, then noise
		got, gn := Zeta3Fast(w)
		if n > 40 {
			if gn != 0 {
				t.Fatalf("value %d (%d bits): length %d, want 0", v, n, gn)
			}
			return
		}
		if got != v || gn != n {
			t.Fatalf("value %d: got %d in %d bits, want %d bits", v, got, gn, n)
		}
	}
	for v := range uint64(1 << 16) {
		check(v)
	}
	for b := 16; b < 40; b++ {
		lo := uint64(1)<<b - 1
		for _, v := range []uint64{lo, lo + 1, 2*lo - 1, lo + r.Uint64N(lo)} {
			check(v)
		}
	}
	if _, n := Zeta3Fast(0); n != 0 {
		t.Errorf("all zeros: length %d, want 0", n)
	}
	if _, n := Zeta3Fast(1 << 53); n != 0 { // h = 10
		t.Errorf("h = 10: length %d, want 0", n)
	}
}
