package pebbleseen

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/crawlkit/crawlkit/dedup"
)

// ErrInvalidOptions is returned (wrapped in a *dedup.Error) by Open for
// out-of-range options.
var ErrInvalidOptions = errors.New("pebbleseen: invalid options")

// Options configures Open. The zero value means all defaults.
type Options struct {
	// CacheEntries is the number of slots of the in-memory cache of
	// fingerprints known to be present, rounded up to a power of two;
	// each takes 8 bytes. Default 1<<20 (8 MiB); at most 1<<30.
	// Negative disables it.
	CacheEntries int
	// BlockCacheBytes is the size of Pebble's block cache. Default 8 MiB.
	BlockCacheBytes int64
	// MemTableBytes is the size of a Pebble memtable (up to two are held
	// while one is flushed). Default 4 MiB.
	MemTableBytes uint64
	// Sync makes every commit wait for fsync. Default false: additions go
	// to Pebble's write-ahead log unsynced, so they survive a crash of the
	// process and a Close, but an operating-system crash may lose the
	// last few (the crawler then fetches those URLs again).
	Sync bool
	// FS is the file system. Default vfs.Default (the OS); vfs.NewMem()
	// keeps everything in memory.
	FS vfs.FS
}

const stripes = 64

// Set is a URLSeen on disk. It is safe for concurrent use: fingerprints
// are striped over 64 locks, so concurrent callers wait for each other
// only on the same stripe. TestAndAdd costs a cache probe and, on a miss,
// a Pebble Get (memtable and bloom filters; a disk read only on bloom
// false positives or real hits) and, for a new fingerprint, a commit.
// Batches share one commit.
type Set struct {
	db        *pebble.DB
	shared    bool   // db belongs to the caller (New): Close leaves it open
	prefix    []byte // starts every key: empty for a Set of its own
	writeOpts *pebble.WriteOptions
	cache     []atomic.Uint64 // 0: empty
	locks     [stripes]sync.Mutex

	closeMu sync.RWMutex
	closed  bool
}

var _ dedup.URLSeen = (*Set)(nil)

// Open opens or creates the set stored in dir (nil opts means all
// defaults).
func Open(dir string, opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = 1 << 20
	}
	if o.BlockCacheBytes == 0 {
		o.BlockCacheBytes = 8 << 20
	}
	if o.MemTableBytes == 0 {
		o.MemTableBytes = 4 << 20
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.BlockCacheBytes < 0 || o.CacheEntries > 1<<30 {
		return nil, &dedup.Error{Op: "Open", Subject: dir, Err: ErrInvalidOptions}
	}
	cache := pebble.NewCache(o.BlockCacheBytes)
	defer cache.Unref()
	po := &pebble.Options{
		FS:           o.FS,
		Cache:        cache,
		MemTableSize: o.MemTableBytes,
		Logger:       quietLogger{},
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, &dedup.Error{Op: "Open", Subject: dir, Err: err}
	}
	s := &Set{db: db, writeOpts: pebble.NoSync}
	if o.Sync {
		s.writeOpts = pebble.Sync
	}
	if o.CacheEntries > 0 {
		s.cache = make([]atomic.Uint64, 1<<bits.Len(uint(o.CacheEntries-1)))
	}
	return s, nil
}

// New returns a Set kept in db, which the caller opened and closes, under
// keys that start with prefix (a prefix no other user of db starts keys
// with): a crawl's whole state can share one Pebble database, one
// write-ahead log and one block cache. Of opts only CacheEntries and Sync
// apply. Close leaves db open. db's levels should use bloom filters
// (bloom.FilterPolicy) for lookups of absent fingerprints to stay cheap.
func New(db *pebble.DB, prefix string, opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = 1 << 20
	}
	if db == nil || o.CacheEntries > 1<<30 {
		return nil, &dedup.Error{Op: "New", Err: ErrInvalidOptions}
	}
	s := &Set{db: db, shared: true, prefix: []byte(prefix), writeOpts: pebble.NoSync}
	if o.Sync {
		s.writeOpts = pebble.Sync
	}
	if o.CacheEntries > 0 {
		s.cache = make([]atomic.Uint64, 1<<bits.Len(uint(o.CacheEntries-1)))
	}
	return s, nil
}

// key returns the key of fp in buf (which must have room for the prefix
// and 8 bytes).
func (s *Set) key(buf []byte, fp uint64) []byte {
	return binary.BigEndian.AppendUint64(append(buf[:0], s.prefix...), fp)
}

// Contains sets the answers for fps in dst (appended), without adding
// anything: for callers that decide what to add and add it in a batch of
// their own (AddTo). One iterator for the batch, looked up in key order.
func (s *Set) Contains(ctx context.Context, dst []bool, fps []uint64) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return dst, &dedup.Error{Op: "Contains", Err: err}
	}
	if err := s.enter("Contains"); err != nil {
		return dst, err
	}
	defer s.closeMu.RUnlock()
	n := len(dst)
	dst = slices.Grow(dst, len(fps))[:n+len(fps)]
	out := dst[n:]
	var it *pebble.Iterator
	var kb [32]byte
	for i, fp := range fps {
		if s.cached(fp) {
			out[i] = true
			continue
		}
		if it == nil {
			var err error
			if it, err = s.db.NewIter(nil); err != nil {
				return dst[:n], &dedup.Error{Op: "Contains", Err: err}
			}
			defer it.Close()
		}
		key := s.key(kb[:0], fp)
		out[i] = it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key)
		if err := it.Error(); err != nil {
			return dst[:n], &dedup.Error{Op: "Contains", Subject: fmt.Sprintf("%016x", fp), Err: err}
		}
		if out[i] {
			s.remember(fp)
		}
	}
	return dst, nil
}

// AddTo writes the keys of fps into b, a batch of the Set's database that
// the caller commits, and remembers them in the cache: after a failed
// commit the cache may claim fingerprints the database lacks, so the
// caller must stop using the Set.
func (s *Set) AddTo(b *pebble.Batch, fps []uint64) error {
	var kb [32]byte
	for _, fp := range fps {
		if err := b.Set(s.key(kb[:0], fp), nil, nil); err != nil {
			return &dedup.Error{Op: "AddTo", Subject: fmt.Sprintf("%016x", fp), Err: err}
		}
		s.remember(fp)
	}
	return nil
}

// quietLogger drops Pebble's informational messages (one per flush and
// compaction) and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)              {}
func (quietLogger) Errorf(format string, args ...any) { pebble.DefaultLogger.Errorf(format, args...) }
func (quietLogger) Fatalf(format string, args ...any) { pebble.DefaultLogger.Fatalf(format, args...) }

func mix(fp uint64) uint64 {
	h := fp * 0x9e3779b97f4a7c15
	return h ^ h>>29
}

func (s *Set) stripe(fp uint64) int { return int(mix(fp) >> 58) }

func (s *Set) cached(fp uint64) bool {
	if len(s.cache) == 0 || fp == 0 {
		return false
	}
	return s.cache[mix(fp)&uint64(len(s.cache)-1)].Load() == fp
}

func (s *Set) remember(fp uint64) {
	if len(s.cache) == 0 || fp == 0 {
		return
	}
	s.cache[mix(fp)&uint64(len(s.cache)-1)].Store(fp)
}

// has reports whether key is in the database.
func (s *Set) has(key []byte) (bool, error) {
	_, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, closer.Close()
}

func (s *Set) enter(op string) error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return &dedup.Error{Op: op, Err: dedup.ErrClosed}
	}
	return nil
}

// TestAndAdd reports whether fp was in the set, adding it if not.
func (s *Set) TestAndAdd(ctx context.Context, fp uint64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, &dedup.Error{Op: "TestAndAdd", Err: err}
	}
	if err := s.enter("TestAndAdd"); err != nil {
		return false, err
	}
	defer s.closeMu.RUnlock()
	if s.cached(fp) { // fingerprints are never removed: a hit is final
		return true, nil
	}
	var kb [32]byte
	key := s.key(kb[:0], fp)
	mu := &s.locks[s.stripe(fp)]
	mu.Lock()
	defer mu.Unlock()
	seen, err := s.has(key)
	if err == nil && !seen {
		err = s.db.Set(key, nil, s.writeOpts)
	}
	if err != nil {
		return false, &dedup.Error{Op: "TestAndAdd", Subject: fmt.Sprintf("%016x", fp), Err: err}
	}
	s.remember(fp)
	return seen, nil
}

// TestAndAddBatch implements dedup.URLSeen. The batch is looked up in key
// order (neighbouring keys share Pebble blocks) and its new fingerprints
// are committed together; the stripes it touches are locked (in order)
// for its duration.
func (s *Set) TestAndAddBatch(ctx context.Context, dst []bool, fps []uint64) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return dst, &dedup.Error{Op: "TestAndAddBatch", Err: err}
	}
	if len(fps) == 0 {
		return dst, nil
	}
	if err := s.enter("TestAndAddBatch"); err != nil {
		return dst, err
	}
	defer s.closeMu.RUnlock()
	var mask uint64
	for _, fp := range fps {
		mask |= 1 << s.stripe(fp)
	}
	for m := mask; m != 0; m &= m - 1 {
		s.locks[bits.TrailingZeros64(m)].Lock()
	}
	defer func() {
		for m := mask; m != 0; m &= m - 1 {
			s.locks[bits.TrailingZeros64(m)].Unlock()
		}
	}()
	n := len(dst)
	dst = slices.Grow(dst, len(fps))[:n+len(fps)]
	out := dst[n:]
	order := make([]int32, len(fps))
	for i := range order {
		order[i] = int32(i)
	}
	// Stable, so that a repeated fingerprint is new only at its first
	// occurrence.
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(fps[a], fps[b]) })
	b := s.db.NewBatch()
	defer b.Close()
	// One iterator for the whole batch: prefix seeks consult the bloom
	// filters like Get, without building an iterator per key. Its
	// snapshot cannot miss a concurrent addition of these fingerprints:
	// their stripes are locked.
	it, err := s.db.NewIter(nil)
	if err != nil {
		return dst[:n], &dedup.Error{Op: "TestAndAddBatch", Err: err}
	}
	defer it.Close()
	var kb [32]byte
	for k, i := range order {
		fp := fps[i]
		switch {
		case k > 0 && fps[order[k-1]] == fp:
			out[i] = true
			continue
		case s.cached(fp):
			out[i] = true
			continue
		}
		key := s.key(kb[:0], fp)
		seen := it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key)
		if err := it.Error(); err != nil {
			return dst[:n], &dedup.Error{Op: "TestAndAddBatch", Subject: fmt.Sprintf("%016x", fp), Err: err}
		}
		if !seen {
			if err := b.Set(key, nil, nil); err != nil {
				return dst[:n], &dedup.Error{Op: "TestAndAddBatch", Subject: fmt.Sprintf("%016x", fp), Err: err}
			}
		}
		out[i] = seen
	}
	if !b.Empty() {
		if err := b.Commit(s.writeOpts); err != nil {
			return dst[:n], &dedup.Error{Op: "TestAndAddBatch", Err: err}
		}
	}
	for _, fp := range fps {
		s.remember(fp)
	}
	return dst, nil
}

// MemoryBytes returns the memory the set holds now in its fingerprint
// cache, Pebble's block cache and Pebble's memtables (including those
// waiting to be flushed): the part that must stay bounded however many
// URLs the set holds.
func (s *Set) MemoryBytes() int64 {
	if err := s.enter("MemoryBytes"); err != nil {
		return 0
	}
	defer s.closeMu.RUnlock()
	m := s.db.Metrics()
	return int64(8*len(s.cache)) + m.BlockCache.Size + int64(m.MemTable.Size)
}

// Flush writes the memtable to disk. Close also does what is needed for
// durability; Flush is for callers that want the WAL short.
func (s *Set) Flush() error {
	if err := s.enter("Flush"); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	if err := s.db.Flush(); err != nil {
		return &dedup.Error{Op: "Flush", Err: err}
	}
	return nil
}

// Close closes the database; later calls fail with dedup.ErrClosed. It
// waits for operations in progress.
func (s *Set) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return &dedup.Error{Op: "Close", Err: dedup.ErrClosed}
	}
	s.closed = true
	if s.shared {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return &dedup.Error{Op: "Close", Err: err}
	}
	return nil
}
