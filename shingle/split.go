package shingle

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// wordCode returns a word's 64-bit code (see Shingles): its UTF-8 bytes as
// a little-endian integer if it is shorter than 8 bytes (the top byte is
// then 0), else XXH64(seed, word) with the top bit set.
func wordCode(word []byte, seed uint64) uint64 {
	if len(word) >= 8 {
		return xxh64(word, seed) | 1<<63
	}
	var b [8]byte
	copy(b[:], word)
	return binary.LittleEndian.Uint64(b[:])
}

// shingleHash returns XXH64(seed, LE64(codes[0]) || ... ), the hash of a
// shingle whose words have the given codes.
func shingleHash(codes []uint64, seed uint64) uint64 {
	if len(codes) == 4 {
		return xxh64Words4(codes[0], codes[1], codes[2], codes[3], seed)
	}
	return xxh64Words(codes, seed)
}

// wordMask returns a bit per byte of b[:64], bit j set if b[j] may belong
// to a word: an ASCII letter or digit, or a byte ≥ 0x80 (part of a
// multi-byte rune, which the slow path classifies exactly).
//
// It is classify's range test (see there) made cheaper by folding case
// first: x|0x20 is a lowercase letter exactly when x is a letter.
func wordMask(b []byte) uint64 {
	const (
		zHi = ones * (127 + 'z' + 1)
		aLo = ones * (127 - ('a' - 1))
		nHi = ones * (127 + '9' + 1)
		nLo = ones * (127 - ('0' - 1))
	)
	_ = b[63]
	var m uint64
	for k := 0; k < 64; k += 8 {
		x := binary.LittleEndian.Uint64(b[k:])
		x7 := x & lo7
		y := x7 | ones*0x20
		w := ((zHi-y)&(y+aLo) | (nHi-x7)&(x7+nLo) | x) & hi
		// Gather the eight high bits into one byte, bit i for byte i.
		m |= ((w >> 7) * 0x0102040810204080 >> 56) << k
	}
	return m
}

// split tokenizes text into s.norm (the words joined by single spaces)
// and s.codes (each word's code, see Shingles), and returns the number of
// shingles. It finds the same words as Tokenizer, faster: a first pass
// marks the bytes that may belong to a word in a bitmap, 64 bytes per
// bitmap word; the second pass walks the word starts with
// TrailingZeros. An ASCII word shorter than 16 bytes, the common case,
// is lowercased, coded and copied to norm with two 8-byte loads and
// stores; a longer word or one with non-ASCII bytes goes through the
// Tokenizer. Separating tokenization from hashing keeps the hash loop
// free of branches, so consecutive shingle hashes overlap in the
// pipeline.
func (s *Sketcher) split(text []byte) int {
	n := len(text)
	// Bitmap of candidate word bytes, with a zero word past the end so
	// that every word's end is found inside the bitmap.
	nb := n/64 + 1
	mask := slices.Grow(s.mask[:0], nb+1)[:nb+1]
	for b := range n / 64 {
		mask[b] = wordMask(text[64*b : 64*b+64])
	}
	mask[nb-1], mask[nb] = 0, 0
	for j := 64 * (nb - 1); j < n; j++ {
		if byteClass[text[j]] != sep {
			mask[nb-1] |= 1 << (j & 63)
		}
	}
	s.mask = mask

	norm := slices.Grow(s.norm[:0], n+16)
	codes := slices.Grow(s.codes[:0], n/2+1) // a word and a separator take ≥ 2 bytes
	seed := s.opts.Seed
	var prev uint64 // bit 63 of the previous bitmap word: a word runs on
	for b := range nb {
		m := mask[b]
		st := m &^ (m<<1 | prev>>63) // word starts in this bitmap word
		prev = m
		for st != 0 {
			j := bits.TrailingZeros64(st)
			st &= st - 1
			start := 64*b + j
			// The word ends at the first zero bit at or after j.
			var end int
			if r := ^m >> j; r != 0 {
				end = start + bits.TrailingZeros64(r)
			} else {
				c := b + 1
				for mask[c] == ^uint64(0) {
					c++
				}
				end = 64*c + bits.TrailingZeros64(^mask[c])
			}
			// An ASCII word shorter than 16 bytes is read as two
			// little-endian words x0, x1 and lowercased in place: ASCII
			// letters and digits all have bit 0x20 set once lowercased.
			if l := end - start; l < 16 {
				var x0, x1 uint64
				if start+16 <= n {
					x0 = binary.LittleEndian.Uint64(text[start:])
					x1 = binary.LittleEndian.Uint64(text[start+8:])
				} else {
					var t [16]byte
					copy(t[:], text[start:])
					x0 = binary.LittleEndian.Uint64(t[:])
					x1 = binary.LittleEndian.Uint64(t[8:])
				}
				l1 := 8 * max(l-8, 0)      // bits of the word in x1
				m0 := uint64(1)<<(8*l) - 1 // all ones if l ≥ 8
				m1 := uint64(1)<<l1 - 1    // 0 if l ≤ 8
				if (x0&m0|x1&m1)&hi == 0 {
					x0 = (x0 | ones*0x20) & m0
					x1 = (x1 | ones*0x20) & m1
					code := x0
					if l >= 8 {
						code = xxh64Upto16(x0, x1, l, seed) | 1<<63
					}
					if cap(norm)-len(norm) < 16 {
						norm = slices.Grow(norm, 64)
					}
					k := len(norm)
					codes = append(codes, code)
					w := norm[k : k+16]
					binary.LittleEndian.PutUint64(w, x0|' '<<(8*l))
					binary.LittleEndian.PutUint64(w[8:], x1|' '<<l1)
					norm = norm[:k+l+1]
					continue
				}
			}
			s.tok.Reset(text[start:end])
			for s.tok.Next() {
				tok := s.tok.Token()
				codes = append(codes, wordCode(tok, seed))
				norm = append(append(norm, tok...), ' ')
			}
		}
	}
	if len(norm) > 0 {
		norm = norm[:len(norm)-1] // the last word's trailing space
	}
	words := len(codes)
	s.norm, s.codes = norm, codes
	switch {
	case words == 0:
		return 0
	case words < s.opts.W:
		return 1
	}
	return words - s.opts.W + 1
}

// indexWords fills s.starts, after split, with the offset of each word
// in s.norm and a sentinel one past its end, for shingleBytes. Only the
// classic method needs the shingles' bytes.
func (s *Sketcher) indexWords() {
	starts := s.starts[:0]
	if len(s.norm) > 0 {
		starts = append(starts, 0)
		for i, c := range s.norm {
			if c == ' ' {
				starts = append(starts, i+1)
			}
		}
	}
	s.starts = append(starts, len(s.norm)+1)
}

// shingleBytes returns the words of shingle i after split and
// indexWords, joined by spaces (the classic method hashes these bytes).
func (s *Sketcher) shingleBytes(i int) []byte {
	w := min(s.opts.W, len(s.starts)-1)
	return s.norm[s.starts[i] : s.starts[i+w]-1]
}

// hashShingles fills s.hashes with the shingle hashes of text (the same
// values, in the same order, as Shingles yields).
func (s *Sketcher) hashShingles(text []byte) []uint64 {
	n := s.split(text)
	hs := slices.Grow(s.hashes[:0], n)[:n]
	seed, codes := s.opts.Seed, s.codes
	if w := s.opts.W; w == 4 && len(codes) >= 4 {
		// Each word's code·prime2 is computed once and slides through
		// the four lanes.
		p0, p1, p2 := codes[0]*prime2, codes[1]*prime2, codes[2]*prime2
		codes = codes[3 : n+3]
		hs = hs[:len(codes)]
		for i, c := range codes {
			p3 := c * prime2
			hs[i] = xxh64Words4Premul(p0, p1, p2, p3, seed)
			p0, p1, p2 = p1, p2, p3
		}
	} else {
		w = min(w, len(codes))
		for i := range hs {
			hs[i] = xxh64Words(codes[i:i+w], seed)
		}
	}
	s.hashes = hs
	return hs
}

// Normalized returns the text last sketched (by Sketch, AppendSketch,
// Simhash or AppendSketchSimhash) as the Tokenizer sees it: its words,
// lowercased, joined by single spaces. Callers use it to fingerprint the
// normalised text without tokenizing twice. It is valid until the next
// call on s and must not be modified.
func (s *Sketcher) Normalized() []byte { return s.norm }
