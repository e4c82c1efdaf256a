package crawldb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
	"github.com/crawlkit/crawlkit/dedup/pebbleseen"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/diskq"
)

// Errors. Callers compare with errors.Is.
var (
	// ErrLocked is returned by Open when another process (or another DB
	// in this one) has the directory open.
	ErrLocked = errors.New("crawldb: the directory is in use by another crawl")
	// ErrCorrupt is wrapped by errors about damaged records.
	ErrCorrupt = errors.New("crawldb: corrupt record")
	// ErrVersion is returned by Open for a directory written by an
	// incompatible version of this package.
	ErrVersion = errors.New("crawldb: state of another format version")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("crawldb: closed")
)

// formatVersion is stored under metaVersion; Open refuses others.
const formatVersion = 1

// Key layout of the database: one prefix byte per kind of record.
const (
	prefixSeen    = "s" // pebbleseen: "s" + be64 URL fingerprint
	prefixPending = 'p' // 'p' + be64 URL fingerprint → appendPending
	prefixKey     = 'k' // 'k' + key → appendKeyRecord
	prefixContent = "c" // pebblecontent: near-duplicate content set
	prefixBodies  = "b" // pebblecontent, exact only: bodies without text
	metaSeq       = "m\x00seq"
	metaProgress  = "m\x00progress"
	metaRules     = "m\x00rules"
	metaVersion   = "m\x00version"
)

// Options configures Open. The zero value is usable; each field documents
// its default.
type Options struct {
	// MemTableSize is the size of a Pebble memtable (up to two are held
	// while one is flushed). Default 8 MiB.
	MemTableSize uint64
	// CacheSize is the size of Pebble's block cache, which Pebble also
	// charges its memtables to. Default 64 MiB.
	CacheSize int64
	// SeenCacheEntries is the number of URL fingerprints cached in memory
	// in front of the URL-seen set, 8 bytes each. Default 1<<20 (8 MiB).
	SeenCacheEntries int
	// SyncInterval is how often the state is synced to disk, which bounds
	// what an operating-system crash or a power failure can take; a kill
	// of the process takes nothing (see DB). Default 1 s; negative: only
	// at Close.
	SyncInterval time.Duration
	// Content configures the near-duplicate content set (ContentSeen).
	// Default: pebblecontent's defaults.
	Content pebblecontent.Options
	// QueueMemTableSize is the memtable size of the frontier's queue
	// store (QueueStore). Default 8 MiB.
	QueueMemTableSize uint64
}

func (o *Options) ensureDefaults() {
	if o.MemTableSize == 0 {
		o.MemTableSize = 8 << 20
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 64 << 20
	}
	if o.SeenCacheEntries == 0 {
		o.SeenCacheEntries = 1 << 20
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = time.Second
	}
	if o.QueueMemTableSize == 0 {
		o.QueueMemTableSize = 8 << 20
	}
}

// DB is a crawlkit.State on disk: the pending URLs, the URL-seen set, the
// host and domain records and the crawl's progress in one Pebble database
// (github.com/cockroachdb/pebble/v2), with the content-seen sets beside
// them (ContentStorer) and the frontier's queues in a store of their own
// (QueueStorer). Memory is bounded whatever the size of the crawl: Pebble's
// memtables and block cache, the URL fingerprint cache, and the content
// sets' bounds (see Options).
//
// Durability: Commit appends the Txn to a commit log with one write
// system call and then applies it to Pebble, so a Txn whose Commit
// returned survives a kill of the process at any instant; Open replays
// what Pebble lacks. Every SyncInterval the log and Pebble are synced, so
// an operating-system crash or a power failure loses at most the Txns of
// the last SyncInterval (and comes back as of an earlier Txn, whole).
//
// A DB is used by one process at a time (Open locks the directory). Safe
// for concurrent use; Commit calls are serialized.
type DB struct {
	dir   string
	o     Options
	db    *pebble.DB
	cache *pebble.Cache
	lock  io.Closer
	seen  *pebbleseen.Set

	// closeMu is held for reading by every method while it uses the
	// database, for writing by Close.
	closeMu sync.RWMutex
	mu      sync.Mutex // serializes Commit, the log and Sync's switch
	seq     uint64     // last committed Txn
	log     *commitLog
	dirty   bool     // commits since the last sync
	stale   []uint64 // log files made redundant by the next sync
	closed  bool
	val     []byte
	rec     []byte

	contentMu sync.Mutex
	content   *pebblecontent.Content
	bodies    *pebblecontent.Content

	contacts *contacts

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

var (
	_ crawlkit.State           = (*DB)(nil)
	_ crawlkit.QueueStorer     = (*DB)(nil)
	_ crawlkit.ContentStorer   = (*DB)(nil)
	_ crawlkit.ContactRecorder = (*DB)(nil)
	_ crawlkit.RuleStorer      = (*DB)(nil)
)

// Rules implements crawlkit.RuleStorer: the last committed Txn.Rules.
func (d *DB) Rules() ([]byte, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.closeMu.RUnlock()
	v, err := d.get([]byte(metaRules))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fail("rules", err)
	}
	return v, nil
}

// Contacting implements crawlkit.ContactRecorder: one positional write of
// worker w's slot in the contacts file, which survives a kill like the
// commit log.
func (d *DB) Contacting(w int, c crawlkit.Contact) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.closeMu.RUnlock()
	return d.contacts.record(w, c)
}

// Contacts implements crawlkit.ContactRecorder: the slots the last run
// left, as Open found them.
func (d *DB) Contacts() ([]crawlkit.Contact, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.closeMu.RUnlock()
	return slices.Clone(d.contacts.last), nil
}

// Open opens the crawl state in dir, creating it if needed, and replays
// the commits a killed process left in its log. o may be nil. Open fails
// with ErrLocked when the directory is in use.
func Open(dir string, o *Options) (*DB, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.ensureDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	lock, err := vfs.Default.Lock(filepath.Join(dir, "crawl.lock"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s (%v)", ErrLocked, dir, err)
	}
	d := &DB{dir: dir, o: opts, lock: lock, stop: make(chan struct{}), done: make(chan struct{})}
	if err := d.open(); err != nil {
		d.release()
		return nil, err
	}
	go d.syncLoop()
	return d, nil
}

func (d *DB) open() error {
	d.cache = pebble.NewCache(d.o.CacheSize)
	po := &pebble.Options{
		Cache:        d.cache,
		MemTableSize: d.o.MemTableSize,
		Logger:       quietLogger{},
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		// Small tables keep each filter block small enough to stay in
		// the cache: lookups of absent keys (most URL-seen tests) then
		// read no disk.
		po.TargetFileSizes[i] = 4 << 20
	}
	db, err := pebble.Open(filepath.Join(d.dir, "db"), po)
	if err != nil {
		return d.fail("open", err)
	}
	d.db = db
	switch v, err := d.get([]byte(metaVersion)); {
	case errors.Is(err, pebble.ErrNotFound):
		if err := d.db.Set([]byte(metaVersion), []byte{formatVersion}, pebble.Sync); err != nil {
			return d.fail("open", err)
		}
	case err != nil:
		return d.fail("open", err)
	case len(v) != 1 || v[0] != formatVersion:
		return &Error{Op: "open", Path: d.dir, Err: ErrVersion}
	}
	if d.contacts, err = openContacts(filepath.Join(d.dir, "contacts")); err != nil {
		return &Error{Op: "open", Err: err} // an *os.PathError: it names the file
	}
	if d.seen, err = pebbleseen.New(db, prefixSeen, &pebbleseen.Options{CacheEntries: d.o.SeenCacheEntries}); err != nil {
		return d.fail("open", err)
	}
	switch v, err := d.get([]byte(metaSeq)); {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return d.fail("open", err)
	case len(v) != 8:
		return d.fail("open", fmt.Errorf("%w: sequence number of %d bytes", ErrCorrupt, len(v)))
	default:
		d.seq = binary.BigEndian.Uint64(v)
	}
	files, err := logFiles(d.dir)
	if err != nil {
		return &Error{Op: "open", Err: err}
	}
	for i, n := range files {
		err := replayLog(d.dir, n, i == len(files)-1, func(payload []byte) error {
			seq, t, err := decodeTxn(payload)
			if err != nil {
				return err
			}
			if seq <= d.seq {
				return nil // Pebble has it
			}
			if seq != d.seq+1 {
				return fmt.Errorf("%w: commit %d follows %d", ErrCorrupt, seq, d.seq)
			}
			return d.apply(seq, t)
		})
		if err != nil {
			return err // an *Error naming the log file
		}
	}
	// What was replayed is made durable before the old logs go.
	if err := d.db.LogData(nil, pebble.Sync); err != nil {
		return d.fail("open", err)
	}
	last := uint64(0)
	if len(files) > 0 {
		last = files[len(files)-1]
	}
	if d.log, err = openLog(d.dir, last); err != nil {
		return &Error{Op: "open", Err: err}
	}
	for _, n := range files {
		os.Remove(filepath.Join(d.dir, logName(n)))
	}
	return nil
}

// Dir returns the directory the DB was opened on.
func (d *DB) Dir() string { return d.dir }

// quietLogger drops Pebble's informational messages and keeps its errors.
// Pebble calls Fatalf only on invariant violations it cannot continue
// from; this one panics rather than exiting, so deferred cleanups run.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	log.Printf("crawldb: pebble: "+format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("crawldb: pebble: "+format, args...))
}

func (d *DB) get(key []byte) ([]byte, error) {
	v, closer, err := d.db.Get(key)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

func pendingKey(b []byte, url string) []byte {
	b = append(b[:0], prefixPending)
	return binary.BigEndian.AppendUint64(b, dedup.Fingerprint(url))
}

func keyKey(b []byte, key string) []byte {
	b = append(b[:0], prefixKey)
	return append(b, key...)
}

// Load implements crawlkit.State: it scans the pending records.
func (d *DB) Load(ctx context.Context, each func(crawlkit.Pending) error) ([]byte, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.closeMu.RUnlock()
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPending}, UpperBound: []byte{prefixPending + 1}})
	if err != nil {
		return nil, d.fail("load", err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return nil, err
		}
		p, err := decodePending(it.Value())
		if err != nil {
			err = &Error{Op: "load", Path: filepath.Join(d.dir, "db"), Subject: fmt.Sprintf("key %x", it.Key()), Err: err}
			it.Close()
			return nil, err
		}
		if err := each(p); err != nil {
			it.Close()
			return nil, err
		}
	}
	if err := it.Close(); err != nil {
		return nil, d.fail("load", err)
	}
	v, err := d.get([]byte(metaProgress))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fail("load", err)
	}
	return v, nil
}

// enter fails after Close; otherwise the caller holds closeMu for
// reading until it calls d.closeMu.RUnlock.
func (d *DB) enter() error {
	d.closeMu.RLock()
	if d.closed {
		d.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Lookup implements crawlkit.State. Seen costs the fingerprint cache and,
// on a miss, a bloom-filtered seek; each key and pending record a Get.
func (d *DB) Lookup(ctx context.Context, q *crawlkit.Lookup) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.closeMu.RUnlock()
	var err error
	if q.Seen, err = d.seen.Contains(ctx, q.Seen[:0], q.URLs); err != nil {
		return err
	}
	var kb []byte
	q.Records = q.Records[:0]
	for _, k := range q.Keys {
		kb = keyKey(kb, k)
		r, err := d.keyRecord(kb)
		if err != nil {
			return err
		}
		q.Records = append(q.Records, r)
	}
	q.Found, q.PendingRecords = q.Found[:0], q.PendingRecords[:0]
	for _, u := range q.Pending {
		v, err := d.get(pendingKey(kb, u))
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			q.Found = append(q.Found, false)
			q.PendingRecords = append(q.PendingRecords, crawlkit.Pending{})
			continue
		case err != nil:
			return d.fail("lookup", err)
		}
		p, err := decodePending(v)
		if err != nil {
			return &Error{Op: "lookup", Path: filepath.Join(d.dir, "db"), Subject: fmt.Sprintf("pending %q", u), Err: err}
		}
		q.Found = append(q.Found, true)
		q.PendingRecords = append(q.PendingRecords, p)
	}
	return nil
}

// keyRecord reads the record under key k (the zero record if none).
func (d *DB) keyRecord(k []byte) (crawlkit.KeyRecord, error) {
	v, err := d.get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return crawlkit.KeyRecord{}, nil
	}
	if err != nil {
		return crawlkit.KeyRecord{}, d.fail("lookup", err)
	}
	r, err := decodeKeyRecord(v)
	if err != nil {
		return crawlkit.KeyRecord{}, &Error{Op: "lookup", Path: filepath.Join(d.dir, "db"), Subject: fmt.Sprintf("key %q", k[1:]), Err: err}
	}
	return r, nil
}

// Stage implements crawlkit.Stager: the Txn is committed at once (a nil
// wait), as durable as Commit makes it.
func (d *DB) Stage(ctx context.Context, t *crawlkit.Txn) (func(context.Context) error, error) {
	return nil, d.Commit(ctx, t)
}

// Commit implements crawlkit.State: the Txn is appended to the commit
// log (one write system call) and applied to Pebble in one batch. Cost:
// the write, the batch, and one Get per distinct key record changed.
func (d *DB) Commit(ctx context.Context, t *crawlkit.Txn) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.closeMu.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	seq := d.seq + 1
	var err error
	if d.rec, err = appendTxn(d.rec[:0], seq, t); err != nil {
		return &Error{Op: "commit", Err: err}
	}
	if err := d.log.append(d.rec); err != nil {
		return &Error{Op: "commit", Path: filepath.Join(d.dir, logName(d.log.n)), Err: err}
	}
	d.dirty = true
	return d.apply(seq, t)
}

// apply applies Txn seq to Pebble in one batch, its sequence number with
// it. Called with mu held (or while opening).
func (d *DB) apply(seq uint64, t *crawlkit.Txn) error {
	b := d.db.NewBatch()
	defer b.Close()
	var kb []byte
	var err error
	if len(t.Add) > 0 {
		fps := make([]uint64, len(t.Add))
		for i := range t.Add {
			fps[i] = dedup.Fingerprint(t.Add[i].URL.URL)
		}
		if err := d.seen.AddTo(b, fps); err != nil {
			return d.fail("commit", err)
		}
	}
	for _, list := range [][]crawlkit.Pending{t.Add, t.Put} {
		for i := range list {
			if d.val, err = appendPending(d.val[:0], &list[i]); err != nil {
				return &Error{Op: "commit", Err: err}
			}
			kb = pendingKey(kb, list[i].URL.URL)
			if err := b.Set(kb, d.val, nil); err != nil {
				return d.fail("commit", err)
			}
		}
	}
	for _, u := range t.Done {
		kb = pendingKey(kb, u)
		if err := b.Delete(kb, nil); err != nil {
			return d.fail("commit", err)
		}
	}
	if len(t.Keys) > 0 {
		// Several deltas of one key are applied to one read of it.
		recs := make(map[string]crawlkit.KeyRecord, len(t.Keys))
		order := make([]string, 0, len(t.Keys))
		for _, delta := range t.Keys {
			r, ok := recs[delta.Key]
			if !ok {
				if r, err = d.keyRecord(keyKey(kb, delta.Key)); err != nil {
					return err
				}
				order = append(order, delta.Key)
			}
			r.Apply(delta)
			recs[delta.Key] = r
		}
		for _, k := range order {
			d.val = appendKeyRecord(d.val[:0], recs[k])
			if err := b.Set(keyKey(kb, k), d.val, nil); err != nil {
				return d.fail("commit", err)
			}
		}
	}
	if t.Progress != nil {
		if err := b.Set([]byte(metaProgress), t.Progress, nil); err != nil {
			return d.fail("commit", err)
		}
	}
	if t.Rules != nil {
		if err := b.Set([]byte(metaRules), t.Rules, nil); err != nil {
			return d.fail("commit", err)
		}
	}
	if err := b.Set([]byte(metaSeq), binary.BigEndian.AppendUint64(nil, seq), nil); err != nil {
		return d.fail("commit", err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return d.fail("commit", err)
	}
	d.seq = seq
	return nil
}

// syncLoop syncs the state every SyncInterval while commits come in.
func (d *DB) syncLoop() {
	defer close(d.done)
	if d.o.SyncInterval < 0 {
		<-d.stop
		return
	}
	t := time.NewTicker(d.o.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		if err := d.Sync(); err != nil && !errors.Is(err, ErrClosed) {
			log.Printf("crawldb: sync: %v", err)
		}
	}
}

// Sync makes every committed Txn durable against an operating-system
// crash: the commit log moves on to a new file, Pebble's log is synced,
// and the old commit log, now redundant, is removed. It runs every
// SyncInterval by itself; commits wait only for the switch of files.
func (d *DB) Sync() error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.closeMu.RUnlock()
	return d.sync()
}

func (d *DB) sync() error {
	d.mu.Lock()
	if !d.dirty {
		d.mu.Unlock()
		return nil
	}
	old := d.log.n
	if err := d.log.next(); err != nil {
		d.mu.Unlock()
		return &Error{Op: "sync", Err: err}
	}
	d.dirty = false
	d.stale = append(d.stale, old)
	stale := d.stale
	d.mu.Unlock()

	// Every Txn of the old file was applied before the switch: this sync
	// of Pebble's log makes them all durable.
	if err := d.db.LogData(nil, pebble.Sync); err != nil {
		return d.fail("sync", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range stale {
		os.Remove(filepath.Join(d.dir, logName(n)))
	}
	d.stale = d.stale[len(stale):]
	return nil
}

// QueueStore implements crawlkit.QueueStorer: a frontier/diskq store in
// the directory's "queue" folder, emptied first (the crawler queues the
// pending URLs again from Load). The frontier owns and closes it.
func (d *DB) QueueStore() (frontier.Store, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.closeMu.RUnlock()
	dir := filepath.Join(d.dir, "queue")
	if err := os.RemoveAll(dir); err != nil {
		return nil, &Error{Op: "queue", Err: err}
	}
	s, err := diskq.Open(dir, &diskq.Options{MemTableSize: d.o.QueueMemTableSize, CacheSize: 4 << 20})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ContentSeen implements crawlkit.ContentStorer: the near-duplicate
// content set of package pebblecontent, in this database, the same one on
// every call. Close closes it.
func (d *DB) ContentSeen() (dedup.ContentSeen, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.closeMu.RUnlock()
	d.contentMu.Lock()
	defer d.contentMu.Unlock()
	if d.content == nil {
		o := d.o.Content
		c, err := pebblecontent.New(d.db, prefixContent, &o)
		if err != nil {
			return nil, err
		}
		d.content = c
	}
	return d.content, nil
}

// BodySeen implements crawlkit.ContentStorer: an exact-only pebblecontent
// set for bodies without text, in this database. Close closes it.
func (d *DB) BodySeen() (crawlkit.BodySeen, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.closeMu.RUnlock()
	d.contentMu.Lock()
	defer d.contentMu.Unlock()
	if d.bodies == nil {
		c, err := pebblecontent.New(d.db, prefixBodies, &pebblecontent.Options{ExactOnly: true})
		if err != nil {
			return nil, err
		}
		d.bodies = c
	}
	return d.bodies, nil
}

// Close syncs the state, closes the content sets and the database, and
// unlocks the directory. It waits for calls in progress; later calls fail
// with ErrClosed.
func (d *DB) Close() error {
	// The sync loop stops first: it takes closeMu itself.
	d.stopOnce.Do(func() { close(d.stop) })
	<-d.done
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.closed {
		return ErrClosed
	}
	err := d.sync()
	d.closed = true
	d.contentMu.Lock()
	for _, c := range []*pebblecontent.Content{d.content, d.bodies} {
		if c != nil {
			err = errors.Join(err, c.Close())
		}
	}
	d.content, d.bodies = nil, nil
	d.contentMu.Unlock()
	if d.log != nil {
		empty := d.log.recs == 0
		err = errors.Join(err, d.log.close())
		if empty {
			os.Remove(filepath.Join(d.dir, logName(d.log.n)))
		}
	}
	return errors.Join(err, d.release())
}

// release closes what open opened.
func (d *DB) release() error {
	var err error
	if d.contacts != nil {
		err = errors.Join(err, d.contacts.close())
		d.contacts = nil
	}
	if d.seen != nil {
		err = errors.Join(err, d.seen.Close())
	}
	if d.db != nil {
		err = errors.Join(err, d.db.Close())
		d.db = nil
	}
	if d.cache != nil {
		d.cache.Unref()
		d.cache = nil
	}
	if d.lock != nil {
		err = errors.Join(err, d.lock.Close())
		d.lock = nil
	}
	return err
}
