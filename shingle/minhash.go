package shingle

import (
	"math"
	"math/bits"
	"slices"
)

// Method selects how a Sketcher computes MinHash signatures.
type Method int

const (
	// OnePermutation is one-permutation hashing (Li, Owen & Zhang 2012):
	// each shingle hash is computed once, its high bits choose one of K
	// bins and each bin keeps its minimum; bins left empty are filled by
	// optimal densification (Shrivastava 2017), which borrows the value
	// of the first non-empty bin reached by a per-bin sequence of
	// universal hashes. Cost: O(1) per shingle plus O(K) per document.
	// The default.
	OnePermutation Method = iota
	// Classic is the textbook MinHash (IIR §19.6, Broder 1997): K
	// independent hash functions h_i(s) = XXH64(seed_i, s) of the
	// shingle's words joined by single spaces, signature[i] = min over
	// shingles. Cost: O(K) hashes per shingle. It is the reference the
	// one-permutation sketch is tested against.
	Classic
)

// String returns "one-permutation" or "classic".
func (m Method) String() string {
	switch m {
	case OnePermutation:
		return "one-permutation"
	case Classic:
		return "classic"
	}
	return "method(?)"
}

// Empty is the value of every entry of the signature of a text without
// words. No shingle hashes to it (a shingle hash equal to Empty is replaced
// by Empty-1).
const Empty = math.MaxUint64

// Signature is a MinHash sketch: K 64-bit values. Two signatures are
// comparable only if made by Sketchers with equal Options.
type Signature []uint64

// Options configures a Sketcher. The zero value means all defaults.
type Options struct {
	// K is the number of values in a signature. Default 128.
	K int
	// W is the number of words per shingle, 1..MaxW. Default 4.
	W int
	// Seed seeds every hash. Default 0. Signatures made with different
	// seeds are not comparable.
	Seed uint64
	// Method is OnePermutation (default) or Classic.
	Method Method
}

// MaxK is the largest signature length.
const MaxK = 1 << 16

func (o *Options) ensureDefaults() {
	if o.K == 0 {
		o.K = 128
	}
	if o.W == 0 {
		o.W = 4
	}
}

func (o *Options) validate() error {
	switch {
	case o.K < 1 || o.K > MaxK:
		return errorf("NewSketcher", ErrInvalidOptions, "K=%d (want 1..%d)", o.K, MaxK)
	case o.W < 1 || o.W > MaxW:
		return errorf("NewSketcher", ErrInvalidOptions, "W=%d (want 1..%d)", o.W, MaxW)
	case o.Method != OnePermutation && o.Method != Classic:
		return errorf("NewSketcher", ErrInvalidOptions, "Method=%d", o.Method)
	}
	return nil
}

// Sketcher computes MinHash signatures and simhashes of texts and sets.
// A Sketcher holds scratch buffers: it is not safe for concurrent use; use
// one per goroutine (they are cheap: O(K) memory).
type Sketcher struct {
	opts   Options
	tok    Tokenizer
	norm   []byte   // split: the words joined by spaces
	starts []int    // indexWords: word offsets in norm
	codes  []uint64 // split: word codes (see Shingles)
	mask   []uint64 // split: bitmap of candidate word bytes
	hashes []uint64 // hashShingles
	filled []uint64 // bitmap of bins filled before densification
	seeds  []uint64 // Classic: one seed per hash function
}

// NewSketcher returns a Sketcher for opts (nil or zero fields mean the
// defaults).
func NewSketcher(opts *Options) (*Sketcher, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.ensureDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := &Sketcher{opts: o, filled: make([]uint64, (o.K+63)/64)}
	if o.Method == Classic {
		s.seeds = make([]uint64, o.K)
		for i := range s.seeds {
			s.seeds[i] = xxh64Word(uint64(i), o.Seed^0x9e3779b97f4a7c15)
		}
	}
	return s, nil
}

// Options returns the Sketcher's options with defaults filled in.
func (s *Sketcher) Options() Options { return s.opts }

// Sketch returns the MinHash signature of text's w-shingles (see
// Shingles). It allocates the K-value result; AppendSketch does not.
func (s *Sketcher) Sketch(text []byte) Signature {
	return s.AppendSketch(make(Signature, 0, s.opts.K), text)
}

// AppendSketch appends the signature of text to dst and returns the
// extended slice. Cost (OnePermutation): one pass over text, one short
// hash per word, O(K) to densify; no allocation if dst has room.
func (s *Sketcher) AppendSketch(dst Signature, text []byte) Signature {
	dst, sig := grow(dst, s.opts.K)
	if s.opts.Method == Classic {
		n := s.split(text)
		s.indexWords()
		for i := range n {
			s.addClassic(sig, s.shingleBytes(i))
		}
		return dst
	}
	addOPH(sig, s.hashShingles(text))
	s.densify(sig)
	return dst
}

// addOPH puts each hash h in bin ⌊h·K/2^64⌋ of sig (its top bits), which
// keeps the minimum. With K a power of two the bin is a shift, and the
// minimum is taken without a branch: a bin's minimum changes
// unpredictably while a sketch fills.
func addOPH(sig Signature, hs []uint64) {
	k := uint64(len(sig))
	if k&(k-1) == 0 {
		shift := 64 - bits.TrailingZeros64(k)
		for _, h := range hs {
			h = min(h, Empty-1)
			bin := h >> shift
			sig[bin] = min(sig[bin], h)
		}
		return
	}
	for _, h := range hs {
		h = min(h, Empty-1)
		bin, _ := bits.Mul64(h, k)
		sig[bin] = min(sig[bin], h)
	}
}

// SketchSet appends to dst the signature of a set of 64-bit items (each
// item x is hashed as XXH64(seed, LE64(x)) first, so any item values work;
// duplicates do not matter). It is the entry point for sets that are not
// texts, and for accuracy tests against exact Jaccard similarity.
func (s *Sketcher) SketchSet(dst Signature, items []uint64) Signature {
	dst, sig := grow(dst, s.opts.K)
	if s.opts.Method == Classic {
		for _, x := range items { // XXH64(seed_i, LE64(x)), as for texts
			for i, seed := range s.seeds {
				if h := min(xxh64Word(x, seed), Empty-1); h < sig[i] {
					sig[i] = h
				}
			}
		}
		return dst
	}
	k := uint64(s.opts.K)
	for _, x := range items {
		h := min(xxh64Word(x, s.opts.Seed), Empty-1)
		bin, _ := bits.Mul64(h, k)
		if h < sig[bin] {
			sig[bin] = h
		}
	}
	s.densify(sig)
	return dst
}

func (s *Sketcher) addClassic(sig Signature, enc []byte) {
	for i, seed := range s.seeds {
		if h := min(xxh64(enc, seed), Empty-1); h < sig[i] {
			sig[i] = h
		}
	}
}

// grow appends k Empty values to dst and returns the extended slice and
// the new part.
func grow(dst Signature, k int) (Signature, Signature) {
	n := len(dst)
	dst = slices.Grow(dst, k)[:n+k]
	sig := dst[n:]
	for i := range sig {
		sig[i] = Empty
	}
	return dst, sig
}

// densify fills the empty bins of a one-permutation sketch by optimal
// densification: empty bin i probes bins j = H(i, a) mod K for attempts
// a = 1, 2, ... with a universal hash H and copies the value of the first
// bin that was non-empty before densification. Two documents with the
// same bins non-empty make the same choices, which keeps the estimator
// unbiased with a variance close to K independent permutations.
func (s *Sketcher) densify(sig Signature) {
	k := len(sig)
	clear(s.filled)
	nFilled := 0
	for i, v := range sig {
		if v != Empty {
			s.filled[i>>6] |= 1 << (i & 63)
			nFilled++
		}
	}
	if nFilled == 0 || nFilled == k {
		return
	}
	seed := s.opts.Seed ^ 0x6a09e667f3bcc908
	maxAttempts := uint64(64 * k)
	for i := range sig {
		if s.filled[i>>6]&(1<<(i&63)) != 0 {
			continue
		}
		j := -1
		for a := uint64(1); a <= maxAttempts; a++ {
			c, _ := bits.Mul64(xxh64Word(uint64(i)<<32|a, seed), uint64(k))
			if s.filled[c>>6]&(1<<(c&63)) != 0 {
				j = int(c)
				break
			}
		}
		if j < 0 { // astronomically unlikely; stay deterministic anyway
			for j = (i + 1) % k; s.filled[j>>6]&(1<<(j&63)) == 0; j = (j + 1) % k {
			}
		}
		sig[i] = sig[j]
	}
}

// Jaccard estimates the Jaccard similarity of the sets two signatures
// were made from: the fraction of positions where they agree. It returns 0
// if their lengths differ or are 0. Cost: O(K).
func Jaccard(a, b Signature) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	eq := 0
	for i := range a {
		if a[i] == b[i] {
			eq++
		}
	}
	return float64(eq) / float64(len(a))
}
