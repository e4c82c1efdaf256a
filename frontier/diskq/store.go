package diskq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/crawlkit/crawlkit/frontier"
)

// Key layout. Queue entries sort by queue then sequence number, deferred
// entries by due time then sequence number, so that every read is one
// forward scan.
const (
	prefixQueue  = 'q' // 'q' + be32 queue + be64 seq → URL
	prefixDefer  = 'd' // 'd' + be64 due (sign-flipped) + be64 seq → URL
	prefixLeased = 'l' // 'l' + be64 n → URL leased at the last Sync
	metaKey      = "m" // uvarint deferred count (Open recounts; kept for older readers), uvarint next deferred seq
)

// MaxQueues bounds the queue numbers of a Store: Push refuses q ≥
// MaxQueues, and Open reports a queue beyond it as corruption. Every queue
// number below the highest costs memory, so a corrupt key must not make
// Open allocate gigabytes. A frontier uses FrontQueues + BackQueues
// queues, far fewer.
const MaxQueues = 1 << 20

// Options configures Open. The zero value is usable; each field documents
// its default.
type Options struct {
	// HeadItems is how many URLs of a queue's head are read from disk at a
	// time. Default 64.
	HeadItems int
	// TailItems is how many URLs a queue's tail holds in memory before
	// they are written out. Default 64.
	TailItems int
	// BatchBytes is the size at which pending writes are committed.
	// Default 1 MiB.
	BatchBytes int
	// MemTableSize is Pebble's memtable size. Default 32 MiB (two may be
	// in memory at once).
	MemTableSize uint64
	// CacheSize is Pebble's block cache size. Default 8 MiB.
	CacheSize int64
	// WAL turns Pebble's write-ahead log on. Default off: the queues reach
	// disk when memtables flush, and Sync and Close flush them, which
	// halves the bytes written; a crash loses what changed since the last
	// Sync either way, since writes between Syncs are not synced.
	WAL bool
	// FS is the file system. Default vfs.Default (the OS); tests may pass
	// vfs.NewMem().
	FS vfs.FS
}

func (o *Options) ensureDefaults() {
	if o.HeadItems <= 0 {
		o.HeadItems = 64
	}
	if o.TailItems <= 0 {
		o.TailItems = 64
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 1 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 32 << 20
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 8 << 20
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
}

// queue is one FIFO queue: seqs [delFrom, lo) are consumed but still on
// disk, [lo, hi) are on disk (head[hi0:] caches the first of them), and
// tail holds the newest URLs, not yet written.
type queue struct {
	delFrom, lo, hi uint64
	head            []frontier.URL
	hidx            int
	tail            []frontier.URL
	tidx            int
}

func (q *queue) len() int { return int(q.hi-q.lo) + len(q.tail) - q.tidx }

// Store is a frontier.DurableStore on Pebble: every queue's URLs live on
// disk except a head buffer of HeadItems and a tail buffer of TailItems,
// so memory is bounded by the number of queues, not by the number of
// URLs: about (HeadItems + TailItems) × 100 bytes per queue plus Pebble's
// memtables and cache. Push is O(1) amortized (one sequential write per
// TailItems URLs); Pop is O(1) amortized (one scan per HeadItems URLs);
// Defer and Due are O(log n) in Pebble. Not safe for concurrent use: the
// frontier serializes calls.
//
// Exactly-once holds across Close and reopen. After a crash the store
// comes back as of its last commit: everything up to the last Sync, the
// leases of that Sync queued again, and part of what happened since:
// URLs handed out after the Sync may be handed out again or, if their
// lease was not yet recorded by a Sync, lost. Sync often if that matters.
type Store struct {
	dir      string // for errors
	db       *pebble.DB
	cache    interface{ Unref() }
	o        Options
	queues   []queue
	batch    *pebble.Batch
	dirty    bool // batch holds writes the disk reads must see
	deferred int
	dseq     uint64
	nextDue  time.Time
	dueValid bool
	// dueFloor is a key no deferred entry sorts below (nil: the prefix),
	// so that scans start after the tombstones of taken entries.
	dueFloor []byte
	closed   bool
	key      []byte
	val      []byte
}

var _ frontier.DurableStore = (*Store)(nil)

// ErrClosed is returned by a Store's methods after Close.
var ErrClosed = errors.New("diskq: closed")

// Error is the error type of the store's operations.
type Error struct {
	Op  string
	Dir string
	Err error
}

// Error returns "diskq: op dir: cause". The cause's "frontier: " prefix
// is dropped (diskq is a frontier store, and the frontier that wraps this
// error names its package already), as is a "diskq: " one.
func (e *Error) Error() string {
	msg := strings.TrimPrefix(strings.TrimPrefix(e.Err.Error(), "diskq: "), "frontier: ")
	return "diskq: " + e.Op + " " + e.Dir + ": " + msg
}

// readErr wraps an error met reading the store (a damaged key or record
// among them) with the store's directory.
func (s *Store) readErr(err error) error {
	if err == nil || errors.Is(err, ErrClosed) {
		return err
	}
	return &Error{Op: "read", Dir: s.dir, Err: err}
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Open opens or creates the store in dir. A store that was closed, or
// synced before a crash, comes back with its queues, its deferred URLs,
// and the URLs leased at the last Sync pushed to the queue numbered by
// their Priority. o may be nil. Open reads each queue's first and last
// key and counts the deferred URLs: O(queues + deferred URLs).
func Open(dir string, o *Options) (*Store, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.ensureDefaults()
	cache := pebble.NewCache(opts.CacheSize)
	db, err := pebble.Open(dir, &pebble.Options{
		FS:           opts.FS,
		Cache:        cache,
		MemTableSize: opts.MemTableSize,
		DisableWAL:   !opts.WAL,
		Logger:       quietLogger{},
	})
	if err != nil {
		cache.Unref()
		return nil, &Error{Op: "open", Dir: dir, Err: err}
	}
	s := &Store{dir: dir, db: db, cache: cache, o: opts, batch: db.NewBatch()}
	if err := s.load(); err != nil {
		db.Close()
		cache.Unref()
		return nil, &Error{Op: "open", Dir: dir, Err: err}
	}
	return s, nil
}

type quietLogger struct{}

// quietLogger drops Pebble's informational messages and passes its
// errors to the standard logger. Pebble calls Fatalf only on invariant
// violations it cannot continue from; the default logger would exit the
// process, this one panics so that the caller's recovery can run.
func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	log.Printf("diskq: pebble: "+format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("diskq: pebble: "+format, args...))
}

func queueKey(b []byte, q int, seq uint64) []byte {
	b = append(b[:0], prefixQueue)
	b = binary.BigEndian.AppendUint32(b, uint32(q))
	return binary.BigEndian.AppendUint64(b, seq)
}

func deferKey(b []byte, due int64, seq uint64) []byte {
	b = append(b[:0], prefixDefer)
	b = binary.BigEndian.AppendUint64(b, uint64(due)^(1<<63))
	return binary.BigEndian.AppendUint64(b, seq)
}

// load finds each queue's bounds, counts the deferred URLs and requeues
// the leases of the last Sync. Every key is checked for its length and
// every queue for a number below MaxQueues and sane bounds: a corrupt
// store yields frontier.ErrCorrupt, never a panic or a huge allocation.
func (s *Store) load() error {
	if v, closer, err := s.db.Get([]byte(metaKey)); err == nil {
		_, k := binary.Uvarint(v)
		seq, k2 := binary.Uvarint(v[max(k, 0):])
		closer.Close()
		if k <= 0 || k2 <= 0 {
			return frontier.ErrCorrupt
		}
		s.dseq = seq
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	if err := s.countDeferred(); err != nil {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixQueue}, UpperBound: []byte{prefixQueue + 1}})
	if err != nil {
		return err
	}
	for valid := it.First(); valid; {
		k := it.Key()
		if len(k) != 13 || binary.BigEndian.Uint32(k[1:]) >= MaxQueues {
			it.Close()
			return frontier.ErrCorrupt
		}
		q := int(binary.BigEndian.Uint32(k[1:]))
		lo := binary.BigEndian.Uint64(k[5:])
		// The queue's last key: a key of the queue's own length, whose
		// sequence number ends the range.
		if !it.SeekLT(queueKey(s.key, q+1, 0)) || len(it.Key()) != 13 ||
			binary.BigEndian.Uint64(it.Key()[5:]) == ^uint64(0) {
			it.Close()
			return frontier.ErrCorrupt
		}
		hi := binary.BigEndian.Uint64(it.Key()[5:]) + 1
		qu := s.queue(q)
		qu.delFrom, qu.lo, qu.hi = lo, lo, hi
		valid = it.SeekGE(queueKey(s.key, q+1, 0))
	}
	if err := it.Close(); err != nil {
		return err
	}
	// Leases of the last Sync go back to their queue.
	it, err = s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixLeased}, UpperBound: []byte{prefixLeased + 1}})
	if err != nil {
		return err
	}
	var leased []frontier.URL
	for valid := it.First(); valid; valid = it.Next() {
		var u frontier.URL
		if err := u.UnmarshalBinary(it.Value()); err != nil {
			it.Close()
			return err
		}
		if u.Priority >= MaxQueues {
			it.Close()
			return frontier.ErrCorrupt
		}
		leased = append(leased, u)
	}
	if err := it.Close(); err != nil {
		return err
	}
	if len(leased) > 0 {
		if err := s.batch.DeleteRange([]byte{prefixLeased}, []byte{prefixLeased + 1}, nil); err != nil {
			return err
		}
		for _, u := range leased {
			if err := s.Push(max(u.Priority, 0), u); err != nil {
				return err
			}
		}
		return s.persist(pebble.Sync)
	}
	return nil
}

// countDeferred counts the deferred URLs, O(deferred): the count kept in
// the meta record is not trusted, since a count above the entries would
// have Due find nothing forever, and one below would strand the rest. The
// next sequence number is made to exceed every one in use.
func (s *Store) countDeferred() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixDefer}, UpperBound: []byte{prefixDefer + 1}})
	if err != nil {
		return err
	}
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != 17 {
			it.Close()
			return frontier.ErrCorrupt
		}
		if seq := binary.BigEndian.Uint64(k[9:]); seq >= s.dseq {
			if seq == ^uint64(0) {
				it.Close()
				return frontier.ErrCorrupt
			}
			s.dseq = seq + 1
		}
		n++
	}
	s.deferred = n
	return it.Close()
}

func (s *Store) queue(q int) *queue {
	if q >= len(s.queues) {
		s.queues = append(s.queues, make([]queue, q+1-len(s.queues))...)
	}
	return &s.queues[q]
}

// Push implements frontier.Store.
func (s *Store) Push(q int, us ...frontier.URL) error {
	if s.closed {
		return ErrClosed
	}
	if q < 0 || q >= MaxQueues {
		return fmt.Errorf("diskq: queue %d out of range [0, %d)", q, MaxQueues)
	}
	qu := s.queue(q)
	for i := range us {
		if qu.lo == qu.hi && qu.tidx == len(qu.tail) {
			qu.tail, qu.tidx = qu.tail[:0], 0
		}
		qu.tail = append(qu.tail, us[i])
		if len(qu.tail)-qu.tidx >= s.o.TailItems {
			if err := s.spill(q, qu); err != nil {
				return err
			}
		}
	}
	return nil
}

// spill writes the tail of qu to the batch.
func (s *Store) spill(q int, qu *queue) error {
	for i := qu.tidx; i < len(qu.tail); i++ {
		var err error
		if s.val, err = qu.tail[i].AppendBinary(s.val[:0]); err != nil {
			return err
		}
		if err := s.batch.Set(queueKey(s.key, q, qu.hi), s.val, nil); err != nil {
			return err
		}
		qu.hi++
		qu.tail[i] = frontier.URL{}
	}
	qu.tail, qu.tidx = qu.tail[:0], 0
	s.dirty = true
	return s.maybeCommit()
}

func (s *Store) maybeCommit() error {
	if s.batch.Len() < s.o.BatchBytes {
		return nil
	}
	return s.commit(pebble.NoSync)
}

func (s *Store) commit(wo *pebble.WriteOptions) error {
	s.val = binary.AppendUvarint(s.val[:0], uint64(s.deferred))
	s.val = binary.AppendUvarint(s.val, s.dseq)
	if err := s.batch.Set([]byte(metaKey), s.val, nil); err != nil {
		return err
	}
	if err := s.batch.Commit(wo); err != nil {
		return err
	}
	s.batch.Reset()
	s.dirty = false
	return nil
}

// Pop implements frontier.Store.
func (s *Store) Pop(q int) (frontier.URL, bool, error) {
	if s.closed {
		return frontier.URL{}, false, ErrClosed
	}
	if q >= len(s.queues) {
		return frontier.URL{}, false, nil
	}
	qu := &s.queues[q]
	if qu.lo < qu.hi {
		if qu.hidx == len(qu.head) {
			if err := s.readHead(q, qu); err != nil {
				return frontier.URL{}, false, s.readErr(err)
			}
		}
		u := qu.head[qu.hidx]
		qu.head[qu.hidx] = frontier.URL{}
		qu.hidx++
		qu.lo++
		if qu.lo == qu.hi {
			// The disk part is used up: drop it.
			if err := s.deleteConsumed(q, qu); err != nil {
				return frontier.URL{}, false, err
			}
			qu.head, qu.hidx = qu.head[:0], 0
			if err := s.maybeCommit(); err != nil {
				return frontier.URL{}, false, err
			}
		}
		return u, true, nil
	}
	if qu.tidx < len(qu.tail) {
		u := qu.tail[qu.tidx]
		qu.tail[qu.tidx] = frontier.URL{}
		qu.tidx++
		if qu.tidx == len(qu.tail) {
			qu.tail, qu.tidx = qu.tail[:0], 0
		}
		return u, true, nil
	}
	return frontier.URL{}, false, nil
}

// deleteConsumed deletes the consumed entries [delFrom, lo) of queue q.
// Point deletions, not a range deletion: Pebble re-fragments a memtable's
// range deletions for every new iterator once another is added, which
// made each head read cost O(range deletions); reads start at lo, so they
// never step over these tombstones.
func (s *Store) deleteConsumed(q int, qu *queue) error {
	for seq := qu.delFrom; seq < qu.lo; seq++ {
		if err := s.batch.Delete(queueKey(s.key, q, seq), nil); err != nil {
			return err
		}
	}
	if qu.delFrom < qu.lo {
		s.dirty = true
	}
	qu.delFrom = qu.lo
	return nil
}

// readHead loads the next HeadItems URLs of queue q from disk, deleting
// the consumed ones.
func (s *Store) readHead(q int, qu *queue) error {
	if err := s.deleteConsumed(q, qu); err != nil {
		return err
	}
	if s.dirty {
		if err := s.commit(pebble.NoSync); err != nil {
			return err
		}
	}
	lower := queueKey(nil, q, qu.lo)
	upper := queueKey(nil, q, qu.hi)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	qu.head, qu.hidx = qu.head[:0], 0
	want := qu.lo
	for valid := it.First(); valid && len(qu.head) < s.o.HeadItems; valid = it.Next() {
		if binary.BigEndian.Uint64(it.Key()[5:]) != want {
			it.Close()
			return frontier.ErrCorrupt
		}
		var u frontier.URL
		if err := u.UnmarshalBinary(it.Value()); err != nil {
			it.Close()
			return err
		}
		qu.head = append(qu.head, u)
		want++
	}
	if err := it.Close(); err != nil {
		return err
	}
	if len(qu.head) == 0 {
		return frontier.ErrCorrupt
	}
	return nil
}

// Len implements frontier.Store. O(1).
func (s *Store) Len(q int) int {
	if q >= len(s.queues) {
		return 0
	}
	return s.queues[q].len()
}

// Queues implements frontier.Store.
func (s *Store) Queues() int { return len(s.queues) }

// Defer implements frontier.Store.
func (s *Store) Defer(us ...frontier.URL) error {
	if s.closed {
		return ErrClosed
	}
	for i := range us {
		due := us[i].Due.UnixNano()
		var err error
		if s.val, err = us[i].AppendBinary(s.val[:0]); err != nil {
			return err
		}
		k := deferKey(s.key, due, s.dseq)
		if s.dueFloor != nil && bytes.Compare(k, s.dueFloor) < 0 {
			s.dueFloor = nil
		}
		if err := s.batch.Set(k, s.val, nil); err != nil {
			return err
		}
		s.dseq++
		s.deferred++
		if s.dueValid && us[i].Due.Before(s.nextDue) {
			s.nextDue = time.Unix(0, due)
		}
	}
	s.dirty = true
	return s.maybeCommit()
}

// scanDeferred iterates the deferred URLs in due order.
func (s *Store) scanDeferred(fn func(key []byte, u frontier.URL) bool) error {
	if s.dirty {
		if err := s.commit(pebble.NoSync); err != nil {
			return err
		}
	}
	lower := s.dueFloor
	if lower == nil {
		lower = []byte{prefixDefer}
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: []byte{prefixDefer + 1}})
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		var u frontier.URL
		if err := u.UnmarshalBinary(it.Value()); err != nil {
			it.Close()
			return err
		}
		if !fn(it.Key(), u) {
			break
		}
	}
	return it.Close()
}

// Due implements frontier.Store.
func (s *Store) Due(now time.Time, limit int, dst []frontier.URL) ([]frontier.URL, error) {
	if s.closed {
		return dst, ErrClosed
	}
	if s.deferred == 0 || limit <= 0 {
		return dst, nil
	}
	n := now.UnixNano()
	s.dueValid = false
	taken := 0
	var derr error
	var last []byte
	err := s.scanDeferred(func(k []byte, u frontier.URL) bool {
		if u.Due.UnixNano() > n || taken == limit {
			s.nextDue, s.dueValid = u.Due, true
			return false
		}
		if derr = s.batch.Delete(k, nil); derr != nil {
			return false
		}
		dst = append(dst, u)
		taken++
		last = append(last[:0], k...)
		return true
	})
	err = s.readErr(err)
	if err == nil {
		err = derr
	}
	if err != nil {
		return dst, err
	}
	if taken > 0 {
		s.deferred -= taken
		s.dirty = true
		s.dueFloor = append(last, 0) // just after the last taken key
	}
	if s.deferred == 0 {
		s.dueValid = false
	}
	return dst, s.maybeCommit()
}

// NextDue implements frontier.Store.
func (s *Store) NextDue() (time.Time, bool) {
	if s.closed || s.deferred == 0 {
		return time.Time{}, false
	}
	if !s.dueValid {
		err := s.scanDeferred(func(_ []byte, u frontier.URL) bool {
			s.nextDue, s.dueValid = u.Due, true
			return false
		})
		if err != nil {
			// Report something due now, so that the caller's Due surfaces
			// the error.
			return time.Unix(0, 1), true
		}
		if !s.dueValid { // cannot happen: Open counted the entries
			s.deferred = 0
			return time.Time{}, false
		}
	}
	return s.nextDue, true
}

// Deferred implements frontier.Store. O(1).
func (s *Store) Deferred() int { return s.deferred }

// Scan implements frontier.Store: every queue from head to tail, then the
// deferred URLs. It commits pending writes first.
func (s *Store) Scan(yield func(frontier.URL) bool) error {
	if s.closed {
		return ErrClosed
	}
	if err := s.persist(pebble.NoSync); err != nil {
		return err
	}
	for q := range s.queues {
		qu := &s.queues[q]
		if qu.lo == qu.hi {
			continue
		}
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: queueKey(nil, q, qu.lo), UpperBound: queueKey(nil, q, qu.hi)})
		if err != nil {
			return s.readErr(err)
		}
		for valid := it.First(); valid; valid = it.Next() {
			var u frontier.URL
			if err := u.UnmarshalBinary(it.Value()); err != nil {
				it.Close()
				return s.readErr(err)
			}
			if !yield(u) {
				return s.readErr(it.Close())
			}
		}
		if err := it.Close(); err != nil {
			return s.readErr(err)
		}
	}
	stop := false
	err := s.scanDeferred(func(_ []byte, u frontier.URL) bool {
		stop = !yield(u)
		return !stop
	})
	return s.readErr(err)
}

// persist writes every tail and the consumed ranges to the batch and
// commits it.
func (s *Store) persist(wo *pebble.WriteOptions) error {
	for q := range s.queues {
		qu := &s.queues[q]
		if qu.tidx < len(qu.tail) {
			if err := s.spill(q, qu); err != nil {
				return err
			}
		}
		if err := s.deleteConsumed(q, qu); err != nil {
			return err
		}
	}
	if wo == pebble.Sync && !s.o.WAL {
		// Without a log, durability is a memtable flush.
		if err := s.commit(pebble.NoSync); err != nil {
			return err
		}
		return s.db.Flush()
	}
	return s.commit(wo)
}

// Sync implements frontier.DurableStore: it writes out every queue's tail
// and the consumed heads, records leased as the leases to requeue after a
// crash, and syncs the write-ahead log.
func (s *Store) Sync(leased []frontier.URL) error {
	if s.closed {
		return ErrClosed
	}
	if err := s.batch.DeleteRange([]byte{prefixLeased}, []byte{prefixLeased + 1}, nil); err != nil {
		return err
	}
	for i := range leased {
		var err error
		if s.val, err = leased[i].AppendBinary(s.val[:0]); err != nil {
			return err
		}
		k := binary.BigEndian.AppendUint64(append(s.key[:0], prefixLeased), uint64(i))
		if err := s.batch.Set(k, s.val, nil); err != nil {
			return err
		}
	}
	return s.persist(pebble.Sync)
}

// Close writes everything out, forgets the leases of the last Sync (the
// frontier pushed its leases back before closing the store) and closes
// Pebble.
func (s *Store) Close() error {
	if s.closed {
		return ErrClosed
	}
	err := s.batch.DeleteRange([]byte{prefixLeased}, []byte{prefixLeased + 1}, nil)
	if err == nil {
		err = s.persist(pebble.Sync)
	}
	s.closed = true
	err = errors.Join(err, s.batch.Close(), s.db.Close())
	s.cache.Unref()
	s.queues = nil
	return err
}

// Metrics returns Pebble's metrics, for callers watching disk use.
func (s *Store) Metrics() *pebble.Metrics { return s.db.Metrics() }

// DiskUsage returns the bytes Pebble uses on disk.
func (s *Store) DiskUsage() uint64 { return s.db.Metrics().DiskSpaceUsage() }
