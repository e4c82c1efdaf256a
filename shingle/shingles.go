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
// The hashes are stable across processes, machines and versions. A
// shingle's hash is defined from its words' codes: a word's code is
//
//	its UTF-8 bytes read as a little-endian integer, if it has fewer than 8 bytes,
//	XXH64(seed, word) | 1<<63, otherwise
//
// (a short word's code has a zero top byte, so the two kinds never
// collide), and the shingle hash is
//
//	XXH64(seed, LE64(code(w1)) || LE64(code(w2)) || ... || LE64(code(ww)))
//
// the 64-bit xxHash, with the given seed (as computed by
// github.com/cespare/xxhash/v2's NewWithSeed), of the codes' 8-byte
// little-endian encodings, words being the Tokenizer's lowercase words.
// In Python:
//
//	def code(w):
//	    b = w.encode()
//	    return int.from_bytes(b, "little") if len(b) < 8 else xxh64(b, seed).intdigest() | 1 << 63
//	xxh64(b"".join(code(w).to_bytes(8, "little") for w in words), seed).intdigest()
//
// Coding each word once lets a sketch hash every shingle from w 64-bit
// values without building or re-reading the shingle's text.
//
// The zero value is ready to use after Reset. A Shingles is not safe for
// concurrent use and does not allocate after warm-up. Cost: one XXH64 of
// 8·w bytes per word, plus one of the word for words of 8 bytes or more.
type Shingles struct {
	tok     Tokenizer
	w       int
	seed    uint64
	n       int // words in the window
	emitted bool
	h       uint64
	codes   [MaxW]uint64 // the window's word codes, oldest first
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
		if s.n == s.w { // drop the oldest word
			copy(s.codes[:s.w-1], s.codes[1:s.w])
			s.n--
		}
		s.codes[s.n] = wordCode(s.tok.Token(), s.seed)
		s.n++
		if s.n < s.w {
			continue
		}
		s.h = shingleHash(s.codes[:s.n], s.seed)
		s.emitted = true
		return true
	}
	if !s.emitted && s.n > 0 {
		s.emitted = true
		s.h = shingleHash(s.codes[:s.n], s.seed)
		return true
	}
	return false
}

// Hash returns the current shingle's hash.
func (s *Shingles) Hash() uint64 { return s.h }

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
