package index

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"
)

// segWriter writes a segment section by section, streaming: the
// caller gives docs lengths, then docs record lengths, then the records,
// then the hash entries sorted by (hash, id), then the terms in ascending
// order with their posting lists, and calls finish. Besides one posting
// list at a time, it holds the bucket directory (4 bytes per 64
// documents) and the dictionary block offsets (8 bytes per block) until
// finish.
type segWriter struct {
	f          *os.File // nil when writing to another io.Writer
	tmp, final string
	pw         *pageWriter
	ft         segFooter

	n        uint64 // documents
	i        uint64 // items given in the current section
	section  int
	storeOff uint64 // next record offset (offs section)

	buckets []uint32 // bucket start indexes (hash section)
	lastH   uint64
	lastID  uint32

	blk, ent   []byte // dictionary block being built, entry scratch
	blkCount   int
	blkPrev    string
	blockOffs  []int64
	posting    []byte
	roaringBuf bytes.Buffer
}

const (
	secLens = iota
	secOffs
	secStored
	secHash
	secTerms
)

// createSegment starts writing a segment of n documents to path (through
// path.tmp, renamed by finish).
func createSegment(path string, n uint64) (*segWriter, error) {
	if n >= 1<<32-1 {
		return nil, &Error{Op: "write", Subject: path, Err: ErrFull}
	}
	f, err := os.OpenFile(path+".tmp", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, &Error{Op: "write", Subject: path, Err: err}
	}
	w := newSegWriter(f, n)
	w.f, w.tmp, w.final = f, path+".tmp", path
	return w, nil
}

// newSegWriter starts writing a segment of n (< 2^32−1) documents to out.
func newSegWriter(out io.Writer, n uint64) *segWriter {
	w := &segWriter{pw: newPageWriter(out), n: n}
	w.ft.docs = n
	var hdr [segHeaderSize]byte
	copy(hdr[:], segMagic)
	binary.LittleEndian.PutUint16(hdr[4:], segVersion)
	binary.LittleEndian.PutUint32(hdr[8:], pageSize)
	w.pw.Write(hdr[:])
	w.ft.lensOff = w.pw.off
	if n > 0 {
		w.ft.bucketBits = uint64(bits.Len64((n - 1) / bucketLoad))
	}
	w.buckets = make([]uint32, 0, (1<<w.ft.bucketBits)+1)
	return w
}

// abort removes the unfinished file.
func (w *segWriter) abort() {
	if w.f != nil {
		w.f.Close()
		os.Remove(w.tmp)
	}
}

func (w *segWriter) fail(format string, args ...any) {
	if w.pw.err == nil {
		w.pw.err = fmt.Errorf(format, args...)
	}
}

// enter moves on to section s, checking that each section it leaves is
// complete.
func (w *segWriter) enter(s int) {
	if w.section > s {
		w.fail("section %d after %d", s, w.section)
	}
	for w.section < s {
		if w.i != w.n {
			w.fail("section %d has %d of %d items", w.section, w.i, w.n)
		}
		switch w.section + 1 {
		case secOffs:
			w.pw.align(8)
			w.ft.offsOff = w.pw.off
		case secStored:
			w.pw.Write(binary.LittleEndian.AppendUint64(w.ent[:0], w.storeOff))
			w.ft.storedOff = w.pw.off
			w.storeOff = 0
		case secHash:
			if uint64(w.pw.off-w.ft.storedOff) != w.storeOff {
				w.fail("records do not match their lengths")
			}
			w.pw.align(8)
			w.ft.hashOff = w.pw.off
		case secTerms:
			for uint64(len(w.buckets)) <= 1<<w.ft.bucketBits {
				w.buckets = append(w.buckets, uint32(w.n))
			}
			w.ft.bucketsOff = w.pw.off
			for _, b := range w.buckets {
				w.pw.Write(binary.LittleEndian.AppendUint32(w.ent[:0], b))
			}
			w.pw.align(8)
			w.ft.termsOff = w.pw.off
		}
		w.section, w.i = w.section+1, 0
	}
}

// length gives the length of the next document.
func (w *segWriter) length(dl uint32) {
	w.enter(secLens)
	w.pw.Write(binary.LittleEndian.AppendUint32(w.posting[:0], dl))
	w.i++
}

// recLen gives the stored record length of the next document.
func (w *segWriter) recLen(n int) {
	w.enter(secOffs)
	w.pw.Write(binary.LittleEndian.AppendUint64(w.posting[:0], w.storeOff))
	w.storeOff += uint64(n)
	w.i++
}

// record gives the next stored record, raw (see appendRecord).
func (w *segWriter) record(rec []byte) {
	w.enter(secStored)
	w.pw.Write(rec)
	w.storeOff += uint64(len(rec))
	w.i++
}

// hash gives the next hash entry.
func (w *segWriter) hash(h uint64, id uint32) {
	w.enter(secHash)
	if w.i > 0 && (h < w.lastH || h == w.lastH && id <= w.lastID) || uint64(id) >= w.n {
		w.fail("hash entries out of order")
	}
	w.lastH, w.lastID = h, id
	for b := h >> (64 - w.ft.bucketBits); uint64(len(w.buckets)) <= b; {
		w.buckets = append(w.buckets, uint32(w.i))
	}
	var e [12]byte
	binary.LittleEndian.PutUint64(e[:], h)
	binary.LittleEndian.PutUint32(e[8:], id)
	w.pw.Write(e[:])
	w.i++
}

// term gives the next term and its posting list (sealed, ids < docs,
// frontier set).
func (w *segWriter) term(t string, pl *postingList) {
	w.enter(secTerms)
	if t == "" || (w.blkPrev != "" || w.ft.terms > 0) && t <= w.blkPrev {
		w.fail("term %q out of order", t)
		return
	}
	off := w.pw.off
	w.posting = appendPostings(w.posting[:0], pl, &w.roaringBuf)
	w.pw.Write(w.posting)
	shared := 0
	if w.blkCount > 0 {
		for shared < len(t) && shared < len(w.blkPrev) && t[shared] == w.blkPrev[shared] {
			shared++
		}
	}
	e := binary.AppendUvarint(w.ent[:0], uint64(shared))
	e = binary.AppendUvarint(e, uint64(len(t)-shared))
	e = append(e, t[shared:]...)
	e = binary.AppendUvarint(e, uint64(pl.count()))
	e = binary.AppendUvarint(e, uint64(off))
	e = binary.AppendUvarint(e, uint64(len(w.posting)))
	w.ent = e
	w.blk = append(w.blk, e...)
	w.blkCount++
	w.blkPrev = t
	w.ft.terms++
	if len(w.blk) >= blockTarget {
		w.flushBlock()
	}
}

func (w *segWriter) flushBlock() {
	if w.blkCount == 0 {
		return
	}
	head := binary.AppendUvarint(w.ent[:0], uint64(w.blkCount))
	size := int64(4 + len(head) + len(w.blk))
	if at := w.pw.off % pageData; size <= pageData && at+size > pageData {
		w.pw.Write(zeros[:pageData-at])
	}
	w.blockOffs = append(w.blockOffs, w.pw.off)
	w.pw.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(head)+len(w.blk))))
	w.pw.Write(head)
	w.pw.Write(w.blk)
	w.blk, w.blkCount = w.blk[:0], 0
}

// finish writes the dictionary index and the footer, syncs the file and
// renames it into place.
func (w *segWriter) finish(totalLen uint64) error {
	w.enter(secTerms)
	w.flushBlock()
	w.pw.align(8)
	w.ft.dictIdxOff = w.pw.off
	for _, o := range w.blockOffs {
		w.pw.Write(binary.LittleEndian.AppendUint64(w.ent[:0], uint64(o)))
	}
	w.ft.blocks = int64(len(w.blockOffs))
	w.ft.end = w.pw.off
	w.ft.totalLen = totalLen
	err := w.pw.finish(w.ft.encode())
	if w.f == nil {
		return err
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.tmp, w.final)
	}
	if err != nil {
		os.Remove(w.tmp)
		return &Error{Op: "write", Subject: w.final, Err: err}
	}
	return nil
}

// writeShardSegment writes the live documents of s to a segment at path,
// renumbered densely in id order, and returns their number. The shard is
// read-locked meanwhile. Extra memory: 12 bytes per document for the
// renumbering and the sorted hashes, and one posting list.
func writeShardSegment(path string, s *Shard) (uint64, error) {
	s.rlockSealed()
	defer s.mu.RUnlock()
	n := uint64(s.live)
	w, err := createSegment(path, n)
	if err != nil {
		return 0, err
	}
	remap := make([]uint32, len(s.docs))
	next := uint32(0)
	var total uint64
	for id, d := range s.docs {
		if s.deleted.Contains(uint32(id)) {
			remap[id] = ^uint32(0)
			continue
		}
		remap[id] = next
		next++
		w.length(d.len)
		total += uint64(d.len)
	}
	if uint64(next) != n {
		w.abort()
		return 0, &Error{Op: "write", Subject: path, Err: errors.New("live count mismatch")}
	}
	for id, d := range s.docs {
		if remap[id] != ^uint32(0) {
			w.recLen(recordLen(d.url, d.title))
		}
	}
	var rec []byte
	for id, d := range s.docs {
		if remap[id] != ^uint32(0) {
			rec = appendRecord(rec[:0], d.url, d.title)
			w.record(rec)
		}
	}
	type hashID struct {
		h  uint64
		id uint32
	}
	hs := make([]hashID, 0, n)
	for id, d := range s.docs {
		if remap[id] != ^uint32(0) {
			hs = append(hs, hashID{xxhash.Sum64String(d.url), remap[id]})
		}
	}
	slices.SortFunc(hs, func(a, b hashID) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, e := range hs {
		w.hash(e.h, e.id)
	}
	hs = nil
	terms := make([]string, 0, len(s.dict))
	for t := range s.dict {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	var ids []uint32
	for _, t := range terms {
		pl := s.dict[t]
		out := &postingList{docs: roaring.New()}
		ids = ids[:0]
		it := pl.docs.Iterator()
		for i := 0; it.HasNext(); i++ {
			oid := it.Next()
			if remap[oid] == ^uint32(0) {
				continue
			}
			tf := pl.freq(i)
			ids = append(ids, remap[oid])
			out.appendFreq(tf)
			out.note(tf, s.docs[oid].len)
		}
		if len(ids) == 0 {
			continue
		}
		out.docs.AddMany(ids)
		w.term(t, out)
	}
	if err := w.finish(total); err != nil {
		return 0, err
	}
	return n, nil
}
