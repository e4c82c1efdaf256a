package shingle

import "iter"

// MaxW is the largest number of words per shingle.
const MaxW = 16

// Shingles iterates over the hashes of the word w-shingles of a text: every
// run of w consecutive words (Tokenizer), in order, duplicates included. A
// text with fewer than w words (but at least one) yields a single shingle
// of all its words, so short texts still have a sketch; an empty text
// yields none.
//
// The hashes are stable across processes, machines and versions; a
// shingle's hash is defined as
//
//	XXH64(seed, w1 0x20 w2 0x20 ... 0x20 ww)
//
// the 64-bit xxHash, with the given seed (as computed by
// github.com/cespare/xxhash/v2's NewWithSeed), of the shingle's
// lowercase words in UTF-8 joined by single spaces. (In Python:
// xxhash.xxh64(" ".join(words).encode(), seed).intdigest().)
//
// The zero value is ready to use after Reset. A Shingles is not safe for
// concurrent use and does not allocate after warm-up. Cost: one XXH64 of
// about w·6 bytes per word.
type Shingles struct {
	tok     Tokenizer
	w       int
	seed    uint64
	n       int // words in the window
	emitted bool
	h       uint64
	// buf[starts[0]:] is the window: the last n words joined by spaces.
	// Words are appended and the window start advanced; the window is
	// moved back to the front only when buf is full, so dropping a word
	// costs no copy.
	buf    []byte
	starts [MaxW]int
}

// Reset starts iterating over the w-shingles of text hashed with seed. w is
// clamped to [1, MaxW].
func (s *Shingles) Reset(text []byte, w int, seed uint64) {
	s.tok.Reset(text)
	s.w = min(max(w, 1), MaxW)
	s.seed, s.n, s.emitted, s.h = seed, 0, false, 0
	s.buf = s.buf[:0]
	if cap(s.buf) == 0 {
		s.buf = make([]byte, 0, 4096)
	}
}

// Next advances to the next shingle and reports whether there is one.
func (s *Shingles) Next() bool {
	for s.tok.Next() {
		tok := s.tok.Token()
		if s.n == s.w { // drop the oldest word
			copy(s.starts[:s.w-1], s.starts[1:s.w])
			s.n--
		}
		if len(s.buf)+len(tok)+1 > cap(s.buf) && s.n > 0 {
			s.compact()
		}
		if s.n > 0 {
			s.buf = append(s.buf, ' ')
		}
		s.starts[s.n] = len(s.buf)
		s.buf = append(s.buf, tok...)
		s.n++
		if s.n < s.w {
			continue
		}
		s.h = xxh64(s.window(), s.seed)
		s.emitted = true
		return true
	}
	if !s.emitted && s.n > 0 {
		s.emitted = true
		s.h = xxh64(s.window(), s.seed)
		return true
	}
	return false
}

// compact moves the window to the front of buf.
func (s *Shingles) compact() {
	off := s.starts[0]
	s.buf = s.buf[:copy(s.buf, s.buf[off:])]
	for i := range s.n {
		s.starts[i] -= off
	}
}

// Hash returns the current shingle's hash.
func (s *Shingles) Hash() uint64 { return s.h }

// window returns the current shingle's bytes (its encoding).
func (s *Shingles) window() []byte {
	if s.n == 0 {
		return nil
	}
	return s.buf[s.starts[0]:]
}

// ShingleHashes returns an iterator over the w-shingle hashes of text (see
// Shingles).
func ShingleHashes(text []byte, w int, seed uint64) iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		var s Shingles
		s.Reset(text, w, seed)
		for s.Next() {
			if !yield(s.Hash()) {
				return
			}
		}
	}
}
