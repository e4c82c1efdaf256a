package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"
)

// Segment file format, version 1. The file is paged (see pageData): the
// offsets below are logical offsets into the stream of page data, and
// every page carries a CRC-32C. Integers are little-endian or uvarints.
//
//	header   "CKSG" | version u16 | flags u16 (0) | page size u32 | 0 u32
//	lens     u32 per document: its length in terms (the BM25 |d|)
//	offs     u64 per document and one more: where its stored record starts
//	         in stored, and the end of the last
//	stored   per document: url, title (uvarint length + bytes each)
//	hash     per document (u64 xxhash of its URL, u32 id), sorted
//	buckets  u32 per bucket and one more: the index in hash of the first
//	         entry whose hash has the bucket's top bucketBits bits
//	terms    posting lists and, after the lists of each group of terms,
//	         the dictionary block of that group
//	dictidx  u64 per block: its offset
//	footer   the last 128 bytes: docs, total length, terms, the offsets of
//	         lens, offs, stored, hash, buckets, terms and dictidx, the
//	         number of blocks, bucketBits, the end of dictidx, then "CKSGEND"
//
// A posting list is: count n, the byte length of the ids then the ids as
// a roaring bitmap (portable format), n frequency bytes (255 means the
// frequency is in the overflow list), the overflow list (count, then
// position delta and frequency per entry), and the Pareto frontier of its
// (frequency, document length) pairs for the pruning bounds (count, then
// pairs). A dictionary block is its payload length u32, then the number of
// entries and per entry: bytes shared with the previous term, the rest of
// the term, document frequency, offset and length of the posting list. A
// block that fits in a page does not straddle two: zeros pad the gap, so
// that a lookup reads each block it visits from one cached page.
//
// A segment is immutable and holds only live documents when written; ids
// are dense, in the order the documents were added. Nothing of it is held
// in memory beyond the footer: queries read the dictionary blocks, posting
// lists, lengths and records they need through the Dir's page cache.
const (
	segMagic      = "CKSG"
	segVersion    = 1
	segHeaderSize = 16
	segFooterSize = 128
	segEndMagic   = "CKSGEND\x00"
	// blockTarget is the payload size at which a dictionary block is
	// closed; maxBlock bounds a block read.
	blockTarget = 1024
	maxBlock    = 1 << 20
	// bucketLoad is the mean number of hash entries per bucket.
	bucketLoad = 64
)

// segFooter is the decoded footer.
type segFooter struct {
	docs, totalLen, terms                                      uint64
	lensOff, offsOff, storedOff, hashOff, bucketsOff, termsOff int64
	dictIdxOff, blocks                                         int64
	bucketBits                                                 uint64
	end                                                        int64
}

func (ft *segFooter) encode() []byte {
	b := make([]byte, 0, segFooterSize)
	for _, v := range []uint64{ft.docs, ft.totalLen, ft.terms,
		uint64(ft.lensOff), uint64(ft.offsOff), uint64(ft.storedOff), uint64(ft.hashOff),
		uint64(ft.bucketsOff), uint64(ft.termsOff), uint64(ft.dictIdxOff), uint64(ft.blocks),
		ft.bucketBits, uint64(ft.end)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = append(b, make([]byte, segFooterSize-len(segEndMagic)-len(b))...)
	return append(b, segEndMagic...)
}

func decodeFooter(b []byte) segFooter {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	i := func(k int) int64 { return int64(min(u(k), math.MaxInt64)) }
	return segFooter{docs: u(0), totalLen: u(1), terms: u(2),
		lensOff: i(3), offsOff: i(4), storedOff: i(5), hashOff: i(6), bucketsOff: i(7),
		termsOff: i(8), dictIdxOff: i(9), blocks: i(10), bucketBits: u(11), end: i(12)}
}

// segReader reads one segment file. It is immutable and safe for
// concurrent use; it holds the footer (a few hundred bytes) and reads
// everything else on demand.
type segReader struct {
	pagedFile
	segFooter
}

// openSegReader checks the header and footer of the segment in ra (size
// bytes) and returns its reader; name is used in errors.
func openSegReader(ra io.ReaderAt, size int64, name string, id uint64, c *cache) (*segReader, error) {
	r := &segReader{pagedFile: pagedFile{ra: ra, name: name, pages: size / pageSize, id: id, cache: c}}
	if size%pageSize != 0 || size == 0 {
		return nil, r.corrupt("size %d is not a positive multiple of the page size", size)
	}
	hdr, err := r.read(0, segHeaderSize, false)
	if err != nil {
		return nil, err
	}
	if string(hdr[:4]) != segMagic {
		return nil, r.corrupt("bad magic")
	}
	if v := binary.LittleEndian.Uint16(hdr[4:]); v != segVersion {
		return nil, &Error{Op: "read", Subject: name, Err: fmt.Errorf("%w: segment version %d", ErrVersion, v)}
	}
	if binary.LittleEndian.Uint16(hdr[6:]) != 0 || binary.LittleEndian.Uint32(hdr[8:]) != pageSize || binary.LittleEndian.Uint32(hdr[12:]) != 0 {
		return nil, r.corrupt("bad header")
	}
	fb, err := r.read(r.size()-segFooterSize, segFooterSize, false)
	if err != nil {
		return nil, err
	}
	if string(fb[segFooterSize-len(segEndMagic):]) != segEndMagic {
		return nil, r.corrupt("bad footer")
	}
	r.segFooter = decodeFooter(fb)
	if err := r.check(); err != nil {
		return nil, err
	}
	return r, nil
}

// check validates the footer's layout against the file.
func (r *segReader) check() error {
	ft := &r.segFooter
	n := int64(ft.docs)
	ok := ft.docs < math.MaxUint32 && ft.bucketBits <= 26 &&
		ft.lensOff == segHeaderSize &&
		ft.offsOff == align8(ft.lensOff+4*n) &&
		ft.storedOff == ft.offsOff+8*(n+1) &&
		ft.storedOff <= ft.hashOff && ft.hashOff%8 == 0 &&
		ft.bucketsOff == ft.hashOff+12*n &&
		ft.termsOff == align8(ft.bucketsOff+4*((int64(1)<<ft.bucketBits)+1)) &&
		ft.termsOff <= ft.dictIdxOff && ft.dictIdxOff%8 == 0 &&
		ft.blocks >= 0 && ft.blocks <= (r.size()-ft.dictIdxOff)/8 &&
		ft.end == ft.dictIdxOff+8*ft.blocks && ft.end <= r.size()-segFooterSize &&
		(ft.terms == 0) == (ft.blocks == 0) && ft.terms >= uint64(ft.blocks) &&
		ft.terms <= uint64(ft.dictIdxOff-ft.termsOff)
	if !ok {
		return r.corrupt("inconsistent footer")
	}
	return nil
}

func align8(v int64) int64 { return (v + 7) &^ 7 }

// length returns the length of document id (< docs).
func (r *segReader) length(id uint32) (uint32, error) {
	if uint64(id) >= r.docs {
		return 0, r.corrupt("document %d out of range", id)
	}
	b, err := r.read(r.lensOff+4*int64(id), 4, true)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// recordSpan returns where the stored record of document id lies.
func (r *segReader) recordSpan(id uint32, cached bool) (off, n int64, err error) {
	if uint64(id) >= r.docs {
		return 0, 0, r.corrupt("document %d out of range", id)
	}
	b, err := r.read(r.offsOff+8*int64(id), 16, cached)
	if err != nil {
		return 0, 0, err
	}
	lo, hi := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	if lo > hi || hi > uint64(r.hashOff-r.storedOff) {
		return 0, 0, r.corrupt("document %d: bad record offsets", id)
	}
	return r.storedOff + int64(lo), int64(hi - lo), nil
}

// fields returns the URL and title of document id.
func (r *segReader) fields(id uint32) (url, title string, err error) {
	off, n, err := r.recordSpan(id, true)
	if err != nil {
		return "", "", err
	}
	b, err := r.read(off, n, true)
	if err != nil {
		return "", "", err
	}
	url, title, ok := decodeRecord(b)
	if !ok {
		return "", "", r.corrupt("document %d: bad record", id)
	}
	return url, title, nil
}

// decodeRecord decodes a stored record, which must fill b exactly.
func decodeRecord(b []byte) (url, title string, ok bool) {
	d := dec{b: b}
	url, title = d.str(), d.str()
	return url, title, d.err == nil && len(d.b) == 0 && url != ""
}

func appendRecord(b []byte, url, title string) []byte {
	b = binary.AppendUvarint(b, uint64(len(url)))
	b = append(b, url...)
	b = binary.AppendUvarint(b, uint64(len(title)))
	return append(b, title...)
}

func recordLen(url, title string) int {
	return uvarintLen(uint64(len(url))) + len(url) + uvarintLen(uint64(len(title))) + len(title)
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// bucket returns the hash bucket of h.
func (r *segReader) bucket(h uint64) int64 {
	return int64(h >> (64 - r.bucketBits)) // a shift by 64 gives 0
}

// lookupURL calls fn with the id of every document of the segment whose
// URL is url (live or not: the caller knows the deletions), until fn
// returns false. Cost: a cached read of the bucket directory, one read of
// the bucket (~64 entries, around the cache: lookups are random) and one
// record read per hash match.
func (r *segReader) lookupURL(url string, rb *readBuf, fn func(id uint32) bool) error {
	if r.docs == 0 {
		return nil
	}
	h := xxhash.Sum64String(url)
	b, err := r.read(r.bucketsOff+4*r.bucket(h), 8, true)
	if err != nil {
		return err
	}
	lo, hi := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if lo > hi || uint64(hi) > r.docs {
		return r.corrupt("bad hash bucket")
	}
	ents, err := r.readUncached(rb, r.hashOff+12*int64(lo), 12*int64(hi-lo))
	if err != nil {
		return err
	}
	for ; len(ents) >= 12; ents = ents[12:] {
		if binary.LittleEndian.Uint64(ents) != h {
			continue
		}
		id := binary.LittleEndian.Uint32(ents[8:])
		u, _, err := r.fields(id)
		if err != nil {
			return err
		}
		if u == url && !fn(id) {
			return nil
		}
	}
	return nil
}

// termEntry is a dictionary entry: a term, its document frequency (deleted
// documents included) and where its posting list lies.
type termEntry struct {
	term   string
	df     uint64
	off, n int64
}

// block reads dictionary block i (its offset from dictidx) and returns its
// payload, or its first prefix bytes if prefix > 0. It reads through the
// cache, or around it into rb if rb is not nil.
func (r *segReader) block(i int64, prefix int64, rb *readBuf) ([]byte, error) {
	read := func(off, n int64) ([]byte, error) {
		if rb != nil {
			return r.readUncached(rb, off, n)
		}
		return r.read(off, n, true)
	}
	b, err := read(r.dictIdxOff+8*i, 8)
	if err != nil {
		return nil, err
	}
	off := int64(min(binary.LittleEndian.Uint64(b), math.MaxInt64))
	if off < r.termsOff || off > r.dictIdxOff-4 {
		return nil, r.corrupt("dictionary block %d: bad offset", i)
	}
	b, err = read(off, 4)
	if err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(b))
	if n > maxBlock || n > r.dictIdxOff-off-4 {
		return nil, r.corrupt("dictionary block %d: bad length", i)
	}
	if prefix > 0 {
		n = min(n, prefix)
	}
	return read(off+4, n)
}

// firstTerm returns the first term of block i, decoded into buf.
func (r *segReader) firstTerm(i int64, buf []byte) ([]byte, error) {
	// The prefix holds the first entry unless its term is long.
	b, err := r.block(i, 128, nil)
	if err != nil {
		return nil, err
	}
	it := r.blockIter(b)
	it.term = buf[:0]
	if _, ok := it.next(); ok {
		return it.term, nil
	}
	if b, err = r.block(i, 0, nil); err != nil {
		return nil, err
	}
	it = r.blockIter(b)
	it.term = buf[:0]
	if _, ok := it.next(); !ok {
		return nil, it.err
	}
	return it.term, nil
}

// blockIter decodes the entries of a dictionary block in order, checking
// that terms ascend.
type blockIter struct {
	r    *segReader
	d    dec
	left uint64
	n    int
	term []byte // the current entry's term
	prev []byte
	err  error
}

func (r *segReader) blockIter(payload []byte) blockIter {
	it := blockIter{r: r, d: dec{b: payload}}
	it.left = it.d.uvarint()
	if it.d.err != nil || it.left == 0 || it.left > maxBlock {
		it.err = r.corrupt("bad dictionary block")
		it.left = 0
	}
	return it
}

// next decodes the following entry; its term, not set in the entry to
// spare an allocation, is it.term.
func (it *blockIter) next() (termEntry, bool) {
	if it.left == 0 || it.err != nil {
		return termEntry{}, false
	}
	it.left--
	d := &it.d
	shared := d.uvarint()
	suffix := d.uvarint()
	if d.err != nil || shared > uint64(len(it.term)) || suffix > uint64(len(d.b)) || shared+suffix == 0 {
		it.err = it.r.corrupt("bad dictionary entry")
		return termEntry{}, false
	}
	it.prev = append(it.prev[:0], it.term...)
	it.term = append(it.term[:shared], d.b[:suffix]...)
	d.b = d.b[suffix:]
	e := termEntry{df: d.uvarint(), off: int64(min(d.uvarint(), math.MaxInt64)), n: int64(min(d.uvarint(), math.MaxInt64))}
	if d.err != nil || e.df == 0 || e.df > it.r.docs || e.off < it.r.termsOff || e.n <= 0 || e.off > it.r.dictIdxOff-e.n {
		it.err = it.r.corrupt("bad dictionary entry")
		return termEntry{}, false
	}
	if !utf8.Valid(it.term) || it.n > 0 && bytes.Compare(it.term, it.prev) <= 0 {
		it.err = it.r.corrupt("bad or unordered term %q", string(it.term))
		return termEntry{}, false
	}
	it.n++
	return e, true
}

// fence holds the first term of every dictionary block of a segment, kept
// in the cache: a lookup binary-searches it in memory, then reads one
// block.
type fence struct {
	terms string   // the first terms, concatenated
	ends  []uint32 // where each one ends in terms
}

func (f *fence) term(i int) string {
	start := uint32(0)
	if i > 0 {
		start = f.ends[i-1]
	}
	return f.terms[start:f.ends[i]]
}

// fenceCost estimates the cache bytes of the fence of a segment with the
// given number of blocks.
func fenceCost(blocks int64) int64 { return 24*blocks + 64 }

// fence returns the segment's fence from the cache or builds it, reading
// the start of every block (once per segment while it stays cached).
func (r *segReader) fence() (*fence, error) {
	k := cacheKey{file: r.id, kind: cacheFence}
	if v, ok := r.cache.get(k); ok {
		return v.(*fence), nil
	}
	var buf []byte
	var tbuf [96]byte
	f := &fence{ends: make([]uint32, 0, r.blocks)}
	prev := 0 // where the previous first term starts in buf
	for i := range r.blocks {
		t, err := r.firstTerm(i, tbuf[:0])
		if err != nil {
			return nil, err
		}
		if uint64(len(buf))+uint64(len(t)) > math.MaxUint32 || i > 0 && string(t) <= string(buf[prev:]) {
			return nil, r.corrupt("dictionary blocks out of order")
		}
		prev = len(buf)
		buf = append(buf, t...)
		f.ends = append(f.ends, uint32(len(buf)))
	}
	f.terms = string(buf)
	r.cache.put(k, f, fenceCost(r.blocks)+int64(len(buf)))
	return f, nil
}

// findBlock returns the block where term would be: the last whose first
// term is ≤ term (or 0). It uses the fence when the cache can hold it, and
// otherwise binary-searches the blocks on disk (O(log blocks) reads).
func (r *segReader) findBlock(term string) (int64, error) {
	if r.cache.fits(fenceCost(r.blocks)) {
		f, err := r.fence()
		if err != nil {
			return 0, err
		}
		lo, hi := 0, len(f.ends)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if f.term(mid) <= term {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return int64(lo), nil
	}
	var tbuf [96]byte
	lo, hi := int64(0), r.blocks-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		first, err := r.firstTerm(mid, tbuf[:0])
		if err != nil {
			return 0, err
		}
		if string(first) <= term {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}

// lookupTerm finds term in the dictionary: the block from findBlock, then
// a scan of it. The entry's term is term itself.
func (r *segReader) lookupTerm(term string) (termEntry, bool, error) {
	if r.blocks == 0 {
		return termEntry{}, false, nil
	}
	lo, err := r.findBlock(term)
	if err != nil {
		return termEntry{}, false, err
	}
	b, err := r.block(lo, 0, nil)
	if err != nil {
		return termEntry{}, false, err
	}
	var tbuf, pbuf [96]byte // terms are short; longer ones allocate
	it := r.blockIter(b)
	it.term, it.prev = tbuf[:0], pbuf[:0]
	for {
		e, ok := it.next()
		if !ok {
			return termEntry{}, false, it.err
		}
		if string(it.term) >= term { // comparisons convert without copying
			e.term = term
			return e, string(it.term) == term, nil
		}
	}
}

// postings returns the posting list of e, decoded and checked, from the
// cache when possible. The list is shared: it must not be modified.
func (r *segReader) postings(e termEntry, cached bool) (*postingList, error) {
	k := cacheKey{file: r.id, kind: cachePostings, off: e.off}
	if cached {
		if v, ok := r.cache.get(k); ok {
			return v.(*postingList), nil
		}
	}
	b, err := r.read(e.off, e.n, cached)
	if err != nil {
		return nil, err
	}
	pl, err := decodePostings(b, r.docs)
	if err != nil {
		return nil, r.corrupt("posting list of %q: %v", e.term, err)
	}
	if uint64(pl.count()) != e.df {
		return nil, r.corrupt("posting list of %q: %d postings, dictionary says %d", e.term, pl.count(), e.df)
	}
	if cached {
		// The bitmap is a copy; the frequencies alias the read.
		r.cache.put(k, pl, 2*e.n+256)
	}
	return pl, nil
}

// appendPostings encodes a posting list (sealed, ids < 2^32) in the
// segment format.
func appendPostings(b []byte, pl *postingList, scratch *bytes.Buffer) []byte {
	n := pl.count()
	b = binary.AppendUvarint(b, uint64(n))
	scratch.Reset()
	pl.docs.WriteTo(scratch)
	b = binary.AppendUvarint(b, uint64(scratch.Len()))
	b = append(b, scratch.Bytes()...)
	b = append(b, pl.freqs...)
	b = binary.AppendUvarint(b, uint64(len(pl.big)))
	if len(pl.big) > 0 {
		prev := 0
		for i, f := range pl.freqs {
			if f == 255 {
				b = binary.AppendUvarint(b, uint64(i-prev))
				b = binary.AppendUvarint(b, uint64(pl.big[i]))
				prev = i
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(pl.front)))
	for _, p := range pl.front {
		b = binary.AppendUvarint(b, uint64(p.tf))
		b = binary.AppendUvarint(b, uint64(p.len))
	}
	return b
}

// decodePostings decodes a posting list whose ids must be < docs. The
// frequencies alias b.
func decodePostings(b []byte, docs uint64) (*postingList, error) {
	d := dec{b: b}
	n := d.uvarint()
	bmLen := d.uvarint()
	if d.err != nil || n == 0 || n > docs || bmLen > uint64(len(d.b)) {
		return nil, errors.New("bad header")
	}
	bm := d.b[:bmLen]
	d.b = d.b[bmLen:]
	card, err := checkRoaring(bm)
	if err != nil {
		return nil, err
	}
	if card != n {
		return nil, errors.New("id count mismatch")
	}
	pl := &postingList{docs: roaring.New()}
	if _, err := pl.docs.ReadFrom(bytes.NewReader(bm)); err != nil {
		return nil, err
	}
	if uint64(pl.docs.Maximum()) >= docs {
		return nil, errors.New("posting id out of range")
	}
	if uint64(len(d.b)) < n {
		return nil, errShort
	}
	pl.freqs = d.b[:n:n]
	d.b = d.b[n:]
	over := 0
	for _, f := range pl.freqs {
		switch f {
		case 0:
			return nil, errors.New("zero term frequency")
		case 255:
			over++
		}
	}
	nbig := d.uvarint()
	if d.err != nil || nbig != uint64(over) {
		return nil, errors.New("bad overflow list")
	}
	if over > 0 {
		pl.big = make(map[int]uint32, over)
		pos := uint64(0)
		for i := 0; i < over; i++ {
			delta, f := d.uvarint(), d.uvarint()
			pos += delta
			if d.err != nil || (i > 0 && delta == 0) || pos >= n || pl.freqs[pos] != 255 || f < 255 || f > math.MaxUint32 {
				return nil, errors.New("bad overflow entry")
			}
			pl.big[int(pos)] = uint32(f)
		}
	}
	nf := d.count(2)
	if d.err != nil || nf == 0 {
		return nil, errors.New("bad frontier")
	}
	pl.front = make([]tfLen, nf)
	for i := range pl.front {
		tf, l := d.uvarint(), d.uvarint()
		if d.err != nil || tf == 0 || tf > math.MaxUint32 || l > math.MaxUint32 {
			return nil, errors.New("bad frontier")
		}
		pl.front[i] = tfLen{uint32(tf), uint32(l)}
	}
	if len(d.b) != 0 {
		return nil, errors.New("trailing bytes")
	}
	return pl, nil
}

// Roaring portable format (github.com/RoaringBitmap/RoaringFormatSpec).
const (
	roaringCookieNoRuns = 12346
	roaringCookie       = 12347
)

var errBadRoaring = errors.New("bad roaring bitmap")

// checkRoaring validates a serialized roaring bitmap completely — sorted
// keys, sorted arrays, bitmap cardinalities, sorted disjoint runs, exact
// size — in O(len(b)), so that the library never reads or iterates a
// malformed one, and returns its cardinality.
func checkRoaring(b []byte) (uint64, error) {
	bad := errBadRoaring
	if len(b) < 4 {
		return 0, bad
	}
	cookie := binary.LittleEndian.Uint32(b)
	b = b[4:]
	var size int
	var runFlags []byte
	switch {
	case cookie&0xFFFF == roaringCookie:
		size = int(cookie>>16) + 1
		k := (size + 7) / 8
		if len(b) < k {
			return 0, bad
		}
		runFlags, b = b[:k], b[k:]
	case cookie == roaringCookieNoRuns:
		if len(b) < 4 {
			return 0, bad
		}
		size = int(binary.LittleEndian.Uint32(b))
		b = b[4:]
	default:
		return 0, bad
	}
	if size > 1<<16 || len(b) < 4*size {
		return 0, bad
	}
	desc := b[:4*size]
	b = b[4*size:]
	if runFlags == nil || size >= 4 { // offset header
		if len(b) < 4*size {
			return 0, bad
		}
		b = b[4*size:]
	}
	var total uint64
	for i := 0; i < size; i++ {
		key := binary.LittleEndian.Uint16(desc[4*i:])
		card := int(binary.LittleEndian.Uint16(desc[4*i+2:])) + 1
		if i > 0 && key <= binary.LittleEndian.Uint16(desc[4*i-4:]) {
			return 0, bad
		}
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			if len(b) < 2 {
				return 0, bad
			}
			nr := int(binary.LittleEndian.Uint16(b))
			b = b[2:]
			if nr == 0 || len(b) < 4*nr {
				return 0, bad
			}
			next := 0 // smallest value the next run may start at
			for j := 0; j < nr; j++ {
				start := int(binary.LittleEndian.Uint16(b[4*j:]))
				l := int(binary.LittleEndian.Uint16(b[4*j+2:]))
				if start < next || start+l > 0xFFFF {
					return 0, bad
				}
				next = start + l + 2
				total += uint64(l) + 1
			}
			b = b[4*nr:]
		case card > 4096:
			if len(b) < 8192 {
				return 0, bad
			}
			pop := 0
			for j := 0; j < 8192; j += 8 {
				pop += bits.OnesCount64(binary.LittleEndian.Uint64(b[j:]))
			}
			if pop != card {
				return 0, bad
			}
			total += uint64(card)
			b = b[8192:]
		default:
			if len(b) < 2*card {
				return 0, bad
			}
			prev := -1
			for j := 0; j < card; j++ {
				v := int(binary.LittleEndian.Uint16(b[2*j:]))
				if v <= prev {
					return 0, bad
				}
				prev = v
			}
			total += uint64(card)
			b = b[2*card:]
		}
	}
	if len(b) != 0 {
		return 0, bad
	}
	return total, nil
}

// segDocs gives the engine the lengths and stored fields of a segment's
// documents. Reads that fail return zero values and set err, which the
// caller checks after the query. The last lengths page is kept, since the
// engine visits documents in id order. Not safe for concurrent use: one
// per query.
type segDocs struct {
	r       *segReader
	err     error
	page    []byte
	pageNum int64
}

func newSegDocs(r *segReader) *segDocs { return &segDocs{r: r, pageNum: -1} }

func (s *segDocs) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *segDocs) length(id uint32) uint32 {
	if uint64(id) >= s.r.docs {
		s.fail(s.r.corrupt("document %d out of range", id))
		return 0
	}
	off := s.r.lensOff + 4*int64(id)
	if num := off / pageData; num != s.pageNum {
		p, err := s.r.page(num, true)
		if err != nil {
			s.fail(err)
			return 0
		}
		s.page, s.pageNum = p, num
	}
	return binary.LittleEndian.Uint32(s.page[off%pageData:])
}

func (s *segDocs) url(id uint32) string {
	u, _ := s.fields(id)
	return u
}

func (s *segDocs) fields(id uint32) (url, title string) {
	url, title, err := s.r.fields(id)
	if err != nil {
		s.fail(err)
	}
	return url, title
}
