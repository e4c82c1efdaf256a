package shingle

import (
	"math"
	"slices"
	"sync"
)

// LSHOptions configures an LSH index. The zero value means all defaults.
type LSHOptions struct {
	// K is the length of the signatures the index takes. Default 128.
	K int
	// Threshold is the Jaccard similarity the banding is tuned for, in
	// (0, 1). Default 0.8.
	Threshold float64
	// Bands and Rows override the tuned banding when both are set;
	// Bands*Rows must not exceed K. Default: OptimalBanding(Threshold, K,
	// FPWeight, FNWeight).
	Bands, Rows int
	// FPWeight and FNWeight weigh false positives against false negatives
	// when tuning. Default 0.5 each.
	FPWeight, FNWeight float64
	// Seed seeds the band-key hash. Default 0.
	Seed uint64
}

// OptimalBanding returns the number of bands b and rows per band r, with
// b*r ≤ k, that minimise
//
//	fpWeight·∫₀ᵗ P(s) ds + fnWeight·∫ₜ¹ (1 − P(s)) ds,  P(s) = 1 − (1 − sʳ)ᵇ,
//
// the weighted probability mass of false positives (pairs below threshold
// t that share a band) and false negatives (pairs above t that share
// none), as datasketch's _optimal_param does. The integrals are computed
// with composite Simpson's rule on 128 intervals. Cost: about 0.2 ms for
// k = 128.
func OptimalBanding(t float64, k int, fpWeight, fnWeight float64) (bands, rows int) {
	// Simpson weights and abscissae on [0, t] (false positives) and
	// [t, 1] (false negatives); (1 − sʳ)ᵇ is built up by multiplication
	// as b grows, so the search costs O(k log k · n) multiplications.
	const n = 128 // intervals; the integrands are smooth polynomials
	var xs, ws [2][n + 1]float64
	for side, ab := range [2][2]float64{{0, t}, {t, 1}} {
		h := (ab[1] - ab[0]) / n
		for i := range n + 1 {
			xs[side][i] = ab[0] + float64(i)*h
			w := 2.0
			if i == 0 || i == n {
				w = 1
			} else if i%2 == 1 {
				w = 4
			}
			ws[side][i] = w * h / 3
		}
	}
	best := math.Inf(1)
	var base, q [2][n + 1]float64 // 1 − sʳ and (1 − sʳ)ᵇ
	for r := 1; r <= k; r++ {
		for side := range 2 {
			for i, x := range xs[side] {
				base[side][i] = 1 - math.Pow(x, float64(r))
				q[side][i] = 1
			}
		}
		for b := 1; b <= k/r; b++ {
			var fp, fn float64
			for i := range n + 1 {
				q[0][i] *= base[0][i]
				q[1][i] *= base[1][i]
				fp += ws[0][i] * (1 - q[0][i]) // P(s) = 1 − (1 − sʳ)ᵇ
				fn += ws[1][i] * q[1][i]       // 1 − P(s)
			}
			if e := fpWeight*fp + fnWeight*fn; e < best {
				best, bands, rows = e, b, r
			}
		}
	}
	return bands, rows
}

// CandidateProbability returns 1 − (1 − sʳ)ᵇ, the probability that two
// signatures of Jaccard similarity s share at least one of b bands of r
// rows.
func CandidateProbability(s float64, bands, rows int) float64 {
	return 1 - math.Pow(1-math.Pow(s, float64(rows)), float64(bands))
}

// LSH is a banded locality-sensitive hashing index over MinHash
// signatures (IIR §19.6; Leskovec, Rajaraman & Ullman ch. 3): each
// signature is cut into b bands of r values, each band hashed to a 64-bit
// key (XXH64 of the band's values, seeded by the band number), and two
// signatures are candidates if they share a key in some band.
//
// LSH is safe for concurrent use. Memory: about b·(16 + 8) bytes per item
// plus map overhead. Insert, Remove: O(b + r·b). Query: O(b·r) plus the
// number of candidates.
type LSH struct {
	opts        LSHOptions
	bands, rows int

	mu sync.RWMutex
	// Most band keys belong to one item: a key's first id is kept in
	// first, the rest (if any) in more, so that an Insert allocates no
	// slice per band.
	first []map[uint64]uint64   // band → key → the key's first id
	more  []map[uint64][]uint64 // band → key → the key's other ids
	keys  map[uint64][]uint64   // id → band keys
}

// NewLSH returns an empty index (nil opts means all defaults).
func NewLSH(opts *LSHOptions) (*LSH, error) {
	var o LSHOptions
	if opts != nil {
		o = *opts
	}
	if o.K == 0 {
		o.K = 128
	}
	if o.Threshold == 0 {
		o.Threshold = 0.8
	}
	if o.FPWeight == 0 && o.FNWeight == 0 {
		o.FPWeight, o.FNWeight = 0.5, 0.5
	}
	switch {
	case o.K < 1 || o.K > MaxK:
		return nil, errorf("NewLSH", ErrInvalidOptions, "K=%d", o.K)
	case !(o.Threshold > 0 && o.Threshold < 1):
		return nil, errorf("NewLSH", ErrInvalidOptions, "Threshold=%v", o.Threshold)
	case o.FPWeight < 0 || o.FNWeight < 0:
		return nil, errorf("NewLSH", ErrInvalidOptions, "weights %v, %v", o.FPWeight, o.FNWeight)
	case (o.Bands != 0) != (o.Rows != 0) || o.Bands < 0 || o.Rows < 0 || o.Bands*o.Rows > o.K:
		return nil, errorf("NewLSH", ErrInvalidOptions, "Bands=%d Rows=%d K=%d", o.Bands, o.Rows, o.K)
	}
	b, r := o.Bands, o.Rows
	if b == 0 {
		b, r = OptimalBanding(o.Threshold, o.K, o.FPWeight, o.FNWeight)
	}
	l := &LSH{opts: o, bands: b, rows: r, first: make([]map[uint64]uint64, b), more: make([]map[uint64][]uint64, b),
		keys: make(map[uint64][]uint64)}
	for i := range l.first {
		l.first[i] = make(map[uint64]uint64)
		l.more[i] = make(map[uint64][]uint64)
	}
	return l, nil
}

// Banding returns the number of bands and rows per band in use.
func (l *LSH) Banding() (bands, rows int) { return l.bands, l.rows }

// Len returns the number of items in the index.
func (l *LSH) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.keys)
}

func (l *LSH) bandKeys(dst []uint64, sig Signature) []uint64 {
	for i := range l.bands {
		dst = append(dst, xxh64Words(sig[i*l.rows:(i+1)*l.rows], l.opts.Seed+uint64(i)))
	}
	return dst
}

func (l *LSH) check(op string, sig Signature) error {
	if len(sig) != l.opts.K {
		return errorf(op, ErrMismatch, "len %d, index K %d", len(sig), l.opts.K)
	}
	return nil
}

// Insert adds the signature of item id. It fails with ErrDuplicateID if
// id is present, ErrMismatch if len(sig) is not K.
func (l *LSH) Insert(id uint64, sig Signature) error {
	if err := l.check("Insert", sig); err != nil {
		return err
	}
	keys := l.bandKeys(make([]uint64, 0, l.bands), sig)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.keys[id]; ok {
		return errorf("Insert", ErrDuplicateID, "%d", id)
	}
	l.keys[id] = keys
	for i, k := range keys {
		if _, taken := l.first[i][k]; !taken {
			l.first[i][k] = id
		} else {
			l.more[i][k] = append(l.more[i][k], id)
		}
	}
	return nil
}

// Remove deletes item id and reports whether it was present.
func (l *LSH) Remove(id uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys, ok := l.keys[id]
	if !ok {
		return false
	}
	delete(l.keys, id)
	for i, k := range keys {
		ids := l.more[i][k]
		if l.first[i][k] == id {
			if len(ids) == 0 {
				delete(l.first[i], k)
				continue
			}
			l.first[i][k] = ids[len(ids)-1] // the last other id moves up
		} else if j := slices.Index(ids, id); j >= 0 {
			ids[j] = ids[len(ids)-1]
		} else {
			continue
		}
		if ids = ids[:len(ids)-1]; len(ids) == 0 {
			delete(l.more[i], k)
		} else {
			l.more[i][k] = ids
		}
	}
	return true
}

// Query appends to dst the ids of the candidates for sig (items sharing
// at least one band with it), each once, in increasing order, and returns
// the extended slice. The candidates are not verified: confirm them with
// Jaccard (or use NearIndex).
func (l *LSH) Query(dst []uint64, sig Signature) ([]uint64, error) {
	if err := l.check("Query", sig); err != nil {
		return dst, err
	}
	var kbuf [64]uint64
	keys := l.bandKeys(kbuf[:0], sig)
	n := len(dst)
	l.mu.RLock()
	for i, k := range keys {
		if id, ok := l.first[i][k]; ok {
			dst = append(dst, id)
			dst = append(dst, l.more[i][k]...)
		}
	}
	l.mu.RUnlock()
	slices.Sort(dst[n:])
	return append(dst[:n], slices.Compact(dst[n:])...), nil
}
