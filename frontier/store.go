package frontier

import (
	"container/heap"
	"io"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// keyHash identifies a politeness key in Mercator's tables. Two keys
// with the same 64-bit hash would share a back queue: still polite (one
// lease and one gap for both), merely slower for them.
func keyHash(key string) uint64 { return xxhash.Sum64String(key) }

// Store holds the FIFO queues and the scheduled revisits behind a frontier.
// Queue numbers are small non-negative integers (Mercator uses 0..F-1 for
// the front queues, F..F+B-1 for the back queues and F+B..F+B+F-1 for the
// lanes of hosts never seen). The frontier calls a Store with its own
// lock held, so implementations need not be safe for concurrent use.
//
// NewMemStore is the default; package frontier/diskq keeps the queues in
// Pebble with only their heads and tails in memory.
type Store interface {
	// Push appends us to the tail of queue q.
	Push(q int, us ...URL) error
	// Pop removes the head of queue q; ok is false when q is empty.
	Pop(q int) (u URL, ok bool, err error)
	// Len returns the number of URLs in queue q. O(1).
	Len(q int) int
	// Queues returns one more than the highest queue number ever pushed to
	// (including queues found on disk at open).
	Queues() int
	// Defer holds us until their Due time.
	Defer(us ...URL) error
	// Due removes and appends to dst the deferred URLs with Due ≤ now, at
	// most max of them, earliest first.
	Due(now time.Time, max int, dst []URL) ([]URL, error)
	// NextDue returns the earliest Due of the deferred URLs; ok is false
	// when there are none.
	NextDue() (t time.Time, ok bool)
	// Deferred returns the number of deferred URLs. O(1).
	Deferred() int
	// Scan calls yield for every URL held, queued or deferred, until yield
	// returns false.
	Scan(yield func(URL) bool) error
	// Close releases the store's resources.
	Close() error
}

// item is the packed form of a URL in the in-memory store: 112 bytes on
// 64-bit platforms plus the strings' bytes.
type item struct {
	url, key         string
	val              string // ETag + "\n" + LastModified, "" when both are empty
	kh               uint64 // keyHash(key), so refill never reads key bytes
	fp               uint64
	first, last, due int64
	fetches, changes uint32
	depth, prio      int32
	sitemap          uint8
	freq             ChangeFreq
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func pack(u *URL) item { return packHashed(u, keyHash(u.Key)) }

// packHashed is pack with keyHash(u.Key) already known.
func packHashed(u *URL, kh uint64) item {
	return item{
		url: u.URL, key: u.Key, kh: kh, fp: u.Fingerprint, val: packValidators(u.ETag, u.LastModified),
		first: unixNano(u.History.First), last: unixNano(u.History.Last), due: unixNano(u.Due),
		fetches: u.History.Fetches, changes: u.History.Changes,
		depth: int32(u.Depth), prio: int32(u.Priority),
		sitemap: uint8(min(max(u.Sitemap, 0), 255)), freq: u.ChangeFreq,
	}
}

func (it *item) unpack() URL {
	etag, lastMod := unpackValidators(it.val)
	return URL{
		ETag: etag, LastModified: lastMod,
		URL: it.url, Key: it.key, Fingerprint: it.fp,
		History: History{Fetches: it.fetches, Changes: it.changes, First: fromUnixNano(it.first), Last: fromUnixNano(it.last)},
		Due:     fromUnixNano(it.due),
		Depth:   int(it.depth), Priority: int(it.prio),
		Sitemap: int(it.sitemap), ChangeFreq: it.freq,
	}
}

// packValidators joins an ETag and a Last-Modified into one string (a
// newline cannot occur in a header value), so that the URLs never
// fetched, most of a frontier, pay one empty string for both.
func packValidators(etag, lastMod string) string {
	if etag == "" && lastMod == "" {
		return ""
	}
	return etag + "\n" + lastMod
}

func unpackValidators(v string) (etag, lastMod string) {
	etag, lastMod, _ = strings.Cut(v, "\n")
	return etag, lastMod
}

const chunkSize = 64

type chunk struct {
	items [chunkSize]item
	next  *chunk
}

// fifo is a queue of fixed-size chunks: no copying on growth and at most
// one partly used chunk at each end, so memory stays within a chunk of the
// content.
type fifo struct {
	head, tail *chunk
	hi, ti     int // next pop index in head, next push index in tail
	n          int
}

// MemStore is the in-memory Store: chunked FIFO queues and a binary heap
// of deferred URLs. Push and Pop are O(1) without allocation in steady
// state; Defer and Due are O(log n). Not safe for concurrent use (the
// frontier serializes calls).
type MemStore struct {
	queues []fifo
	free   *chunk
	nfree  int
	defer_ deferHeap
}

// NewMemStore returns an empty in-memory Store.
func NewMemStore() *MemStore { return &MemStore{} }

var _ Store = (*MemStore)(nil)

func (s *MemStore) queue(q int) *fifo {
	if q >= len(s.queues) {
		s.queues = append(s.queues, make([]fifo, q+1-len(s.queues))...)
	}
	return &s.queues[q]
}

func (s *MemStore) newChunk() *chunk {
	if c := s.free; c != nil {
		s.free = c.next
		s.nfree--
		c.next = nil
		return c
	}
	return new(chunk)
}

func (s *MemStore) release(c *chunk) {
	if s.nfree >= 64 {
		return
	}
	c.next = s.free
	s.free = c
	s.nfree++
}

// Push implements Store.
func (s *MemStore) Push(q int, us ...URL) error {
	for i := range us {
		s.pushHashed(q, &us[i], keyHash(us[i].Key))
	}
	return nil
}

// pushHashed is Push of one URL whose keyHash(u.Key) is kh: Mercator.Add
// hashes the key once for T and for the item.
func (s *MemStore) pushHashed(q int, u *URL, kh uint64) {
	f := s.queue(q)
	if f.tail == nil {
		c := s.newChunk()
		f.head, f.tail, f.hi, f.ti = c, c, 0, 0
	} else if f.ti == chunkSize {
		c := s.newChunk()
		f.tail.next = c
		f.tail, f.ti = c, 0
	}
	f.tail.items[f.ti] = packHashed(u, kh)
	f.ti++
	f.n++
}

// Pop implements Store.
func (s *MemStore) Pop(q int) (URL, bool, error) {
	if q >= len(s.queues) || s.queues[q].n == 0 {
		return URL{}, false, nil
	}
	f := &s.queues[q]
	it := &f.head.items[f.hi]
	u := it.unpack()
	*it = item{}
	f.hi++
	f.n--
	if f.n == 0 {
		s.release(f.head)
		f.head, f.tail, f.hi, f.ti = nil, nil, 0, 0
	} else if f.hi == chunkSize {
		c := f.head
		f.head, f.hi = c.next, 0
		s.release(c)
	}
	return u, true, nil
}

// Len implements Store.
func (s *MemStore) Len(q int) int {
	if q >= len(s.queues) {
		return 0
	}
	return s.queues[q].n
}

// Queues implements Store.
func (s *MemStore) Queues() int { return len(s.queues) }

// Defer implements Store.
func (s *MemStore) Defer(us ...URL) error {
	for i := range us {
		heap.Push(&s.defer_, pack(&us[i]))
	}
	return nil
}

// Due implements Store.
func (s *MemStore) Due(now time.Time, max int, dst []URL) ([]URL, error) {
	n := now.UnixNano()
	for len(s.defer_) > 0 && max > 0 && s.defer_[0].due <= n {
		it := heap.Pop(&s.defer_).(item)
		dst = append(dst, it.unpack())
		max--
	}
	return dst, nil
}

// NextDue implements Store.
func (s *MemStore) NextDue() (time.Time, bool) {
	if len(s.defer_) == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, s.defer_[0].due), true
}

// Deferred implements Store.
func (s *MemStore) Deferred() int { return len(s.defer_) }

// Scan implements Store.
func (s *MemStore) Scan(yield func(URL) bool) error {
	for q := range s.queues {
		f := &s.queues[q]
		i, c := f.hi, f.head
		for k := 0; k < f.n; k++ {
			if i == chunkSize {
				c, i = c.next, 0
			}
			if !yield(c.items[i].unpack()) {
				return nil
			}
			i++
		}
	}
	for i := range s.defer_ {
		if !yield(s.defer_[i].unpack()) {
			return nil
		}
	}
	return nil
}

// Close implements Store; it drops the content.
func (s *MemStore) Close() error {
	*s = MemStore{}
	return nil
}

type deferHeap []item

func (h deferHeap) Len() int           { return len(h) }
func (h deferHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h deferHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deferHeap) Push(x any)        { *h = append(*h, x.(item)) }
func (h *deferHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = item{}
	*h = old[:len(old)-1]
	return it
}

// DurableStore is a Store whose content survives the process (package
// frontier/diskq). Sync makes the current content durable together with
// the URLs leased at the moment: a store reopened after a crash holds
// what it held at the last Sync, the leased URLs queued again in the
// queue numbered by their Priority. Close forgets the leases of the last
// Sync (a frontier pushes its leased URLs back before closing its
// store), so a store reopened after Close holds exactly what it held.
type DurableStore interface {
	Store
	Sync(leased []URL) error
}

// syncStore makes a DurableStore's content durable, counting the URLs
// held out of it (by held, called only then) as queued; any other store
// has nothing to sync. Mercator.Sync and FIFO.Sync.
func syncStore(s Store, held func() []URL) error {
	ds, ok := s.(DurableStore)
	if !ok {
		return nil
	}
	if err := ds.Sync(held()); err != nil {
		return &Error{Op: "sync", Err: err}
	}
	return nil
}

// writeCheckpoint writes the URLs held out of the store (first: they were
// at the heads of their queues) and then every URL in it, queued or
// deferred, to w in the format Restore reads. Mercator.Checkpoint and
// FIFO.Checkpoint.
func writeCheckpoint(w io.Writer, s Store, held []URL) error {
	cw := NewCheckpointWriter(w)
	var err error
	for i := 0; i < len(held) && err == nil; i++ {
		err = cw.Write(&held[i])
	}
	if err == nil {
		err = s.Scan(func(u URL) bool { return cw.Write(&u) == nil })
	}
	if err == nil {
		err = cw.Close()
	}
	if err == nil {
		err = cw.Err()
	}
	if err != nil {
		return &Error{Op: "checkpoint", Err: err}
	}
	return nil
}

// Syncer is implemented by frontiers that can make their content
// durable (Mercator and FIFO over a DurableStore; a no-op otherwise).
type Syncer interface {
	Sync() error
}

// headKeyHash returns keyHash of the Key of the head of queue q, which
// must not be empty.
func (s *MemStore) headKeyHash(q int) uint64 {
	f := &s.queues[q]
	return f.head.items[f.hi].kh
}

// headKey returns the Key of the head of queue q; q must not be empty.
func (s *MemStore) headKey(q int) string {
	f := &s.queues[q]
	return f.head.items[f.hi].key
}

// move pops the head of queue from and pushes it to queue to without
// unpacking it: Mercator's refill on the default store.
func (s *MemStore) move(from, to int) {
	f := &s.queues[from]
	it := f.head.items[f.hi]
	f.head.items[f.hi] = item{}
	f.hi++
	f.n--
	if f.n == 0 {
		s.release(f.head)
		f.head, f.tail, f.hi, f.ti = nil, nil, 0, 0
	} else if f.hi == chunkSize {
		c := f.head
		f.head, f.hi = c.next, 0
		s.release(c)
	}
	t := s.queue(to)
	if t.tail == nil {
		c := s.newChunk()
		t.head, t.tail, t.hi, t.ti = c, c, 0, 0
	} else if t.ti == chunkSize {
		c := s.newChunk()
		t.tail.next = c
		t.tail, t.ti = c, 0
	}
	t.tail.items[t.ti] = it
	t.ti++
	t.n++
}

// headPrio returns the Priority of the head of queue q; q must not be
// empty.
func (s *MemStore) headPrio(q int) int {
	f := &s.queues[q]
	return int(f.head.items[f.hi].prio)
}
