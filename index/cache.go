package index

import (
	"container/list"
	"sync"
)

// cacheKey names a cached item of the segment reader file: a verified
// page (kind cachePage, off the page number), a decoded posting list (kind
// cachePostings, off the logical offset of its entry) or the dictionary
// fence (kind cacheFence).
type cacheKey struct {
	file uint64
	kind uint8
	off  int64
}

const (
	cachePage uint8 = iota
	cachePostings
	cacheFence
)

type cacheEntry struct {
	key  cacheKey
	val  any
	cost int64
}

// cache is a least-recently-used cache bounded in bytes (a nil *cache
// keeps nothing), shared by the
// segments of a Dir: verified 4 KiB pages, decoded posting lists and
// dictionary fences. Items
// are immutable once cached, so a value may be used after its eviction.
// Safe for concurrent use; get and put are O(1) under one mutex.
type cache struct {
	max int64 // ≤ 0: nothing is kept

	mu   sync.Mutex
	used int64
	m    map[cacheKey]*list.Element
	lru  list.List // front: most recently used
}

func newCache(max int64) *cache {
	return &cache{max: max, m: make(map[cacheKey]*list.Element)}
}

func (c *cache) get(k cacheKey) (any, bool) {
	if c == nil || c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cacheEntry).val, true
}

// put keeps v under k unless it would take more than an eighth of the
// cache, evicting the least recently used items to make room.
func (c *cache) put(k cacheKey, v any, cost int64) {
	if !c.fits(cost) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		c.lru.MoveToFront(el)
		return
	}
	c.m[k] = c.lru.PushFront(&cacheEntry{key: k, val: v, cost: cost})
	c.used += cost
	for c.used > c.max {
		c.remove(c.lru.Back())
	}
}

func (c *cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.m, e.key)
	c.used -= e.cost
}

// fits reports whether an item of the given cost would be kept.
func (c *cache) fits(cost int64) bool { return c != nil && c.max > 0 && cost <= c.max/8 }

// drop forgets every item of file (a closed segment). Cost: O(items).
func (c *cache) drop(file uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*cacheEntry).key.file == file {
			c.remove(el)
		}
		el = next
	}
}

// size returns the bytes held.
func (c *cache) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
