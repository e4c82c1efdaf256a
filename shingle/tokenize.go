package shingle

import (
	"encoding/binary"
	"iter"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Byte classes of the ASCII fast path.
const (
	sep   = 0 // separator: space, punctuation, control
	lower = 1 // part of a word, already lowercase (a-z, 0-9)
	upper = 2 // part of a word, lowercased by adding 32 (A-Z)
	multi = 3 // start or continuation of a multi-byte UTF-8 sequence
)

var byteClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = lower
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = lower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = upper
	}
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = multi
	}
	return t
}()

const (
	ones = 0x0101010101010101
	lo7  = 0x7f7f7f7f7f7f7f7f
	hi   = 0x8080808080808080
)

// classify returns the high bit of every byte of x (little-endian) that
// is a lowercase letter or digit (low) and of every uppercase letter (up).
// It is Bit Twiddling Hacks' hasbetween (m < b < n is
// (127+n − b&0x7f) & (b&0x7f + 127−m) & ^b & 0x80), exact per byte, with
// bytes ≥ 0x80 in neither set; written out so that it inlines.
func classify(x uint64) (low, up uint64) {
	const (
		zHi = ones * (127 + 'z' + 1)
		aLo = ones * (127 - ('a' - 1))
		nHi = ones * (127 + '9' + 1)
		nLo = ones * (127 - ('0' - 1))
		ZHi = ones * (127 + 'Z' + 1)
		ALo = ones * (127 - ('A' - 1))
	)
	x7 := x & lo7
	ascii := ^x & hi
	low = ((zHi-x7)&(x7+aLo) | (nHi-x7)&(x7+nLo)) & ascii
	up = (ZHi - x7) & (x7 + ALo) & ascii
	return low, up
}

// isWordRune reports whether a non-ASCII rune belongs to a word: letters,
// numbers and combining marks (so "é" spelled e + U+0301 stays one word).
// Invalid UTF-8 (decoded as utf8.RuneError) separates words.
func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r))
}

// Tokenizer splits UTF-8 text into lowercase words. A word is a maximal run
// of letters, numbers and combining marks (Unicode categories L, N, M);
// everything else (spaces, punctuation, symbols, control characters and
// invalid UTF-8) separates words and is dropped. Lowercasing is Unicode's
// simple case mapping (unicode.ToLower), without normalisation: "é" as one
// code point and as e + U+0301 are different words.
//
// The zero value is ready to use after Reset. A Tokenizer is not safe for
// concurrent use. It does not allocate per token: Token returns either a
// sub-slice of the input (words already in lowercase ASCII) or a buffer
// reused across tokens. Cost: O(1) per byte, with a table lookup per ASCII
// byte and a Unicode table lookup per non-ASCII rune.
type Tokenizer struct {
	src []byte
	pos int
	buf []byte
	tok []byte
}

// Reset makes t tokenize src from its beginning. t keeps a reference to
// src until the next Reset.
func (t *Tokenizer) Reset(src []byte) {
	t.src, t.pos, t.tok = src, 0, nil
}

// Next advances to the next word and reports whether there is one.
//
// ASCII is classified eight bytes at a time (SWAR), so that a short word
// or a run of separators costs one predictable branch instead of a
// mispredicted one at its end.
func (t *Tokenizer) Next() bool {
	src, i := t.src, t.pos
	// Skip separators. A byte found by the eight-byte scan is known to be
	// an ASCII letter or digit, or the start of a multi-byte rune, without
	// reading it again.
skip:
	for i+8 <= len(src) {
		x := binary.LittleEndian.Uint64(src[i:])
		low, up := classify(x)
		notSep := low | up | x&hi
		if notSep == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(notSep) >> 3
		if notSep&-notSep&x&hi == 0 {
			goto word
		}
		goto multiByte
	}
	for i < len(src) && byteClass[src[i]] == sep {
		i++
	}
	if i >= len(src) {
		t.pos, t.tok = i, nil
		return false
	}
	if byteClass[src[i]] != multi {
		goto word
	}
multiByte:
	if r, n := utf8.DecodeRune(src[i:]); !isWordRune(r) {
		i += n
		goto skip
	}
word:
	// Fast path: a run of lowercase ASCII is returned without copying.
	start, j := i, i
	for j+8 <= len(src) {
		x := binary.LittleEndian.Uint64(src[j:])
		low, up := classify(x)
		nw := ^low & hi
		if nw == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(nw) >> 3
		if nw&-nw&(up|x&hi) == 0 { // ended by an ASCII separator
			t.pos, t.tok = j, src[start:j]
			return true
		}
		goto slow
	}
	for j < len(src) && byteClass[src[j]] == lower {
		j++
	}
	if j == len(src) || byteClass[src[j]] == sep {
		t.pos, t.tok = j, src[start:j]
		return true
	}
slow:
	// Slow path: the word needs case mapping or holds non-ASCII runes.
	buf := append(t.buf[:0], src[start:j]...)
	i = j
loop:
	for i < len(src) {
		if i+8 <= len(src) { // ASCII letters and digits, lowercased eight at a time
			x := binary.LittleEndian.Uint64(src[i:])
			low, up := classify(x)
			k := 8
			if nw := ^(low | up) & hi; nw != 0 {
				k = bits.TrailingZeros64(nw) >> 3
			}
			if k > 0 {
				n := len(buf)
				buf = slices.Grow(buf, 8)[:n+8]
				binary.LittleEndian.PutUint64(buf[n:], x|up>>2) // 'A'|0x20 == 'a'
				buf = buf[:n+k]
				i += k
				if k == 8 {
					continue
				}
			}
		}
		c := src[i]
		switch byteClass[c] {
		case sep:
			break loop
		case lower:
			buf = append(buf, c)
			i++
		case upper:
			buf = append(buf, c+('a'-'A'))
			i++
		default:
			r, n := utf8.DecodeRune(src[i:])
			if !isWordRune(r) {
				break loop
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			i += n
		}
	}
	t.buf, t.tok, t.pos = buf, buf, i
	return true
}

// Token returns the current word, lowercase UTF-8. It is valid until the
// next call to Next or Reset and must not be modified.
func (t *Tokenizer) Token() []byte { return t.tok }

// Words returns an iterator over the lowercase words of text. Each yielded
// slice is valid only until the next iteration (see Tokenizer.Token).
func Words(text []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		var t Tokenizer
		t.Reset(text)
		for t.Next() {
			if !yield(t.Token()) {
				return
			}
		}
	}
}
