package shingle

// split tokenizes text into s.norm (the words joined by single spaces,
// which is the byte encoding of every shingle: see Shingles) and s.starts
// (the offset of each word, plus a sentinel one past the end), and
// returns the number of shingles. Separating tokenization from hashing
// keeps the hash loop free of the tokenizer's unpredictable branches, so
// consecutive shingle hashes overlap in the pipeline.
func (s *Sketcher) split(text []byte) int {
	norm, starts := s.norm[:0], s.starts[:0]
	s.tok.Reset(text)
	for s.tok.Next() {
		if len(norm) > 0 {
			norm = append(norm, ' ')
		}
		starts = append(starts, len(norm))
		norm = append(norm, s.tok.Token()...)
	}
	words := len(starts)
	starts = append(starts, len(norm)+1)
	s.norm, s.starts = norm, starts
	switch {
	case words == 0:
		return 0
	case words < s.opts.W:
		return 1
	}
	return words - s.opts.W + 1
}

// shingleBytes returns the encoding of shingle i after split.
func (s *Sketcher) shingleBytes(i int) []byte {
	w := min(s.opts.W, len(s.starts)-1)
	return s.norm[s.starts[i] : s.starts[i+w]-1]
}

// hashShingles fills s.hashes with the shingle hashes of text (the same
// values, in the same order, as Shingles yields).
func (s *Sketcher) hashShingles(text []byte) []uint64 {
	n := s.split(text)
	hs := s.hashes[:0]
	seed := s.opts.Seed
	for i := range n {
		hs = append(hs, xxh64(s.shingleBytes(i), seed))
	}
	s.hashes = hs
	return hs
}

// Normalized returns the text last sketched (by Sketch, AppendSketch,
// Simhash or AppendSketchSimhash) as the Tokenizer sees it: its words,
// lowercased, joined by single spaces, the bytes shingles are cut from.
// Callers use it to fingerprint the normalised text without tokenizing
// twice. It is valid until the next call on s and must not be modified.
func (s *Sketcher) Normalized() []byte { return s.norm }
