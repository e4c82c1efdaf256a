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
// The hashes are stable across processes, machines and versions; the
// byte encoding is defined as:
//
//	word hash    t = XXH64(seed, UTF-8 bytes of the lowercase word)
//	shingle hash h = XXH64(seed, LE64(t1) || LE64(t2) || ... || LE64(tw))
//
// where XXH64 is the 64-bit xxHash with the given seed (as computed by
// github.com/cespare/xxhash/v2's NewWithSeed) and LE64 is the 8-byte
// little-endian encoding.
//
// The zero value is ready to use after Reset. A Shingles is not safe for
// concurrent use and does not allocate after warm-up. Cost: two short
// XXH64 computations per word.
type Shingles struct {
	tok     Tokenizer
	w       int
	seed    uint64
	n       int // words in win
	emitted bool
	h       uint64
	win     [MaxW]uint64
}

// Reset starts iterating over the w-shingles of text hashed with seed. w is
// clamped to [1, MaxW].
func (s *Shingles) Reset(text []byte, w int, seed uint64) {
	s.tok.Reset(text)
	s.w = min(max(w, 1), MaxW)
	s.seed, s.n, s.emitted, s.h = seed, 0, false, 0
}

// Next advances to the next shingle and reports whether there is one.
func (s *Shingles) Next() bool {
	for s.tok.Next() {
		t := xxh64(s.tok.Token(), s.seed)
		if s.n < s.w {
			s.win[s.n] = t
			s.n++
			if s.n < s.w {
				continue
			}
		} else {
			copy(s.win[:s.w-1], s.win[1:s.w])
			s.win[s.w-1] = t
		}
		s.h = xxh64Words(s.win[:s.w], s.seed)
		s.emitted = true
		return true
	}
	if !s.emitted && s.n > 0 {
		s.emitted = true
		s.h = xxh64Words(s.win[:s.n], s.seed)
		return true
	}
	return false
}

// Hash returns the current shingle's hash.
func (s *Shingles) Hash() uint64 { return s.h }

// words returns the word hashes of the current shingle (its encoding).
func (s *Shingles) words() []uint64 { return s.win[:min(s.n, s.w)] }

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
