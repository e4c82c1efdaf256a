package index

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// DirOptions configures a Dir. The zero value is ready to use.
type DirOptions struct {
	// Analyzer and BM25 are as in ShardOptions; a directory must always be
	// opened with the same ones.
	Analyzer *Analyzer
	BM25     BM25
	// BufferBytes is the estimated memory of the in-memory buffer at which
	// it is written out as a segment; 0 means 16 MiB (about 15,000
	// 150-word pages).
	BufferBytes int64
	// BufferDocs, if positive, also writes the buffer out when it holds
	// that many documents; 0 means no limit.
	BufferDocs int
	// LogBytes is the log size at which the buffer is written out, so that
	// pages with much text do not make the log and its replay large; 0
	// means 64 MiB.
	LogBytes int64
	// CacheBytes bounds the cache of segment pages and decoded posting
	// lists shared by all segments; 0 means 8 MiB, negative disables it.
	CacheBytes int64
	// MergeFactor is the number of segments of one size tier that a
	// background merge combines (tiers are powers of MergeFactor in live
	// documents); 0 means 10. Negative disables background merges: call
	// Merge or Optimize.
	MergeFactor int
	// Sync makes every Add fsync the log, which survives power loss and
	// costs a disk flush per document. By default Add survives the death
	// of the process (kill -9) but not of the machine; Sync and Close
	// flush the log explicitly.
	Sync bool
	// OnMergeError, if set, is called from the background merge goroutine
	// when a merge fails; the segments stay as they were.
	OnMergeError func(error)
}

func (o DirOptions) withDefaults() DirOptions {
	if o.Analyzer == nil {
		o.Analyzer = &Analyzer{}
	}
	o.BM25 = o.BM25.withDefaults()
	if o.BufferBytes <= 0 {
		o.BufferBytes = 16 << 20
	}
	if o.LogBytes <= 0 {
		o.LogBytes = 64 << 20
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 8 << 20
	}
	if o.MergeFactor == 0 {
		o.MergeFactor = 10
	}
	return o
}

// Dir is a durable inverted index in a directory, built like an LSM tree
// (as Lucene and Bleve build theirs): added documents go to an append-only
// log and to an in-memory buffer (a Shard); a full buffer is written out as
// an immutable segment file, and segments are merged into bigger ones in
// the background. Segments are searched on disk through a bounded page
// cache, so the memory of a Dir does not grow with the number of
// documents: the buffer (BufferBytes), the cache (CacheBytes), and per
// segment about 1 KB plus its deletions bitmap (about 2 bytes per deleted
// document, until a merge drops them).
//
// Re-adding a URL replaces the older document wherever it is (newest
// wins): the old one is marked deleted in its segment and dropped at the
// next merge of that segment. Search and Stats are those of a single
// Shard holding the live documents: statistics are global across the
// buffer and the segments, so scores are bit-identical.
//
// Every Add is durable once it returns (one write call to the log; see
// DirOptions.Sync for power loss), and Position/Rewind let a crawler go
// back to the state matching its own checkpoint after a crash.
//
// A Dir is safe for concurrent use: Adds are serialised (a flush holds up
// Adds, not searches, while a segment is written); searches run in
// parallel with Adds, flushes and merges. Close stops the background
// merge goroutine.
type Dir struct {
	path  string
	opts  DirOptions
	lock  *os.File
	cache *cache
	ids   atomic.Uint64 // cache ids of segment readers
	dirID uint64        // from the manifest; never changes

	wmu     sync.Mutex // serialises writers: Add, flush, merge installation, Rewind, Close
	man     *manifest  // the manifest on disk (wmu)
	log     *logWriter // current log (wmu)
	rec     []byte     // record scratch (wmu)
	lookBuf readBuf    // findOld's scratch (wmu)
	bufEst  int64      // estimated bytes of buf (wmu)
	unseal  int        // Adds since buf was last sealed (wmu)
	broken  error      // a failed manifest update: writes refuse (wmu)
	closed  atomic.Bool
	quiesce atomic.Int32 // > 0: running merges abort

	mu   sync.RWMutex // the searchable state; writers also hold wmu
	buf  *Shard
	segs []*segment

	posMu    sync.Mutex
	posLog   uint64
	posOff   int64
	mergeMu  sync.Mutex // one merge at a time
	kick     chan struct{}
	done     chan struct{}
	wg       sync.WaitGroup
	closeMu  sync.Mutex
	finished bool // Close was called (closeMu)
	closeErr error
}

// writable reports why writes are refused, if they are. The caller holds
// wmu.
func (d *Dir) writable(op string) error {
	if d.closed.Load() {
		return &Error{Op: op, Err: ErrClosed}
	}
	return d.broken
}

// commit writes the manifest m. A failure may leave either manifest on
// disk, so the Dir refuses writes from then on (reopen it); searches go
// on over the state in memory.
func (d *Dir) commit(m *manifest) error {
	if err := writeManifest(d.path, m); err != nil {
		d.broken = err
		return err
	}
	return nil
}

var _ Searcher = (*Dir)(nil)

// segment is an open segment of a Dir with its deletions: persisted are
// those recorded in the manifest, pending those made by documents of the
// current log (rebuilt by replaying it, undone by Rewind), deleted their
// union, which queries mask. Written under Dir.wmu and Dir.mu.
type segment struct {
	*segReader
	num          uint64
	file         *os.File
	persisted    *roaring.Bitmap
	pending      *roaring.Bitmap
	deleted      *roaring.Bitmap
	persistedLen int64 // total length of the persisted deletions
	pendingLen   int64
}

func (s *segment) live() uint64 { return s.docs - s.deleted.GetCardinality() }

// OpenDir opens the index in directory path, creating it if needed. It
// replays the log (cutting a torn last record), removes files left over by
// an interrupted flush or merge, and starts the background merge goroutine
// unless MergeFactor is negative. The directory is locked (ErrLocked) while
// open. Cost: proportional to the log (at most LogBytes) and the number of
// segments.
//
// opts may be nil: every field takes its default. The options are copied,
// so the caller may change or reuse them afterwards.
func OpenDir(path string, opts *DirOptions) (*Dir, error) {
	var o DirOptions
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, &Error{Op: "open", Subject: path, Err: err}
	}
	lock, err := lockFile(filepath.Join(path, lockName))
	if err != nil {
		return nil, &Error{Op: "open", Subject: path, Err: err}
	}
	d := &Dir{path: path, opts: o, lock: lock, cache: newCache(o.CacheBytes),
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	man, err := readManifest(path)
	if errors.Is(err, os.ErrNotExist) {
		man, err = d.create()
	}
	if err == nil {
		d.man, d.dirID = man, man.dirID
		err = d.load()
	}
	if err != nil {
		d.closeFiles()
		lock.Close()
		return nil, err
	}
	if o.MergeFactor > 0 {
		d.wg.Add(1)
		go d.mergeLoop()
	}
	return d, nil
}

// create initialises a directory without a manifest: a first log, then the
// manifest. Only an interrupted create leaves files behind (the first log,
// temporary files), so any other segment or log means the manifest was
// lost, and create refuses to touch them.
func (d *Dir) create() (*manifest, error) {
	for _, name := range d.listFiles() {
		if n, _, ok := parseName(name); ok && (n != 1 || strings.HasSuffix(name, ".seg")) {
			return nil, &Error{Op: "open", Subject: d.file(name), Err: fmt.Errorf("%w: index files without a manifest", ErrCorrupt)}
		}
	}
	var id [8]byte
	crand.Read(id[:])
	m := &manifest{dirID: binary.LittleEndian.Uint64(id[:]), next: 2, log: 1}
	d.man = m
	d.removeUnreferenced()
	lw, err := createLog(d.file(logName(1)), m.dirID, 1, false)
	if err != nil {
		return nil, err
	}
	lw.close()
	if err := writeManifest(d.path, m); err != nil {
		return nil, err
	}
	return m, nil
}

func (d *Dir) file(name string) string { return filepath.Join(d.path, name) }

// load builds the in-memory state from d.man: opens the current segments
// with their recorded deletions, replays the log into a new buffer and
// removes unreferenced files. The caller holds wmu and mu, or owns d.
func (d *Dir) load() error {
	d.buf = NewShard(&ShardOptions{Analyzer: d.opts.Analyzer, BM25: d.opts.BM25})
	d.bufEst, d.unseal, d.segs = 0, 0, nil
	maxNum := d.man.log
	for _, m := range d.man.cur {
		s, err := d.openSegment(m.num, m.del)
		if err != nil {
			return err
		}
		d.segs = append(d.segs, s)
		maxNum = max(maxNum, m.num)
	}
	lw, err := openLog(d.file(logName(d.man.log)), d.man.dirID, d.man.log, d.opts.Sync, func(doc Document) error {
		old, err := d.findOld(doc.URL)
		if err != nil {
			return err
		}
		d.apply(doc, old, false, nil)
		return nil
	})
	if err != nil {
		return err
	}
	d.log = lw
	d.setPos(lw.seq, lw.size)
	for _, name := range d.listFiles() {
		if n, _, ok := parseName(name); ok {
			maxNum = max(maxNum, n)
		}
	}
	d.man.next = max(d.man.next, maxNum+1)
	d.removeUnreferenced()
	return nil
}

// openSegment opens segment num with the recorded deletions del.
func (d *Dir) openSegment(num uint64, del *roaring.Bitmap) (*segment, error) {
	path := d.file(segName(num))
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Op: "read", Subject: path, Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &Error{Op: "read", Subject: path, Err: err}
	}
	r, err := openSegReader(f, st.Size(), path, d.ids.Add(1), d.cache)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &segment{segReader: r, num: num, file: f, persisted: del.Clone(), pending: roaring.New()}
	if !del.IsEmpty() && uint64(del.Maximum()) >= r.docs {
		f.Close()
		return nil, r.corrupt("deletions beyond the segment")
	}
	s.deleted = s.persisted.Clone()
	it := del.Iterator()
	for it.HasNext() {
		l, err := r.length(it.Next())
		if err != nil {
			f.Close()
			return nil, err
		}
		s.persistedLen += int64(l)
	}
	return s, nil
}

func (s *segment) close(c *cache) {
	s.file.Close()
	c.drop(s.id)
}

// listFiles returns the names in the directory.
func (d *Dir) listFiles() []string {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// files returns the names of the segments and logs that m needs.
func (m *manifest) files() map[string]bool {
	keep := map[string]bool{logName(m.log): true}
	for _, s := range m.cur {
		keep[segName(s.num)] = true
	}
	if m.hasPrev {
		keep[logName(m.prevLog)] = true
		for _, s := range m.prev {
			keep[segName(s.num)] = true
		}
	}
	return keep
}

// removeUnreferenced deletes the segments and logs that d.man does not
// need, and temporary files: the leftovers of an interrupted flush or
// merge. No merge may be running. Errors are ignored: a file left behind
// is removed by a later call.
func (d *Dir) removeUnreferenced() {
	keep := d.man.files()
	for _, name := range d.listFiles() {
		_, _, ours := parseName(name)
		if strings.HasSuffix(name, ".tmp") || ours && !keep[name] {
			os.Remove(d.file(name))
		}
	}
}

// removeObsolete deletes the files that old needed and d.man does not.
func (d *Dir) removeObsolete(old *manifest) {
	keep := d.man.files()
	for name := range old.files() {
		if !keep[name] {
			os.Remove(d.file(name))
		}
	}
}

func (d *Dir) setPos(seq uint64, off int64) {
	d.posMu.Lock()
	d.posLog, d.posOff = seq, off
	d.posMu.Unlock()
}

// oldDoc is the live older version of a URL being added, in a segment.
type oldDoc struct {
	s   *segment
	id  uint32
	len uint32
}

// findOld looks for a live document with the given URL in the segments,
// newest first. The caller holds wmu (or owns d). Cost: about one read
// per segment.
func (d *Dir) findOld(url string) (oldDoc, error) {
	for i := len(d.segs) - 1; i >= 0; i-- {
		s := d.segs[i]
		var old oldDoc
		err := s.lookupURL(url, &d.lookBuf, func(id uint32) bool {
			if s.deleted.Contains(id) {
				return true
			}
			old = oldDoc{s: s, id: id}
			return false
		})
		if err != nil {
			return oldDoc{}, err
		}
		if old.s != nil {
			l, err := s.length(old.id)
			if err != nil {
				return oldDoc{}, err
			}
			old.len = l
			return old, nil
		}
	}
	return oldDoc{}, nil
}

// Memory model of the buffer, measured on generated pages (see
// BenchmarkDirMemory): per document its entry, URL map entry and strings;
// per posting its id and frequency; per new term its dictionary entry,
// posting list and bitmap.
const (
	estDoc     = 120
	estPosting = 4
	estTerm    = 360
)

// apply adds doc to the buffer and deletes its older version. The caller
// holds wmu (or owns d), and mu when lock is false. p, if not nil, is doc
// analysed beforehand.
func (d *Dir) apply(doc Document, old oldDoc, lock bool, p *PreparedDoc) {
	if lock {
		d.mu.Lock()
	}
	terms := len(d.buf.dict)
	var postings int
	if p != nil {
		_, postings, _ = d.buf.addTF(doc.URL, doc.Title, p.dl, p.tf)
	} else {
		_, postings, _ = d.buf.addCounted(doc)
	}
	newTerms := len(d.buf.dict) - terms
	if old.s != nil {
		old.s.pending.Add(old.id)
		old.s.deleted.Add(old.id)
		old.s.pendingLen += int64(old.len)
	}
	if d.unseal++; d.unseal >= 512 {
		d.buf.seal()
		d.unseal = 0
	}
	if lock {
		d.mu.Unlock()
	}
	d.bufEst += estDoc + int64(len(doc.URL)+len(doc.Title)) + estPosting*int64(postings) + estTerm*int64(newTerms)
}

// Add indexes doc, replacing any earlier document with the same URL. When
// Add returns nil the document is in the log and survives a crash of the
// process. When the buffer is full, Add writes it out as a segment first
// (holding up other Adds, not searches, meanwhile); an error of that
// flush is returned although doc itself was added. Cost: the analysis of
// doc, one write call, one read per segment to find an older version.
func (d *Dir) Add(doc Document) error {
	if doc.URL == "" {
		return &Error{Op: "add", Err: ErrNoURL}
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if err := d.writable("add"); err != nil {
		return err
	}
	d.rec = appendLogRecord(d.rec[:0], doc)
	err := d.addLocked(doc, d.rec, nil)
	if cap(d.rec) > 1<<20 {
		d.rec = nil
	}
	return err
}

// PreparedDoc is a document Prepare analysed and encoded for AddPrepared.
type PreparedDoc struct {
	doc Document
	rec []byte            // the log record
	dl  uint32            // length in terms
	tf  map[string]uint32 // term frequencies
}

// Prepare does the part of Add that needs no lock: the analysis of doc
// and the encoding of its log record, so that callers adding from many
// goroutines analyse in parallel and only AddPrepared takes turns. Safe
// for concurrent use. The PreparedDoc keeps doc's strings.
func (d *Dir) Prepare(doc Document) (*PreparedDoc, error) {
	if doc.URL == "" {
		return nil, &Error{Op: "add", Err: ErrNoURL}
	}
	var c termCounter
	dl := c.count(d.opts.Analyzer, doc)
	return &PreparedDoc{doc: doc, rec: appendLogRecord(nil, doc), dl: dl, tf: c.tf}, nil
}

// AddPrepared is Add for a document Prepare analysed: the same result,
// with only the log write, the lookup of an older version and the
// insertion into the buffer left to do.
func (d *Dir) AddPrepared(p *PreparedDoc) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if err := d.writable("add"); err != nil {
		return err
	}
	return d.addLocked(p.doc, p.rec, p)
}

// addLocked adds doc, whose log record is rec (and analysis p, if not
// nil). The caller holds wmu.
func (d *Dir) addLocked(doc Document, rec []byte, p *PreparedDoc) error {
	old, err := d.findOld(doc.URL)
	if err != nil {
		return err
	}
	if len(rec)-logRecordHead > maxRecord {
		return &Error{Op: "add", Subject: doc.URL, Err: errors.New("document too large")}
	}
	if err := d.log.append(rec); err != nil {
		return err
	}
	d.apply(doc, old, true, p)
	d.setPos(d.log.seq, d.log.size)
	if d.bufEst >= d.opts.BufferBytes || d.log.size >= d.opts.LogBytes ||
		d.opts.BufferDocs > 0 && d.buf.Len() >= d.opts.BufferDocs {
		return d.flushLocked()
	}
	return nil
}

// Flush writes the buffer out as a segment and starts a new log, whether
// or not the buffer is full. Nothing needs it for durability (the log
// already holds the buffer); it bounds the work of the next Open. Cost:
// writing the buffer's postings; Adds wait meanwhile.
func (d *Dir) Flush() error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if err := d.writable("flush"); err != nil {
		return err
	}
	return d.flushLocked()
}

// flushLocked writes the buffer to a new segment, then creates the next
// log, then records both in the manifest, whose previous state becomes the
// current one before this flush: until the next flush, Rewind can still go
// back into the log being retired.
func (d *Dir) flushLocked() error {
	if d.buf.Len() == 0 {
		return nil
	}
	segNum, logNum := d.man.next, d.man.next+1
	d.man.next += 2
	segPath := d.file(segName(segNum))
	if _, err := writeShardSegment(segPath, d.buf); err != nil {
		return err
	}
	fail := func(err error) error {
		os.Remove(segPath)
		os.Remove(d.file(logName(logNum)))
		return err
	}
	s, err := d.openSegment(segNum, roaring.New())
	if err != nil {
		return fail(err)
	}
	lw, err := createLog(d.file(logName(logNum)), d.man.dirID, logNum, d.opts.Sync)
	if err != nil {
		s.close(d.cache)
		return fail(err)
	}
	if err := syncDir(d.path); err != nil {
		s.close(d.cache)
		lw.close()
		return fail(&Error{Op: "write", Subject: d.path, Err: err})
	}
	m := &manifest{dirID: d.man.dirID, next: d.man.next, log: logNum,
		hasPrev: true, prevLog: d.man.log, prev: d.man.cur}
	for _, old := range d.segs {
		del := old.persisted.Clone()
		del.Or(old.pending)
		m.cur = append(m.cur, segMeta{num: old.num, del: del})
	}
	m.cur = append(m.cur, segMeta{num: segNum, del: roaring.New()})
	if err := d.commit(m); err != nil {
		s.close(d.cache)
		lw.close()
		return err
	}
	d.mu.Lock()
	for _, old := range d.segs {
		old.persisted.Or(old.pending)
		old.persistedLen += old.pendingLen
		old.pending, old.pendingLen = roaring.New(), 0
	}
	d.segs = append(d.segs, s)
	d.buf = NewShard(&ShardOptions{Analyzer: d.opts.Analyzer, BM25: d.opts.BM25})
	d.mu.Unlock()
	d.log.close()
	old := d.man
	d.log, d.man = lw, m
	d.bufEst, d.unseal = 0, 0
	d.setPos(lw.seq, lw.size)
	d.removeObsolete(old)
	select {
	case d.kick <- struct{}{}:
	default:
	}
	return nil
}

// Sync flushes the log to stable storage (one fsync), so that every
// document added so far survives power loss, not only the death of the
// process. Adds wait meanwhile.
func (d *Dir) Sync() error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if d.closed.Load() {
		return &Error{Op: "sync", Err: ErrClosed}
	}
	if err := d.log.f.Sync(); err != nil {
		return &Error{Op: "sync", Subject: d.log.path, Err: err}
	}
	return nil
}

// Position token: version 1 | directory id u64 | log number uvarint | log
// offset uvarint | CRC-32C of the preceding bytes u32.
const positionVersion = 1

// Position returns an opaque token for "every document added so far"
// (every Add that returned before the call), to be stored by the caller
// and given to Rewind after a crash. Cost: one small allocation; safe to
// call after every Add.
//
// A position stays valid for Rewind until the second flush after it (a
// flush writes the buffer out as a segment: when the buffer is full, or
// on Flush): positions in the current log and in the one before it can be
// rewound to, older ones cannot. A Rewind to a position invalidates the
// positions taken after it.
func (d *Dir) Position() ([]byte, error) {
	if d.closed.Load() {
		return nil, &Error{Op: "position", Err: ErrClosed}
	}
	d.posMu.Lock()
	p := position{dirID: d.dirID, log: d.posLog, off: d.posOff}
	d.posMu.Unlock()
	return p.append(make([]byte, 0, 32)), nil
}

type position struct {
	dirID, log uint64
	off        int64
}

func (p position) append(b []byte) []byte {
	start := len(b)
	b = append(b, positionVersion)
	b = binary.LittleEndian.AppendUint64(b, p.dirID)
	b = binary.AppendUvarint(b, p.log)
	b = binary.AppendUvarint(b, uint64(p.off))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

func decodePosition(b []byte) (position, error) {
	bad := func(why string) (position, error) {
		return position{}, &Error{Op: "rewind", Err: fmt.Errorf("%w: %s", ErrPosition, why)}
	}
	if len(b) < 1+8+2+4 || b[0] != positionVersion {
		return bad("malformed token")
	}
	if crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return bad("malformed token")
	}
	d := dec{b: b[9 : len(b)-4]}
	p := position{dirID: binary.LittleEndian.Uint64(b[1:]), log: d.uvarint()}
	off := d.uvarint()
	if d.err != nil || len(d.b) != 0 || off < logHeaderSize || off > 1<<62 {
		return bad("malformed token")
	}
	p.off = int64(off)
	return p, nil
}

// Rewind drops every document added after pos (from Position), as if they
// had never been added: documents they replaced come back. It is meant for
// a crawler resuming from its last checkpoint after a crash, called after
// OpenDir and before any Add, but works at any time. pos must be valid
// (see Position): otherwise Rewind returns an error wrapping ErrPosition
// and changes nothing. Cost: a replay of the log up to pos; a running
// merge is abandoned, Adds wait meanwhile, searches too while the state is
// rebuilt.
func (d *Dir) Rewind(pos []byte) error {
	p, err := decodePosition(pos)
	if err != nil {
		return err
	}
	d.quiesce.Add(1)
	d.mergeMu.Lock()
	defer func() {
		d.mergeMu.Unlock()
		d.quiesce.Add(-1)
	}()
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if err := d.writable("rewind"); err != nil {
		return err
	}
	bad := func(why string) error {
		return &Error{Op: "rewind", Err: fmt.Errorf("%w: %s", ErrPosition, why)}
	}
	if p.dirID != d.man.dirID {
		return bad("position of another directory")
	}
	var m *manifest
	switch {
	case p.log == d.man.log:
		if p.off == d.log.size {
			return nil
		}
		if err := d.cutLog(d.log.path, p); err != nil {
			return err
		}
	case d.man.hasPrev && p.log == d.man.prevLog:
		if err := d.cutLog(d.file(logName(p.log)), p); err != nil {
			return err
		}
		m = &manifest{dirID: d.man.dirID, next: d.man.next, log: d.man.prevLog, cur: d.man.prev}
		if err := d.commit(m); err != nil {
			return err
		}
	case p.log < d.man.log:
		return bad("position older than the previous flush")
	default:
		return bad("position beyond the log")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closeFiles()
	if m != nil {
		d.man = m
	}
	if err := d.load(); err != nil {
		d.closeFiles()
		d.buf = NewShard(&ShardOptions{Analyzer: d.opts.Analyzer, BM25: d.opts.BM25})
		d.broken = err
		return err
	}
	return nil
}

// cutLog truncates the log at path to p.off after checking that a record
// ends there.
func (d *Dir) cutLog(path string, p position) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return &Error{Op: "rewind", Subject: path, Err: err}
	}
	defer f.Close()
	end, err := scanLog(f, path, d.man.dirID, p.log, p.off, nil)
	if err != nil {
		return err
	}
	if end != p.off {
		return &Error{Op: "rewind", Subject: path, Err: fmt.Errorf("%w: position beyond the log or between records", ErrPosition)}
	}
	if err := f.Truncate(p.off); err != nil {
		return &Error{Op: "rewind", Subject: path, Err: err}
	}
	if err := f.Sync(); err != nil {
		return &Error{Op: "rewind", Subject: path, Err: err}
	}
	return nil
}

// closeFiles closes the log and the segments.
func (d *Dir) closeFiles() {
	if d.log != nil {
		d.log.close()
		d.log = nil
	}
	for _, s := range d.segs {
		s.close(d.cache)
	}
	d.segs = nil
}

// Close stops background merges (a running one is abandoned), syncs and
// closes the log and releases the directory. It writes no segment: the
// log holds the buffer, which the next Open replays. Searches and Adds
// after Close fail with ErrClosed; Close is idempotent.
func (d *Dir) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.finished {
		return d.closeErr
	}
	d.finished = true
	d.quiesce.Add(1)
	close(d.done)
	d.wg.Wait()
	d.mergeMu.Lock()
	defer d.mergeMu.Unlock()
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed.Store(true)
	if d.log != nil {
		d.closeErr = d.log.close()
		d.log = nil
	}
	d.closeFiles()
	if err := d.lock.Close(); d.closeErr == nil {
		d.closeErr = err
	}
	return d.closeErr
}

// Analyzer returns the analyzer, for parsing queries.
func (d *Dir) Analyzer() *Analyzer { return d.opts.Analyzer }

// DirInfo describes the state of a Dir.
type DirInfo struct {
	Docs        int64 // live documents
	Buffered    int   // live documents in the buffer (and the log)
	BufferBytes int64 // estimated memory of the buffer
	LogBytes    int64 // size of the current log
	Segments    int
	Deleted     int64 // deleted documents still in segments, until merged away
	CacheBytes  int64 // bytes held by the page and posting list cache
}

// Info returns the current state. Cost: O(segments).
func (d *Dir) Info() DirInfo {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.RLock()
	defer d.mu.RUnlock()
	in := DirInfo{Buffered: d.buf.Len(), BufferBytes: d.bufEst, Segments: len(d.segs), CacheBytes: d.cache.size()}
	if d.log != nil {
		in.LogBytes = d.log.size
	}
	in.Docs = int64(in.Buffered)
	for _, s := range d.segs {
		in.Docs += int64(s.live())
		in.Deleted += int64(s.deleted.GetCardinality())
	}
	return in
}

// Stats reports the live statistics of the buffer and all segments for
// terms (nil means every term, which reads every segment's dictionary and,
// for segments with deletions, every posting list). Cost per term: one
// dictionary lookup per segment, plus a posting list read where a segment
// has deletions.
func (d *Dir) Stats(ctx context.Context, terms []string) (*Stats, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed.Load() {
		return nil, &Error{Op: "stats", Err: ErrClosed}
	}
	return d.statsLocked(ctx, terms)
}

func (d *Dir) statsLocked(ctx context.Context, terms []string) (*Stats, error) {
	st, err := d.buf.Stats(ctx, terms)
	if err != nil {
		return nil, err
	}
	for _, s := range d.segs {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Op: "stats", Err: err}
		}
		if terms == nil {
			err = s.addAllStats(st)
		} else {
			var ents []termEntry
			if ents, err = s.lookup(terms); err == nil {
				err = s.addStats(st, ents)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}

// lookup returns the dictionary entries of terms, df 0 for absent ones.
func (s *segment) lookup(terms []string) ([]termEntry, error) {
	ents := make([]termEntry, len(terms))
	for i, t := range terms {
		e, ok, err := s.lookupTerm(t)
		if err != nil {
			return nil, err
		}
		if ok {
			ents[i] = e
		}
	}
	return ents, nil
}

// liveDF returns the number of live documents of the entry's list.
func (s *segment) liveDF(e termEntry, cached bool) (int64, error) {
	if s.deleted.IsEmpty() {
		return int64(e.df), nil
	}
	pl, err := s.postings(e, cached)
	if err != nil {
		return 0, err
	}
	return pl.liveDF(s.deleted), nil
}

// addStats adds the segment's live statistics for the terms of ents
// (from lookup) to st.
func (s *segment) addStats(st *Stats, ents []termEntry) error {
	st.Docs += int64(s.live())
	st.Length += int64(s.totalLen) - s.persistedLen - s.pendingLen
	for _, e := range ents {
		if e.df == 0 {
			continue
		}
		n, err := s.liveDF(e, true)
		if err != nil {
			return err
		}
		if n > 0 {
			st.DF[e.term] += n
		}
	}
	return nil
}

// addAllStats adds the segment's live statistics for every term to st,
// reading the dictionary around the cache.
func (s *segment) addAllStats(st *Stats) error {
	st.Docs += int64(s.live())
	st.Length += int64(s.totalLen) - s.persistedLen - s.pendingLen
	it := s.termIter()
	for it.next() {
		n, err := s.liveDF(it.e, false)
		if err != nil {
			return err
		}
		if n > 0 {
			st.DF[it.e.term] += n
		}
	}
	return it.err
}

// Search returns the top q.K live documents for q over the buffer and the
// segments, scored with global (nil means the Dir's own statistics, which
// equal those of one Shard holding the same documents). Each segment is
// searched with WAND like a Shard, reading its dictionary blocks, posting
// lists and document lengths through the cache, largest segment first and
// each with the k-th score found so far as a floor for its pruning. Cost:
// per segment and term, one dictionary block read and the posting list
// (both usually cached).
func (d *Dir) Search(ctx context.Context, q Query, global *Stats) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "search", Err: err}
	}
	q = q.Normalize()
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed.Load() {
		return nil, &Error{Op: "search", Err: ErrClosed}
	}
	segs := slices.Clone(d.segs)
	slices.SortStableFunc(segs, func(a, b *segment) int { return cmp.Compare(b.live(), a.live()) })
	ents := make([][]termEntry, len(segs))
	for i, s := range segs {
		var err error
		if ents[i], err = s.lookup(q.Terms); err != nil {
			return nil, &Error{Op: "search", Subject: s.name, Err: err}
		}
	}
	if global == nil {
		var err error
		if global, err = d.buf.Stats(ctx, q.Terms); err != nil {
			return nil, err
		}
		for i, s := range segs {
			if err := s.addStats(global, ents[i]); err != nil {
				return nil, &Error{Op: "search", Subject: s.name, Err: err}
			}
		}
	}
	res, err := d.buf.Search(ctx, q, global)
	if err != nil {
		return nil, err
	}
	hits := res.Hits
	for i, s := range segs {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Op: "search", Err: err}
		}
		floor, floored := 0.0, len(hits) >= q.K
		if floored {
			floor = hits[q.K-1].Score
		}
		more, n, err := s.search(q, ents[i], global, d.opts.BM25, floor, floored)
		if err != nil {
			return nil, &Error{Op: "search", Subject: s.name, Err: err}
		}
		hits = MergeHits(q.K, hits, more)
		res.Postings += n
	}
	res.Hits = hits
	return res, nil
}

// search runs q (normalised), whose terms' entries are ents, on the
// segment; see engine.floor.
func (s *segment) search(q Query, ents []termEntry, global *Stats, p BM25, floor float64, floored bool) ([]Hit, int64, error) {
	avgdl := global.avgLen()
	qt := make([]qterm, len(q.Terms))
	for i, t := range q.Terms {
		qt[i] = qterm{idx: i, idf: IDF(global.Docs, global.DF[t])}
		if ents[i].df == 0 {
			continue
		}
		var err error
		if qt[i].pl, err = s.postings(ents[i], true); err != nil {
			return nil, 0, err
		}
		qt[i].ub = qt[i].pl.upperBound(p, qt[i].idf, avgdl)
	}
	sd := newSegDocs(s.segReader)
	e := engine{p: p, avgdl: avgdl, seg: sd, deleted: s.deleted, floor: floor, floored: floored}
	hits, n := e.run(qt, len(q.Terms), q.Op, q.K)
	if sd.err != nil {
		return nil, 0, sd.err
	}
	return hits, n, nil
}

// Merge runs the merge policy until no merge qualifies: a segment with
// deletions on half its documents is rewritten without them, and
// MergeFactor segments of the lowest size tier holding that many are
// merged into one (at least 2 when MergeFactor is negative). The merged
// segment replaces its inputs atomically. Adds and searches go on
// meanwhile; Close and Rewind interrupt a merge, which then returns an
// error. Cost: reading and writing the merged segments.
func (d *Dir) Merge(ctx context.Context) error {
	factor := max(d.opts.MergeFactor, 2)
	for {
		merged, err := d.mergeOnce(ctx, func(sizes, docs []uint64) []int { return pickMerge(sizes, docs, factor) })
		if err != nil || !merged {
			return err
		}
	}
}

// Optimize merges all segments into one without deletions (the buffer
// stays in memory: Flush first to include it).
func (d *Dir) Optimize(ctx context.Context) error {
	_, err := d.mergeOnce(ctx, func(sizes, docs []uint64) []int {
		if len(sizes) == 1 && sizes[0] == docs[0] || len(sizes) == 0 {
			return nil
		}
		all := make([]int, len(sizes))
		for i := range all {
			all[i] = i
		}
		return all
	})
	return err
}

func (d *Dir) mergeLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.done:
			return
		case <-d.kick:
		}
		if err := d.Merge(context.Background()); err != nil && !errors.Is(err, errMergeAborted) && d.opts.OnMergeError != nil {
			d.opts.OnMergeError(err)
		}
	}
}

// mergeOnce merges the segments pick chooses (given live and stored
// document counts) and reports whether it did.
func (d *Dir) mergeOnce(ctx context.Context, pick func(sizes, docs []uint64) []int) (bool, error) {
	d.mergeMu.Lock()
	defer d.mergeMu.Unlock()
	d.wmu.Lock()
	err := d.writable("merge")
	d.wmu.Unlock()
	if err != nil {
		return false, err
	}
	d.mu.RLock()
	sizes, docs := make([]uint64, len(d.segs)), make([]uint64, len(d.segs))
	for i, s := range d.segs {
		sizes[i], docs[i] = s.live(), s.docs
	}
	chosen := pick(sizes, docs)
	inputs := make([]*segment, len(chosen))
	ins := make([]mergeInput, len(chosen))
	for i, k := range chosen {
		inputs[i] = d.segs[k]
		ins[i] = mergeInput{r: d.segs[k].segReader, del: d.segs[k].persisted.Clone()}
	}
	d.mu.RUnlock()
	if len(inputs) == 0 {
		return false, nil
	}
	d.wmu.Lock()
	num := d.man.next
	d.man.next++
	d.wmu.Unlock()
	path := d.file(segName(num))
	stop := func() error {
		if d.quiesce.Load() > 0 {
			return &Error{Op: "merge", Err: errMergeAborted}
		}
		if err := ctx.Err(); err != nil {
			return &Error{Op: "merge", Err: err}
		}
		return nil
	}
	if _, err := mergeSegments(path, ins, stop); err != nil {
		return false, err
	}
	if err := syncDir(d.path); err != nil {
		os.Remove(path)
		return false, &Error{Op: "merge", Subject: d.path, Err: err}
	}
	if err := d.install(num, inputs, ins); err != nil {
		os.Remove(path)
		return false, err
	}
	return true, nil
}

// install replaces the merge inputs by segment num in the manifest and in
// memory. Deletions made since the merge started (recorded by a flush, or
// pending in the current log) move to the new segment.
func (d *Dir) install(num uint64, inputs []*segment, ins []mergeInput) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if d.quiesce.Load() > 0 {
		return &Error{Op: "merge", Err: errMergeAborted}
	}
	if err := d.writable("merge"); err != nil {
		return err
	}
	s, err := d.openSegment(num, roaring.New())
	if err != nil {
		return err
	}
	for j, in := range inputs {
		later := roaring.AndNot(in.persisted, ins[j].del)
		it := later.Iterator()
		for it.HasNext() {
			s.persisted.Add(ins[j].newID(it.Next()))
		}
		it = in.pending.Iterator()
		for it.HasNext() {
			s.pending.Add(ins[j].newID(it.Next()))
		}
	}
	s.deleted = roaring.Or(s.persisted, s.pending)
	for _, b := range []*roaring.Bitmap{s.persisted, s.pending} {
		total := int64(0)
		it := b.Iterator()
		for it.HasNext() {
			l, err := s.length(it.Next())
			if err != nil {
				s.close(d.cache)
				return err
			}
			total += int64(l)
		}
		if b == s.persisted {
			s.persistedLen = total
		} else {
			s.pendingLen = total
		}
	}
	replaced := map[*segment]bool{}
	for _, in := range inputs {
		replaced[in] = true
	}
	// d.man.cur lists the segments of d.segs, in the same order.
	m := *d.man
	m.cur = nil
	var segs []*segment
	for i, old := range d.segs {
		switch {
		case old == inputs[0]:
			segs = append(segs, s)
			m.cur = append(m.cur, segMeta{num: num, del: s.persisted.Clone()})
		case !replaced[old]:
			segs = append(segs, old)
			m.cur = append(m.cur, d.man.cur[i])
		}
	}
	if err := d.commit(&m); err != nil {
		s.close(d.cache)
		return err
	}
	d.mu.Lock()
	d.segs = segs
	d.mu.Unlock()
	old := d.man
	d.man = &m
	for _, in := range inputs {
		in.close(d.cache)
	}
	d.removeObsolete(old)
	return nil
}
