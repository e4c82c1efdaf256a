package shingle

import (
	"cmp"
	"slices"
	"sync"
)

// NearOptions configures a NearIndex. The zero value means all defaults.
type NearOptions struct {
	// LSH configures the candidate index (K, threshold, banding).
	LSH LSHOptions
	// MinJaccard is the estimated Jaccard similarity a candidate must
	// reach to match. Default: LSH.Threshold (0.8 by default). Negative
	// disables the check.
	MinJaccard float64
	// MaxHamming, if positive, also requires the simhashes to differ in at
	// most MaxHamming bits: Henzinger's (2006) combined filter, MinHash
	// candidates confirmed by simhash, which she found more precise than
	// either alone. Default 0: no simhash check.
	MaxHamming int
}

// Near is a match returned by NearIndex.Query.
type Near struct {
	ID      uint64
	Jaccard float64 // estimated from the signatures
	Hamming int     // between the simhashes
}

// NearIndex finds near-duplicates: LSH candidates confirmed by estimated
// Jaccard similarity and, optionally, by simhash distance. It keeps a copy
// of every signature (8·K bytes per item) on top of the LSH's memory.
// NearIndex is safe for concurrent use. Query costs one LSH query plus
// O(K) per candidate.
type NearIndex struct {
	lsh        *LSH
	minJaccard float64
	maxHamming int

	mu    sync.RWMutex
	items map[uint64]nearItem
}

type nearItem struct {
	sig     Signature
	simhash uint64
}

// NewNearIndex returns an empty index (nil opts means all defaults).
func NewNearIndex(opts *NearOptions) (*NearIndex, error) {
	var o NearOptions
	if opts != nil {
		o = *opts
	}
	lsh, err := NewLSH(&o.LSH)
	if err != nil {
		return nil, err
	}
	if o.MinJaccard == 0 {
		o.MinJaccard = lsh.opts.Threshold
	}
	if o.MinJaccard > 1 || o.MaxHamming < 0 || o.MaxHamming > 64 {
		return nil, errorf("NewNearIndex", ErrInvalidOptions, "MinJaccard=%v MaxHamming=%d", o.MinJaccard, o.MaxHamming)
	}
	return &NearIndex{lsh: lsh, minJaccard: o.MinJaccard, maxHamming: o.MaxHamming, items: make(map[uint64]nearItem)}, nil
}

// LSH returns the candidate index, for its Banding.
func (x *NearIndex) LSH() *LSH { return x.lsh }

// Len returns the number of items.
func (x *NearIndex) Len() int { return x.lsh.Len() }

// Insert adds item id with its signature and simhash (pass 0 if
// MaxHamming is 0). The signature is copied.
func (x *NearIndex) Insert(id uint64, sig Signature, simhash uint64) error {
	if err := x.lsh.Insert(id, sig); err != nil {
		return err
	}
	x.mu.Lock()
	x.items[id] = nearItem{slices.Clone(sig), simhash}
	x.mu.Unlock()
	return nil
}

// Item returns the signature (shared: do not modify it) and simhash of
// item id, and whether it is present.
func (x *NearIndex) Item(id uint64) (Signature, uint64, bool) {
	x.mu.RLock()
	it, ok := x.items[id]
	x.mu.RUnlock()
	return it.sig, it.simhash, ok
}

// Remove deletes item id and reports whether it was present.
func (x *NearIndex) Remove(id uint64) bool {
	if !x.lsh.Remove(id) {
		return false
	}
	x.mu.Lock()
	delete(x.items, id)
	x.mu.Unlock()
	return true
}

// Query returns the confirmed near-duplicates of (sig, simhash), most
// similar first (ties by increasing ID).
func (x *NearIndex) Query(sig Signature, simhash uint64) ([]Near, error) {
	var buf [16]uint64
	cands, err := x.lsh.Query(buf[:0], sig)
	if err != nil {
		return nil, err
	}
	var out []Near
	x.mu.RLock()
	for _, id := range cands {
		it, ok := x.items[id]
		if !ok { // inserted into the LSH, not yet here, or being removed
			continue
		}
		n := Near{ID: id, Jaccard: Jaccard(sig, it.sig), Hamming: Hamming(simhash, it.simhash)}
		if n.Jaccard < x.minJaccard || (x.maxHamming > 0 && n.Hamming > x.maxHamming) {
			continue
		}
		out = append(out, n)
	}
	x.mu.RUnlock()
	slices.SortFunc(out, func(a, b Near) int {
		if c := cmp.Compare(b.Jaccard, a.Jaccard); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}
