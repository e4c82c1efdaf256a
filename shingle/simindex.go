package shingle

import (
	"slices"
	"sync"
)

// SimhashIndex answers "which stored simhashes are within Hamming
// distance k of this one?" with the permuted-table scheme of Manku, Jain &
// Das Sarma (2007): the 64 bits are cut into B blocks; if two fingerprints
// differ in at most k bits, at least B−k blocks agree exactly, so for each
// of the C(B, k) choices of B−k blocks there is one table keyed by those
// blocks (the top bits of the fingerprint permuted to bring them first).
// A query probes every table with its own key and checks the Hamming
// distance of the few fingerprints found. Where the paper keeps each
// table sorted and searches the key prefix, this index keeps a hash map
// per table on the same prefix, so inserts and removes are O(1).
//
// SimhashIndex is safe for concurrent use. Memory: C(B, k)·(16 bytes +
// map overhead) per item. Insert, Remove, Query: O(C(B, k)) plus the
// matches examined.
type SimhashIndex struct {
	k      int
	masks  []uint64 // per table: the bits of its B−k blocks
	mu     sync.RWMutex
	tables []map[uint64][]simEntry
	fps    map[uint64]uint64 // id → fingerprint
}

type simEntry struct{ id, fp uint64 }

// MaxSimhashTables bounds C(B, k), the number of tables.
const MaxSimhashTables = 512

// NewSimhashIndex returns an empty index for queries at Hamming distance
// ≤ k (0 ≤ k < 64) with the 64 bits cut into blocks blocks (k < blocks ≤
// 64; 0 means k+1, the fewest tables: k+1 tables keyed by 64/(k+1) bits
// each). More blocks mean more tables but longer keys, so fewer false
// candidates per probe.
func NewSimhashIndex(k, blocks int) (*SimhashIndex, error) {
	if blocks == 0 {
		blocks = k + 1
	}
	if k < 0 || k >= 64 || blocks <= k || blocks > 64 {
		return nil, errorf("NewSimhashIndex", ErrInvalidOptions, "k=%d blocks=%d", k, blocks)
	}
	if binom(blocks, k) > MaxSimhashTables {
		return nil, errorf("NewSimhashIndex", ErrInvalidOptions, "C(%d,%d) tables > %d", blocks, k, MaxSimhashTables)
	}
	// Block i covers bits [lo[i], lo[i+1]).
	lo := make([]int, blocks+1)
	for i := range lo {
		lo[i] = i * 64 / blocks
	}
	blockMask := func(i int) uint64 {
		w := lo[i+1] - lo[i]
		return (uint64(1)<<w - 1) << lo[i]
	}
	x := &SimhashIndex{k: k, fps: make(map[uint64]uint64)}
	// Enumerate the subsets of blocks-k blocks that make the keys.
	var rec func(start, left int, mask uint64)
	rec = func(start, left int, mask uint64) {
		if left == 0 {
			x.masks = append(x.masks, mask)
			return
		}
		for i := start; i <= blocks-left; i++ {
			rec(i+1, left-1, mask|blockMask(i))
		}
	}
	rec(0, blocks-k, 0)
	x.tables = make([]map[uint64][]simEntry, len(x.masks))
	for i := range x.tables {
		x.tables[i] = make(map[uint64][]simEntry)
	}
	return x, nil
}

// binom returns C(n, k) for 0 ≤ k ≤ n ≤ 64, saturated at 2³⁰+1. The
// products are taken in 64 bits: with a 32-bit int, C(40, 10) overflowed
// to a small count and NewSimhashIndex went on to build 847 million
// tables.
func binom(n, k int) int {
	r := int64(1)
	for i := 1; i <= k; i++ {
		r = r * int64(n-k+i) / int64(i)
		if r > 1<<30 {
			return 1<<30 + 1
		}
	}
	return int(r)
}

// Tables returns the number of tables, C(blocks, k).
func (x *SimhashIndex) Tables() int { return len(x.tables) }

// Len returns the number of items.
func (x *SimhashIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.fps)
}

// Insert adds fingerprint fp as item id; ErrDuplicateID if id is present.
func (x *SimhashIndex) Insert(id, fp uint64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.fps[id]; ok {
		return errorf("Insert", ErrDuplicateID, "%d", id)
	}
	x.fps[id] = fp
	for i, m := range x.masks {
		x.tables[i][fp&m] = append(x.tables[i][fp&m], simEntry{id, fp})
	}
	return nil
}

// Remove deletes item id and reports whether it was present.
func (x *SimhashIndex) Remove(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	fp, ok := x.fps[id]
	if !ok {
		return false
	}
	delete(x.fps, id)
	for i, m := range x.masks {
		es := x.tables[i][fp&m]
		if j := slices.Index(es, simEntry{id, fp}); j >= 0 {
			es[j] = es[len(es)-1]
			es = es[:len(es)-1]
		}
		if len(es) == 0 {
			delete(x.tables[i], fp&m)
		} else {
			x.tables[i][fp&m] = es
		}
	}
	return true
}

// Query appends to dst the ids of all items within Hamming distance k of
// fp, each once, in increasing order.
func (x *SimhashIndex) Query(dst []uint64, fp uint64) []uint64 {
	n := len(dst)
	x.mu.RLock()
	for i, m := range x.masks {
		for _, e := range x.tables[i][fp&m] {
			if Hamming(e.fp, fp) <= x.k {
				dst = append(dst, e.id)
			}
		}
	}
	x.mu.RUnlock()
	slices.Sort(dst[n:])
	return append(dst[:n], slices.Compact(dst[n:])...)
}
