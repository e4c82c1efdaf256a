package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// A segment file is a sequence of 4 KiB pages, each holding pageData bytes
// of the segment's logical byte stream followed by a trailer: the CRC-32C
// of the data and of the page number, then the page number. Every read
// verifies the pages it touches, so a damaged or misplaced page is found
// whatever part of the file a query reads, and a page is the unit the
// cache keeps. Sections are aligned to 8 logical bytes; since pageData is
// a multiple of 8, an aligned 4- or 8-byte value never straddles pages.
const (
	pageSize    = 4096
	pageTrailer = 8
	pageData    = pageSize - pageTrailer
)

func pageSum(data []byte, page uint32) uint32 {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], page)
	return crc32.Update(crc32.Checksum(data, castagnoli), castagnoli, n[:])
}

// sealPage writes the trailer of the physical page p (pageSize bytes).
func sealPage(p []byte, page uint32) {
	binary.LittleEndian.PutUint32(p[pageData:], pageSum(p[:pageData], page))
	binary.LittleEndian.PutUint32(p[pageData+4:], page)
}

// pageWriter frames a logical byte stream into pages.
type pageWriter struct {
	w    *bufio.Writer
	page [pageSize]byte
	n    int    // data bytes in page
	num  uint32 // page number of page
	off  int64  // logical bytes written
	err  error
}

func newPageWriter(w io.Writer) *pageWriter {
	return &pageWriter{w: bufio.NewWriterSize(w, 16*pageSize)}
}

func (pw *pageWriter) Write(b []byte) (int, error) {
	total := len(b)
	for len(b) > 0 && pw.err == nil {
		k := copy(pw.page[pw.n:pageData], b)
		pw.n += k
		pw.off += int64(k)
		b = b[k:]
		if pw.n == pageData {
			pw.flushPage()
		}
	}
	if pw.err != nil {
		return 0, pw.err
	}
	return total, nil
}

func (pw *pageWriter) flushPage() {
	if pw.num == ^uint32(0) {
		pw.err = errors.New("segment too large")
		return
	}
	clear(pw.page[pw.n:pageData])
	sealPage(pw.page[:], pw.num)
	if _, err := pw.w.Write(pw.page[:]); err != nil && pw.err == nil {
		pw.err = err
	}
	pw.num++
	pw.n = 0
}

var zeros [pageData]byte

// align pads the stream with zeros to a multiple of k bytes.
func (pw *pageWriter) align(k int64) {
	if r := pw.off % k; r != 0 {
		pw.Write(zeros[:k-r])
	}
}

// finish pads the stream so that footer ends a page, writes it and
// flushes; the footer is then the last len(footer) logical bytes.
func (pw *pageWriter) finish(footer []byte) error {
	for pw.err == nil && pageData-pw.n != len(footer) {
		gap := pageData - pw.n - len(footer)
		if gap < 0 {
			gap = pageData - pw.n // to the next page
		}
		pw.Write(zeros[:gap])
	}
	pw.Write(footer)
	if pw.err == nil {
		pw.err = pw.w.Flush()
	}
	return pw.err
}

// pagedFile reads the logical stream of a paged file, verifying every page
// it reads. Pages read for queries go through the cache; sequential scans
// (merges) read around it.
type pagedFile struct {
	ra    io.ReaderAt
	name  string // file path, for errors
	pages int64
	id    uint64 // cache key
	cache *cache
}

// size returns the logical size.
func (f *pagedFile) size() int64 { return f.pages * pageData }

func (f *pagedFile) corrupt(what string, args ...any) error {
	return &Error{Op: "read", Subject: f.name, Err: fmt.Errorf("%w: "+what, append([]any{ErrCorrupt}, args...)...)}
}

func (f *pagedFile) ioError(err error) error {
	if errors.Is(err, io.EOF) {
		return f.corrupt("truncated")
	}
	return &Error{Op: "read", Subject: f.name, Err: err}
}

// verify checks the trailer of physical page num held in p.
func (f *pagedFile) verify(p []byte, num int64) error {
	if binary.LittleEndian.Uint32(p[pageData+4:]) != uint32(num) ||
		binary.LittleEndian.Uint32(p[pageData:]) != pageSum(p[:pageData], uint32(num)) {
		return f.corrupt("page %d: checksum mismatch", num)
	}
	return nil
}

// page returns the verified data of page num, from the cache if allowed.
func (f *pagedFile) page(num int64, cached bool) ([]byte, error) {
	k := cacheKey{file: f.id, kind: cachePage, off: num}
	if cached {
		if v, ok := f.cache.get(k); ok {
			return v.([]byte), nil
		}
	}
	p := make([]byte, pageSize)
	if _, err := f.ra.ReadAt(p, num*pageSize); err != nil {
		return nil, f.ioError(err)
	}
	if err := f.verify(p, num); err != nil {
		return nil, err
	}
	p = p[:pageData:pageData]
	if cached {
		f.cache.put(k, p, pageSize)
	}
	return p, nil
}

// maxPagedRead bounds the logical size of one read: no single structure of
// a valid segment (a posting list, a record, a block) comes near it, so a
// corrupt length cannot make a reader allocate more.
const maxPagedRead = 1 << 30

// read returns the n logical bytes at off. A read within one page returns
// a slice of the page itself; the caller must not modify it. Reads of
// more than a few pages bypass the cache.
func (f *pagedFile) read(off, n int64, cached bool) ([]byte, error) {
	if off < 0 || n < 0 || n > maxPagedRead || off > f.size()-n {
		return nil, f.corrupt("read of %d bytes at %d outside the file", n, off)
	}
	if n == 0 {
		return nil, nil
	}
	first, last := off/pageData, (off+n-1)/pageData
	if first == last {
		p, err := f.page(first, cached)
		if err != nil {
			return nil, err
		}
		o := off - first*pageData
		return p[o : o+n], nil
	}
	out := make([]byte, 0, n)
	if cached && last-first < 8 {
		for num := first; num <= last; num++ {
			p, err := f.page(num, true)
			if err != nil {
				return nil, err
			}
			lo, hi := int64(0), int64(pageData)
			if num == first {
				lo = off - first*pageData
			}
			if num == last {
				hi = off + n - last*pageData
			}
			out = append(out, p[lo:hi]...)
		}
		return out, nil
	}
	out, _, err := f.readDirect(out, nil, off, n, first, last)
	return out, err
}

// readDirect reads pages first..last in one call into raw (grown if
// needed, and returned for reuse) and appends their data from logical
// offset off, n bytes, to out.
func (f *pagedFile) readDirect(out, raw []byte, off, n, first, last int64) ([]byte, []byte, error) {
	size := int((last - first + 1) * pageSize)
	if cap(raw) < size {
		raw = make([]byte, size)
	}
	raw = raw[:size]
	if _, err := f.ra.ReadAt(raw, first*pageSize); err != nil {
		return nil, raw, f.ioError(err)
	}
	for num := first; num <= last; num++ {
		p := raw[(num-first)*pageSize : (num-first+1)*pageSize]
		if err := f.verify(p, num); err != nil {
			return nil, raw, err
		}
		lo, hi := int64(0), int64(pageData)
		if num == first {
			lo = off - first*pageData
		}
		if num == last {
			hi = off + n - last*pageData
		}
		out = append(out, p[lo:hi]...)
	}
	return out, raw, nil
}

// readBuf holds the buffers of uncached reads, reused from one read to the
// next: a read's result is valid until the next read with the same readBuf.
type readBuf struct{ raw, out []byte }

// readUncached reads the n logical bytes at off around the cache into rb.
func (f *pagedFile) readUncached(rb *readBuf, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || n > maxPagedRead || off > f.size()-n {
		return nil, f.corrupt("read of %d bytes at %d outside the file", n, off)
	}
	if n == 0 {
		return nil, nil
	}
	out, raw, err := f.readDirect(rb.out[:0], rb.raw, off, n, off/pageData, (off+n-1)/pageData)
	rb.raw = raw
	if err != nil {
		return nil, err
	}
	rb.out = out
	if cap(rb.raw) > 1<<20 {
		rb.raw, rb.out = nil, nil // keep no huge buffer
	}
	return out, nil
}

// seqReader reads a logical range of a pagedFile front to back in chunks
// of 64 pages, around the cache: the reader of a merge. Its errors stick:
// reads after a failure return nil or zero.
type seqReader struct {
	f        *pagedFile
	off, end int64 // next logical offset, end of the range
	buf      []byte
	raw      []byte
	err      error
	scratch  []byte
}

func (f *pagedFile) seq(off, n int64) *seqReader {
	r := &seqReader{f: f, off: off, end: off + n}
	if off < 0 || n < 0 || off > f.size()-n {
		r.err = f.corrupt("section of %d bytes at %d outside the file", n, off)
	}
	return r
}

func (r *seqReader) fill() bool {
	if r.err != nil {
		return false
	}
	if r.off >= r.end {
		r.err = r.f.corrupt("section overrun at %d", r.off)
		return false
	}
	n := min(r.end-r.off, 64*pageData-r.off%pageData)
	first := r.off / pageData
	buf, raw, err := r.f.readDirect(r.buf[:0], r.raw, r.off, n, first, (r.off+n-1)/pageData)
	r.raw = raw
	if err != nil {
		r.err = err
		return false
	}
	r.buf = buf
	r.off += n
	return true
}

// skipTo moves forward to logical offset off.
func (r *seqReader) skipTo(off int64) {
	pos := r.off - int64(len(r.buf))
	switch {
	case r.err != nil:
	case off < pos || off > r.end:
		r.err = r.f.corrupt("offset %d out of order", off)
	case off-pos <= int64(len(r.buf)):
		r.buf = r.buf[off-pos:]
	default:
		r.buf = r.buf[:0]
		r.off = off
	}
}

// next returns the following n bytes, valid until the next call.
func (r *seqReader) next(n int) []byte {
	if n < 0 || n > maxPagedRead {
		r.err = r.f.corrupt("record of %d bytes", n)
	}
	if len(r.buf) >= n && r.err == nil {
		b := r.buf[:n]
		r.buf = r.buf[n:]
		return b
	}
	r.scratch = append(r.scratch[:0], r.buf...)
	r.buf = r.buf[:0]
	for len(r.scratch) < n && r.fill() {
		k := min(n-len(r.scratch), len(r.buf))
		r.scratch = append(r.scratch, r.buf[:k]...)
		r.buf = r.buf[k:]
	}
	if r.err != nil {
		return nil
	}
	return r.scratch
}

func (r *seqReader) u32() uint32 {
	b := r.next(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *seqReader) u64() uint64 {
	b := r.next(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}
