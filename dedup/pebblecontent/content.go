package pebblecontent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/shingle"
)

// Options configures Open and New. The zero value means all defaults.
type Options struct {
	// Threshold is the estimated Jaccard similarity of shingle sets at or
	// above which a document is a near-duplicate. Default 0.8, as
	// dedup.Content.
	Threshold float64
	// Sketch configures shingling and MinHash. Default K=128, W=4, as
	// dedup.Content.
	Sketch shingle.Options
	// LSH overrides the banding (Bands and Rows, or FPWeight and
	// FNWeight); K and Threshold are taken from Sketch and Threshold.
	// Default: the banding dedup.Content uses, weights 0.1 for false
	// positives and 0.9 for false negatives (K=128: 14 bands of 9 rows).
	// An existing store keeps the banding it was created with unless Bands
	// and Rows are set. Seed must be 0: band keys are hashed by this
	// package.
	LSH shingle.LSHOptions
	// Bits is the number of low bits of each MinHash value stored (b-bit
	// minwise hashing): 8, 16, 32 or 64. Default 8: 128 bytes per
	// signature at K=128 instead of 1 KiB, with the same recall as full
	// values on near-duplicate pairs of real text (see the package
	// documentation). 64 stores full values: the estimates of
	// dedup.Content, bit for bit.
	Bits int
	// ExactOnly turns near-duplicate detection off: Seen finds documents
	// with equal TextFingerprint only, as dedup.ExactContent does, and
	// skips shingling. The fields above are then not used.
	ExactOnly bool
	// Sync makes every call that changes the store wait until the change
	// is synced to disk (an fsync of Pebble's write-ahead log, shared by
	// concurrent callers). Default false: see SyncInterval.
	Sync bool
	// SyncInterval bounds, when Sync is false, how long a change stays
	// unsynced: a background goroutine syncs the write-ahead log this
	// long after the first change since the last sync. A kill of the
	// process or of the machine loses at most the changes of the last
	// SyncInterval. Default 100ms. Negative: never sync in the background
	// (changes then reach the log file only when Pebble's 32 KiB log
	// buffer fills, at Sync, or at Close).
	SyncInterval time.Duration

	// The fields below configure the database Open creates; New, which
	// uses a database opened by its owner, rejects them.

	// BlockCacheBytes is the size of Pebble's block cache, which Pebble
	// also charges its memtables to: the two together stay within about
	// BlockCacheBytes + MemTableBytes. Default 32 MiB, which keeps the
	// bloom filters and indexes of about a million documents in memory
	// (22 bytes each); beyond that, lookups read them from disk (from
	// the operating system's page cache, if it has room).
	BlockCacheBytes int64
	// MemTableBytes is the size of a Pebble memtable (up to two are held
	// while one is flushed). Default 4 MiB.
	MemTableBytes uint64
	// FS is the file system. Default vfs.Default (the OS); vfs.NewMem()
	// keeps everything in memory.
	FS vfs.FS
}

// Content is a dedup.ContentSeen kept in Pebble: a table of exact
// fingerprints (TextFingerprint → the URL first seen at) and a MinHash
// LSH index whose buckets and signatures are keys and values, so that
// memory is bounded whatever the number of documents (see the package
// documentation for the layout and the figures).
//
// Content is safe for concurrent use. As in dedup.Content, one lock is
// held over each lookup and the insert that follows it, so that among
// concurrent calls with the same or near-identical content exactly one
// records it; shingling and hashing happen outside it. Seen costs one
// tokenizing pass, a point lookup of the fingerprint and of one key per
// band (the bloom filters answer most of them without reading a block),
// a further lookup or scan for each non-empty bucket, a lookup per
// candidate, and, for a new document, one commit of 1 + bands keys.
type Content struct {
	db        *pebble.DB
	own       bool // Close closes db
	prefix    string
	exactOnly bool
	sketch    shingle.Options
	k         int // MinHash values per signature
	bands     int
	rows      int
	width     int // bytes per stored value: Bits/8
	threshold float64
	sync      bool
	syncer    *syncer // nil if sync or no background sync
	works     sync.Pool

	mu sync.Mutex // held over lookup and insert, and over Forget

	closeMu sync.RWMutex
	closed  bool
}

var _ dedup.ContentSeen = (*Content)(nil)

// work is the scratch of one call.
type work struct {
	sk     *shingle.Sketcher
	sig    shingle.Signature
	packed []byte
	hashes []uint64
	next   []uint32 // per band: the first free slot
	cands  []uint64
	key    []byte
	key2   []byte
	val    []byte
	// get serves point lookups, scan the scans of large buckets. Both
	// are created on demand under c.mu, after the last change, and closed
	// by putWork: an iterator is a snapshot.
	get  *pebble.Iterator
	scan *pebble.Iterator
}

// Open opens or creates the store in dir, in its own Pebble database
// (nil opts means all defaults). The database is owned by one process at
// a time (Pebble locks the directory); Close closes it.
func Open(dir string, opts *Options) (*Content, error) {
	o, err := resolve(opts, true)
	if err != nil {
		return nil, &dedup.Error{Op: "Open", Subject: dir, Err: err}
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
		// Small tables keep each filter block (10 bits per key) small
		// enough for the block cache, whose shards refuse blocks larger
		// than themselves; Pebble's default doubles the size per level,
		// to 128 MiB tables with 4 MiB filter blocks read from disk on
		// every lookup.
		po.TargetFileSizes[i] = 4 << 20
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, &dedup.Error{Op: "Open", Subject: dir, Err: err}
	}
	c, err := newContent(db, "", o)
	if err != nil {
		db.Close()
		return nil, &dedup.Error{Op: "Open", Subject: dir, Err: err}
	}
	c.own = true
	return c, nil
}

// New returns the store kept in db under the key prefix, which must not
// be empty and must not be a prefix of another user's keys (nil opts
// means all defaults). db stays its owner's: Close syncs this store's
// changes and leaves db open, and must come before db's Close (Pebble
// panics on a closed database; only the background syncer is protected
// from that). Every key of the store starts with prefix,
// and New writes one (the options the store was created with) if it is
// not there. Lookups cost what the package documentation says if db was
// opened with bloom filters on every level, as Open does.
func New(db *pebble.DB, prefix string, opts *Options) (*Content, error) {
	o, err := resolve(opts, false)
	if err == nil && (db == nil || prefix == "") {
		err = fmt.Errorf("%w: New needs a database and a key prefix", ErrInvalidOptions)
	}
	if err != nil {
		return nil, &dedup.Error{Op: "New", Subject: fmt.Sprintf("%q", prefix), Err: err}
	}
	c, err := newContent(db, prefix, o)
	if err != nil {
		return nil, &dedup.Error{Op: "New", Subject: fmt.Sprintf("%q", prefix), Err: err}
	}
	return c, nil
}

// resolved is Options with defaults filled in and the banding chosen.
type resolved struct {
	Options
	bands, rows int
}

func resolve(opts *Options, open bool) (resolved, error) {
	var o resolved
	if opts != nil {
		o.Options = *opts
	}
	if !open && (o.BlockCacheBytes != 0 || o.MemTableBytes != 0 || o.FS != nil) {
		return o, fmt.Errorf("%w: BlockCacheBytes, MemTableBytes and FS configure Open's database", ErrInvalidOptions)
	}
	if o.BlockCacheBytes == 0 {
		o.BlockCacheBytes = 32 << 20
	}
	if o.MemTableBytes == 0 {
		o.MemTableBytes = 4 << 20
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = 100 * time.Millisecond
	}
	if o.BlockCacheBytes < 0 {
		return o, fmt.Errorf("%w: BlockCacheBytes=%d", ErrInvalidOptions, o.BlockCacheBytes)
	}
	if o.ExactOnly {
		return o, nil
	}
	if o.Threshold == 0 {
		o.Threshold = 0.8
	}
	if o.Bits == 0 {
		o.Bits = 8
	}
	if o.Bits != 8 && o.Bits != 16 && o.Bits != 32 && o.Bits != 64 {
		return o, fmt.Errorf("%w: Bits=%d (want 8, 16, 32 or 64)", ErrInvalidOptions, o.Bits)
	}
	if o.LSH.Seed != 0 {
		return o, fmt.Errorf("%w: LSH.Seed=%d (want 0)", ErrInvalidOptions, o.LSH.Seed)
	}
	sk, err := shingle.NewSketcher(&o.Sketch)
	if err != nil {
		return o, errors.Join(ErrInvalidOptions, err)
	}
	o.Sketch = sk.Options()
	lsh := o.LSH
	lsh.K, lsh.Threshold = o.Sketch.K, o.Threshold
	if lsh.FPWeight == 0 && lsh.FNWeight == 0 {
		lsh.FPWeight, lsh.FNWeight = 0.1, 0.9
	}
	l, err := shingle.NewLSH(&lsh)
	if err != nil {
		return o, errors.Join(ErrInvalidOptions, err)
	}
	o.bands, o.rows = l.Banding()
	return o, nil
}

func newContent(db *pebble.DB, prefix string, o resolved) (*Content, error) {
	c := &Content{
		db:        db,
		prefix:    prefix,
		exactOnly: o.ExactOnly,
		sketch:    o.Sketch,
		k:         o.Sketch.K,
		bands:     o.bands,
		rows:      o.rows,
		width:     o.Bits / 8,
		threshold: o.Threshold,
		sync:      o.Sync,
	}
	c.works.New = func() any { return new(work) }
	want := meta{exactOnly: o.ExactOnly}
	if !o.ExactOnly {
		want = meta{k: o.Sketch.K, w: o.Sketch.W, seed: o.Sketch.Seed, method: o.Sketch.Method, bands: o.bands, rows: o.rows, bits: o.Bits}
	}
	key := metaKey(prefix)
	v, closer, err := db.Get(key)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if err := db.Set(key, appendMeta(nil, want), pebble.NoSync); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		have, err := decodeMeta(v)
		closer.Close()
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		if !o.ExactOnly && !have.exactOnly && o.LSH.Bands == 0 {
			// A banding tuned for another threshold still finds the
			// candidates: keep the store's.
			want.bands, want.rows = have.bands, have.rows
			c.bands, c.rows = have.bands, have.rows
		}
		if have != want {
			return nil, fmt.Errorf("%w: created with %v, opened with %v", ErrMismatch, have, want)
		}
	}
	if !o.Sync && o.SyncInterval > 0 {
		c.syncer = startSyncer(db, o.SyncInterval)
	}
	return c, nil
}

// quietLogger drops Pebble's informational messages (one per flush and
// compaction) and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)              {}
func (quietLogger) Errorf(format string, args ...any) { pebble.DefaultLogger.Errorf(format, args...) }
func (quietLogger) Fatalf(format string, args ...any) { pebble.DefaultLogger.Fatalf(format, args...) }

func (c *Content) enter(op, subject string) error {
	c.closeMu.RLock()
	if c.closed {
		c.closeMu.RUnlock()
		return &dedup.Error{Op: op, Subject: subject, Err: dedup.ErrClosed}
	}
	return nil
}

// sigLen is the length of a stored signature (0: none are stored).
func (c *Content) sigLen() int {
	if c.exactOnly {
		return 0
	}
	return c.k * c.width
}

func (c *Content) getWork() *work { return c.works.Get().(*work) }

func (c *Content) putWork(w *work) {
	// An iterator pins the database's state: none is kept.
	if w.get != nil {
		w.get.Close()
		w.get = nil
	}
	if w.scan != nil {
		w.scan.Close()
		w.scan = nil
	}
	c.works.Put(w)
}

// Seen implements dedup.ContentSeen. The returned Match's URL is a copy.
func (c *Content) Seen(ctx context.Context, doc dedup.Doc) (dedup.Match, error) {
	if err := ctx.Err(); err != nil {
		return dedup.Match{}, &dedup.Error{Op: "Seen", Subject: doc.URL, Err: err}
	}
	if err := c.enter("Seen", doc.URL); err != nil {
		return dedup.Match{}, err
	}
	defer c.closeMu.RUnlock()
	w := c.getWork()
	defer c.putWork(w)
	var fp uint64
	if c.exactOnly {
		fp = dedup.TextFingerprint(doc.Text)
	} else {
		if w.sk == nil {
			w.sk, _ = shingle.NewSketcher(&c.sketch) // validated by resolve
		}
		w.sig = w.sk.AppendSketch(w.sig[:0], doc.Text)
		fp = xxhash.Sum64(w.sk.Normalized()) // = dedup.TextFingerprint(doc.Text)
		w.packed = pack(w.packed[:0], w.sig, c.width)
		w.hashes = w.hashes[:0]
		for i := range c.bands {
			w.hashes = append(w.hashes, bandHash(w.packed, i, c.rows, c.width))
		}
	}
	m, changed, err := c.seen(w, fp, doc.URL)
	if err != nil {
		return dedup.Match{}, &dedup.Error{Op: "Seen", Subject: doc.URL, Err: err}
	}
	if changed {
		if err := c.durable(); err != nil {
			return m, &dedup.Error{Op: "Seen", Subject: doc.URL, Err: err}
		}
	}
	return m, nil
}

// seen is Seen's lookup and insert, under c.mu; changed reports an
// insert.
func (c *Content) seen(w *work, fp uint64, url string) (m dedup.Match, changed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.key = docKey(w.key, c.prefix, fp)
	first, found, err := c.docURL(w, w.key)
	if err != nil {
		return dedup.Match{}, false, err
	}
	if found {
		return dedup.Match{Seen: true, URL: first, Of: fp, Similarity: 1, Fingerprint: fp}, false, nil
	}
	if !c.exactOnly {
		best, bestJ, bestURL, err := c.query(w)
		if err != nil {
			return dedup.Match{}, false, err
		}
		if bestJ >= c.threshold {
			return dedup.Match{Seen: true, Near: true, URL: bestURL, Of: best, Similarity: bestJ, Fingerprint: fp}, false, nil
		}
	}
	b := c.db.NewBatch()
	defer b.Close()
	packed := w.packed
	if c.exactOnly {
		packed = nil
	}
	w.val = appendDoc(w.val[:0], url, packed)
	w.key = docKey(w.key, c.prefix, fp) // query reused w.key
	if err := b.Set(w.key, w.val, nil); err != nil {
		return dedup.Match{}, false, err
	}
	if !c.exactOnly {
		var fpb [8]byte
		putFP(fpb[:], fp)
		for i, h := range w.hashes {
			w.key2 = bucketKey(w.key2, c.prefix, i, h, w.next[i])
			if err := b.Set(w.key2, fpb[:], nil); err != nil {
				return dedup.Match{}, false, err
			}
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return dedup.Match{}, false, err
	}
	return dedup.Match{Fingerprint: fp}, true, nil
}

// lookup returns the value of key, valid until the next lookup, and
// whether the key is there. It is DB.Get with the bloom filters of every
// level: Get skips those of the last level, on the grounds that most
// lookups find their key, while most of the store's find nothing. Cost:
// a bloom filter probe per level (blocks in the cache), and reading the
// key's data block if it is there.
func (c *Content) lookup(w *work, key []byte) ([]byte, bool, error) {
	if w.get == nil {
		it, err := c.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return nil, false, err
		}
		w.get = it
	}
	if !w.get.SeekPrefixGE(key) || !bytes.Equal(w.get.Key(), key) {
		return nil, false, w.get.Error()
	}
	v, err := w.get.ValueAndErr()
	return v, err == nil, err
}

// docURL returns the URL of the document record at key, if there is one.
func (c *Content) docURL(w *work, key []byte) (string, bool, error) {
	v, found, err := c.lookup(w, key)
	if err != nil || !found {
		return "", false, err
	}
	url, _, err := decodeDoc(v, c.sigLen())
	if err != nil {
		return "", false, fmt.Errorf("key %q: %w", key, err)
	}
	return string(url), true, nil
}

// query finds the LSH candidates of w's signature and returns the most
// similar one (ties: the smallest fingerprint) with its estimated Jaccard
// similarity (-1 if none) and URL. It fills w.next with each bucket's
// first free slot.
func (c *Content) query(w *work) (best uint64, bestJ float64, bestURL string, err error) {
	w.next = slices.Grow(w.next[:0], c.bands)[:c.bands]
	w.cands = w.cands[:0]
	for i, h := range w.hashes {
		w.next[i] = 0
		err := c.members(w, i, h, func(slot uint32, member uint64) {
			w.cands = append(w.cands, member)
			w.next[i] = slot + 1
		})
		if err != nil {
			return 0, 0, "", err
		}
	}
	slices.Sort(w.cands)
	w.cands = slices.Compact(w.cands)
	bestJ = -1
	for _, cand := range w.cands {
		w.key = docKey(w.key, c.prefix, cand)
		v, found, err := c.lookup(w, w.key)
		if err != nil {
			return 0, 0, "", err
		}
		if !found {
			continue // a member whose damaged record was forgotten
		}
		url, packed, err := decodeDoc(v, len(w.packed))
		if err != nil {
			return 0, 0, "", fmt.Errorf("key %q: %w", w.key, err)
		}
		if j := jaccard(w.packed, packed, c.k, c.width); j > bestJ {
			best, bestJ, bestURL = cand, j, string(url)
		}
	}
	return best, bestJ, bestURL, nil
}

// probeSlots is the number of a bucket's slots looked up one by one
// before the rest is scanned: a point lookup of a missing key is mostly
// answered by the bloom filters, and most buckets hold one member.
const probeSlots = 4

// members calls visit for every member of the bucket of band's hash, in
// slot order.
func (c *Content) members(w *work, band int, hash uint64, visit func(slot uint32, fp uint64)) error {
	for slot := range uint32(probeSlots) {
		w.key2 = bucketKey(w.key2, c.prefix, band, hash, slot)
		v, found, err := c.lookup(w, w.key2)
		if err != nil || !found {
			return err // the common case, at slot 0: the bloom filters say no
		}
		fp, err := decodeSlot(v)
		if err != nil {
			return fmt.Errorf("key %q: %w", w.key2, err)
		}
		visit(slot, fp)
	}
	if w.scan == nil {
		it, err := c.db.NewIter(nil)
		if err != nil {
			return err
		}
		w.scan = it
	}
	w.key2 = bucketKey(w.key2, c.prefix, band, hash, probeSlots)
	w.val = bucketUpper(w.val, w.key2)
	w.scan.SetBounds(w.key2, w.val)
	for ok := w.scan.First(); ok; ok = w.scan.Next() {
		k := w.scan.Key()
		if len(k) != len(c.prefix)+bucketKeyLen {
			return fmt.Errorf("key %q: %w: bucket key length", k, ErrCorrupt)
		}
		v, err := w.scan.ValueAndErr()
		if err != nil {
			return err
		}
		fp, err := decodeSlot(v)
		if err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		visit(getSlot(k), fp)
	}
	return w.scan.Error()
}

// Record is Seen for a document whose fingerprint the caller computed (a
// body without text: an image, a PDF, hashed whole): it records url
// under fp unless fp is there, and returns the URL fp was first recorded
// at and whether it was there, as dedup.ExactContent.Record does. A
// recorded fingerprint takes part in exact matches only; Forget removes
// it. Cost: a point lookup and, if new, a commit of one key.
func (c *Content) Record(fp uint64, url string) (first string, known bool, err error) {
	subject := fmt.Sprintf("%016x", fp)
	if err := c.enter("Record", subject); err != nil {
		return "", false, err
	}
	defer c.closeMu.RUnlock()
	w := c.getWork()
	defer c.putWork(w)
	first, known, err = c.record(w, fp, url)
	if err == nil && !known {
		err = c.durable()
	}
	if err != nil {
		return first, known, &dedup.Error{Op: "Record", Subject: subject, Err: err}
	}
	return first, known, nil
}

func (c *Content) record(w *work, fp uint64, url string) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.key = docKey(w.key, c.prefix, fp)
	first, found, err := c.docURL(w, w.key)
	if err != nil || found {
		return first, found, err
	}
	w.val = appendDoc(w.val[:0], url, nil)
	if err := c.db.Set(w.key, w.val, pebble.NoSync); err != nil {
		return "", false, err
	}
	return url, false, nil
}

// Forget implements dedup.ContentSeen: it removes the document's record
// and its entries in every LSH bucket (the last member of each bucket
// moves into the freed slot), in one atomic commit. Cost: a lookup, a
// scan of each of the document's buckets, and a commit of about 1 + 2
// bands keys. A record found damaged is removed all the same and reported
// as an error wrapping ErrCorrupt; its bucket entries, if any, stay
// (queries skip members without a record).
func (c *Content) Forget(ctx context.Context, fp uint64) error {
	subject := fmt.Sprintf("%016x", fp)
	if err := ctx.Err(); err != nil {
		return &dedup.Error{Op: "Forget", Subject: subject, Err: err}
	}
	if err := c.enter("Forget", subject); err != nil {
		return err
	}
	defer c.closeMu.RUnlock()
	w := c.getWork()
	defer c.putWork(w)
	changed, err := c.forget(w, fp)
	if changed {
		err = errors.Join(err, c.durable())
	}
	if err != nil {
		return &dedup.Error{Op: "Forget", Subject: subject, Err: err}
	}
	return nil
}

func (c *Content) forget(w *work, fp uint64) (changed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.key = docKey(w.key, c.prefix, fp)
	v, found, err := c.lookup(w, w.key)
	if err != nil || !found {
		return false, err
	}
	_, packed, decodeErr := decodeDoc(v, c.sigLen())
	if decodeErr != nil {
		decodeErr = fmt.Errorf("key %q: %w", w.key, decodeErr)
	}
	w.packed = append(w.packed[:0], packed...)
	b := c.db.NewBatch()
	defer b.Close()
	if err := b.Delete(w.key, nil); err != nil {
		return false, err
	}
	if decodeErr == nil && len(w.packed) > 0 && !c.exactOnly {
		for i := range c.bands {
			if err := c.unlink(w, b, i, bandHash(w.packed, i, c.rows, c.width), fp); err != nil {
				return false, err
			}
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return false, err
	}
	return true, decodeErr
}

// unlink adds to b the removal of fp from a bucket: the bucket's last
// member moves into fp's slot.
func (c *Content) unlink(w *work, b *pebble.Batch, band int, hash, fp uint64) error {
	slot, last := int64(-1), int64(-1)
	var lastFP uint64
	err := c.members(w, band, hash, func(s uint32, member uint64) {
		if member == fp && slot < 0 {
			slot = int64(s)
		}
		last, lastFP = int64(s), member
	})
	if err != nil || slot < 0 {
		return err
	}
	if slot != last {
		var fpb [8]byte
		putFP(fpb[:], lastFP)
		w.key = bucketKey(w.key, c.prefix, band, hash, uint32(slot))
		if err := b.Set(w.key, fpb[:], nil); err != nil {
			return err
		}
	}
	w.key = bucketKey(w.key, c.prefix, band, hash, uint32(last))
	return b.Delete(w.key, nil)
}

// durable makes a change committed by this goroutine durable as Options
// ask: with Sync, it waits for a sync of the write-ahead log (concurrent
// callers share one); otherwise it tells the background syncer.
func (c *Content) durable() error {
	if c.sync {
		return syncWAL(c.db)
	}
	if c.syncer != nil {
		c.syncer.kick()
	}
	return nil
}

// Sync makes every change made so far durable: it syncs Pebble's
// write-ahead log (one fsync) and returns the first error of the
// background syncs since the last call, if any.
func (c *Content) Sync() error {
	if err := c.enter("Sync", ""); err != nil {
		return err
	}
	defer c.closeMu.RUnlock()
	err := syncWAL(c.db)
	if c.syncer != nil {
		err = errors.Join(err, c.syncer.takeErr())
	}
	if err != nil {
		return &dedup.Error{Op: "Sync", Err: err}
	}
	return nil
}

// MemoryBytes returns the memory Pebble holds now in its block cache and
// memtables (including those waiting to be flushed): with New, the
// shared database's. With Pebble's table metadata and the scratch of the
// calls in progress, it is all the memory the store uses, and it stays
// within about BlockCacheBytes + MemTableBytes however many documents
// the store holds. Cost: one read of Pebble's metrics.
func (c *Content) MemoryBytes() int64 {
	if err := c.enter("MemoryBytes", ""); err != nil {
		return 0
	}
	defer c.closeMu.RUnlock()
	m := c.db.Metrics()
	return m.BlockCache.Size + int64(m.MemTable.Size)
}

// Close stops the background syncer, syncs the store's changes and, if
// Open opened the database, closes it; later calls fail with
// dedup.ErrClosed. It waits for calls in progress and returns the first
// error of the background syncs, if any.
func (c *Content) Close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed {
		return &dedup.Error{Op: "Close", Err: dedup.ErrClosed}
	}
	c.closed = true
	var err error
	if c.syncer != nil {
		err = c.syncer.stop()
	}
	if c.own {
		err = errors.Join(err, c.db.Close())
	} else {
		err = errors.Join(err, syncWAL(c.db))
	}
	if err != nil {
		return &dedup.Error{Op: "Close", Err: err}
	}
	return nil
}
