package dns

import (
	"math/rand/v2"
	"net/netip"
	"sync"
)

// shardCount is the number of independently locked parts of the cache; a
// power of two. Each lock is held for a map access and a list splice only,
// never during a query.
const shardCount = 64

// entry is a cached answer, positive (addrs) or negative (err).
type entry struct {
	name       string
	addrs      []netip.Addr // shared with callers: read-only
	err        error        // *Error of kind NotFound for negative entries
	expires    int64        // resolver clock, ns
	prev, next *entry       // LRU list; shard.lru.next is the most recent
}

// flight is a resolution in progress that concurrent lookups of one name
// share (singleflight). addrs and err are written before done is closed.
type flight struct {
	done  chan struct{}
	addrs []netip.Addr
	err   error
}

// shard is one part of the cache plus the flights of its names.
type shard struct {
	mu      sync.Mutex
	entries map[string]*entry
	flights map[string]*flight
	lru     entry // sentinel of a circular list
	limit   int

	// counters, guarded by mu: counting under the lock the lookup holds
	// anyway costs nothing and contends less than shared atomics.
	hits, negHits, misses, shared, evictions uint64

	_ [64]byte // keep neighbouring shards' locks off one cache line
}

type cache struct {
	seed   uint32 // of the names' hash, so that nobody can aim at one shard
	shards [shardCount]shard
}

func newCache(size int) *cache {
	c := &cache{seed: uint32(rand.Uint64())}
	per := (size + shardCount - 1) / shardCount
	for i := range c.shards {
		s := &c.shards[i]
		s.entries = make(map[string]*entry)
		s.flights = make(map[string]*flight)
		s.lru.next, s.lru.prev = &s.lru, &s.lru
		s.limit = max(per, 1)
	}
	return c
}

// shard returns the shard of a name with the given hash (canonicalHost).
func (c *cache) shard(hash uint32) *shard {
	return &c.shards[(hash^hash>>16)&(shardCount-1)]
}

// getLocked returns the live entry of name, marking it most recently used,
// or nil. s.mu must be held.
func (s *shard) getLocked(name string, now int64) *entry {
	e := s.entries[name]
	if e == nil || now >= e.expires {
		return nil
	}
	if s.lru.next != e {
		e.unlink()
		s.pushFront(e)
	}
	return e
}

// putLocked caches an answer for name until expires, evicting the least
// recently used entry if the shard is full. s.mu must be held.
func (s *shard) putLocked(name string, addrs []netip.Addr, err error, expires int64) {
	if e := s.entries[name]; e != nil {
		e.addrs, e.err, e.expires = addrs, err, expires
		e.unlink()
		s.pushFront(e)
		return
	}
	e := &entry{name: name, addrs: addrs, err: err, expires: expires}
	s.entries[name] = e
	s.pushFront(e)
	for len(s.entries) > s.limit {
		old := s.lru.prev
		old.unlink()
		delete(s.entries, old.name)
		s.evictions++
	}
}

func (s *shard) pushFront(e *entry) {
	e.prev, e.next = &s.lru, s.lru.next
	s.lru.next.prev = e
	s.lru.next = e
}

func (e *entry) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}
