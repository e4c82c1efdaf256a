package dedup

import (
	"context"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// URLSeen is the "URL seen?" test of the crawl loop (IIR §20.2.1, the
// Duplicate URL Eliminator): a set of 64-bit URL fingerprints with an
// atomic test-and-add. Implementations are safe for concurrent use: when
// several goroutines add the same fingerprint, exactly one is told it was
// not seen before.
//
// Implementations: Set (in memory, the default), MapSet (a plain map,
// the reference), pebbleseen.Set (on disk, survives restarts).
type URLSeen interface {
	// TestAndAdd reports whether fp was in the set, adding it if not.
	TestAndAdd(ctx context.Context, fp uint64) (seen bool, err error)
	// TestAndAddBatch is TestAndAdd for every fingerprint of fps in
	// order, appending the answers to dst; a fingerprint repeated within
	// fps is seen from its second occurrence on. It lets remote
	// implementations answer many URLs per round trip (§20.2.1: "it is
	// possible to batch lookup requests"). On error, dst's new entries are
	// not meaningful.
	TestAndAddBatch(ctx context.Context, dst []bool, fps []uint64) ([]bool, error)
}

// Fingerprint returns the 64-bit fingerprint of a canonical URL (as
// produced by urlnorm.Canonical): XXH64 with seed 0 of its bytes. Two
// spellings of the same URL have the same fingerprint only if they were
// canonicalised first. Cost: about 1 ns per byte; no allocation.
func Fingerprint(canonical string) uint64 { return xxhash.Sum64String(canonical) }

// A Set is the default in-memory URLSeen: a purpose-built open-addressing
// hash set of fingerprints (linear probing, no per-entry overhead) split
// into 64 shards, each behind its own mutex, so concurrent callers rarely
// contend. A shard grows by half when three quarters full, so the
// tables use 8 / load ≤ 16 bytes per fingerprint (10.7 to 16; about 12 on
// average) once the set is past a few thousand fingerprints (each shard
// starts at 16 slots, and the shard headers take 4 KiB). TestAndAdd costs O(1) expected: one mutex and a probe of a
// few slots in one or two cache lines.
//
// The zero value is an empty set ready to use. A Set is safe for
// concurrent use and must not be copied after first use.
type Set struct {
	shards [numShards]shard
}

const (
	shardBits = 6
	numShards = 1 << shardBits
	minSlots  = 16
)

type shard struct {
	mu      sync.Mutex
	slots   []uint64 // 0 marks an empty slot; fingerprint 0 is hasZero
	n       int      // fingerprints in slots
	hasZero bool
	sink    uint64  // keeps the batch prefetch loads alive
	_       [8]byte // pad to 64 bytes: neighbouring shards on separate cache lines
}

// NewSet returns a Set sized for about n fingerprints (it still grows past
// n as needed).
func NewSet(n int) *Set {
	s := new(Set)
	per := n/numShards*4/3 + 1
	for i := range s.shards {
		s.shards[i].slots = make([]uint64, max(per, minSlots))
	}
	return s
}

var _ URLSeen = (*Set)(nil)

// mix scrambles fingerprints, which may be structured (sequential test
// values), into well-spread slot positions. It is a bijection.
func mix(fp uint64) uint64 {
	h := fp * 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// TestAndAdd reports whether fp was in the set, adding it if not. ctx is
// only checked for cancellation.
func (s *Set) TestAndAdd(ctx context.Context, fp uint64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, &Error{Op: "TestAndAdd", Err: err}
	}
	return s.testAndAdd(fp), nil
}

// TestAndAddBatch implements URLSeen. Large batches are grouped by shard:
// one lock per shard touched, and the slots of a group are read before it
// is processed so their cache misses overlap. Cost: O(len(fps)); no
// allocation once warm (scratch buffers are pooled).
func (s *Set) TestAndAddBatch(ctx context.Context, dst []bool, fps []uint64) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return dst, &Error{Op: "TestAndAddBatch", Err: err}
	}
	n := len(dst)
	dst = slices.Grow(dst, len(fps))[:n+len(fps)]
	out := dst[n:]
	if len(fps) < 4*numShards {
		for i, fp := range fps {
			out[i] = s.testAndAdd(fp)
		}
		return dst, nil
	}
	sc := batchScratch.Get().(*scratch)
	defer batchScratch.Put(sc)
	hs := slices.Grow(sc.hs[:0], len(fps))[:len(fps)]
	order := slices.Grow(sc.order[:0], len(fps))[:len(fps)]
	sc.hs, sc.order = hs, order
	// Counting sort of the positions by shard, stable so that repeats of
	// a fingerprint (always in one shard) keep their order.
	var start [numShards + 1]int
	for i, fp := range fps {
		h := mix(fp)
		hs[i] = h
		start[h>>(64-shardBits)+1]++
	}
	for i := 1; i <= numShards; i++ {
		start[i] += start[i-1]
	}
	next := start
	for i, h := range hs {
		sh := h >> (64 - shardBits)
		order[next[sh]] = int32(i)
		next[sh]++
	}
	for shi := range numShards {
		group := order[start[shi]:start[shi+1]]
		if len(group) == 0 {
			continue
		}
		sh := &s.shards[shi]
		sh.mu.Lock()
		if slots := sh.slots; len(slots) > 0 {
			var sink uint64
			for _, i := range group {
				j, _ := bits.Mul64(hs[i]<<shardBits, uint64(len(slots)))
				sink += slots[j]
			}
			sh.sink = sink
		}
		for _, i := range group {
			out[i] = sh.testAndAdd(fps[i], hs[i]<<shardBits)
		}
		sh.mu.Unlock()
	}
	return dst, nil
}

type scratch struct {
	hs    []uint64
	order []int32
}

var batchScratch = sync.Pool{New: func() any { return new(scratch) }}

func (s *Set) testAndAdd(fp uint64) bool {
	h := mix(fp)
	sh := &s.shards[h>>(64-shardBits)]
	sh.mu.Lock()
	seen := sh.testAndAdd(fp, h<<shardBits)
	sh.mu.Unlock()
	return seen
}

// Contains reports whether fp is in the set, without adding it: O(1)
// expected, one shard lock.
func (s *Set) Contains(fp uint64) bool {
	h := mix(fp)
	sh := &s.shards[h>>(64-shardBits)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if fp == 0 {
		return sh.hasZero
	}
	slots := sh.slots
	if len(slots) == 0 {
		return false
	}
	i, _ := bits.Mul64(h<<shardBits, uint64(len(slots)))
	for {
		switch slots[i] {
		case fp:
			return true
		case 0:
			return false
		}
		if i++; i == uint64(len(slots)) {
			i = 0
		}
	}
}

// Add adds fp to the set and reports whether it was there already:
// TestAndAdd without a context.
func (s *Set) Add(fp uint64) bool { return s.testAndAdd(fp) }

// testAndAdd works on a locked shard; pos holds the hash bits that choose
// the slot (those not used for the shard).
func (sh *shard) testAndAdd(fp, pos uint64) bool {
	if fp == 0 {
		seen := sh.hasZero
		sh.hasZero = true
		return seen
	}
	if (sh.n+1)*4 > len(sh.slots)*3 {
		sh.grow()
	}
	slots := sh.slots
	i, _ := bits.Mul64(pos, uint64(len(slots)))
	for {
		switch slots[i] {
		case fp:
			return true
		case 0:
			slots[i] = fp
			sh.n++
			return false
		}
		if i++; i == uint64(len(slots)) {
			i = 0
		}
	}
}

// grow rehashes the shard into a table half as large again (at least
// minSlots), which keeps the load factor between 1/2 and 3/4.
func (sh *shard) grow() {
	old := sh.slots
	slots := make([]uint64, max(len(old)+len(old)/2, minSlots))
	for _, fp := range old {
		if fp == 0 {
			continue
		}
		i, _ := bits.Mul64(mix(fp)<<shardBits, uint64(len(slots)))
		for slots[i] != 0 {
			if i++; i == uint64(len(slots)) {
				i = 0
			}
		}
		slots[i] = fp
	}
	sh.slots = slots
}

// Len returns the number of fingerprints in the set. It locks every shard
// in turn: O(64).
func (s *Set) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.n
		if sh.hasZero {
			n++
		}
		sh.mu.Unlock()
	}
	return n
}

// Bytes returns the memory the set holds: its tables and shard headers.
func (s *Set) Bytes() int {
	b := int(unsafe.Sizeof(shard{})) * numShards
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		b += 8 * len(sh.slots)
		sh.mu.Unlock()
	}
	return b
}

// MapSet is a URLSeen over a Go map behind one mutex: simple and exact,
// the reference the Set is tested against; about 40 bytes per fingerprint
// and one global lock. The zero value is ready to use; safe for concurrent
// use.
type MapSet struct {
	mu sync.Mutex
	m  map[uint64]struct{}
}

var _ URLSeen = (*MapSet)(nil)

// TestAndAdd implements URLSeen.
func (s *MapSet) TestAndAdd(ctx context.Context, fp uint64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, &Error{Op: "TestAndAdd", Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(fp), nil
}

// TestAndAddBatch implements URLSeen; the batch is applied under one lock.
func (s *MapSet) TestAndAddBatch(ctx context.Context, dst []bool, fps []uint64) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return dst, &Error{Op: "TestAndAddBatch", Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fp := range fps {
		dst = append(dst, s.add(fp))
	}
	return dst, nil
}

func (s *MapSet) add(fp uint64) bool {
	if s.m == nil {
		s.m = make(map[uint64]struct{})
	}
	if _, ok := s.m[fp]; ok {
		return true
	}
	s.m[fp] = struct{}{}
	return false
}

// Len returns the number of fingerprints.
func (s *MapSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
