package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// Log file format, version 1 (little-endian):
//
//	header  "CKLG" | version u16 | flags u16 (0) | directory id u64 |
//	        log number u64 | CRC-32C of the preceding 24 bytes u32
//	record  payload length u32 | CRC-32C of the payload u32 |
//	        payload: URL, title, text (uvarint length + bytes each)
//
// A record is written with one write call, so a killed process leaves at
// most its last record torn; Open cuts the log at the first record that is
// incomplete or fails its checksum.
const (
	logMagic      = "CKLG"
	logVersion    = 2 // 2: a record may end with the document's language
	logHeaderSize = 28
	logRecordHead = 8
	// maxRecord bounds a record's payload (and so a document's size).
	maxRecord = 1 << 30
)

func appendLogHeader(b []byte, dirID, seq uint64) []byte {
	b = append(b, logMagic...)
	b = binary.LittleEndian.AppendUint16(b, logVersion)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint64(b, dirID)
	b = binary.LittleEndian.AppendUint64(b, seq)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[len(b)-24:], castagnoli))
}

func decodeLogHeader(b []byte) (dirID, seq uint64, err error) {
	if len(b) < logHeaderSize {
		return 0, 0, fmt.Errorf("%w: log header truncated", ErrCorrupt)
	}
	if string(b[:4]) != logMagic || binary.LittleEndian.Uint32(b[24:]) != crc32.Checksum(b[:24], castagnoli) {
		return 0, 0, fmt.Errorf("%w: bad log header", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != logVersion && v != 1 {
		return 0, 0, fmt.Errorf("%w: log version %d", ErrVersion, v)
	}
	if binary.LittleEndian.Uint16(b[6:]) != 0 {
		return 0, 0, fmt.Errorf("%w: unknown log flags", ErrCorrupt)
	}
	return binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:]), nil
}

// appendLogRecord appends the record of d to b.
func appendLogRecord(b []byte, d Document) []byte {
	start := len(b)
	b = append(b, make([]byte, logRecordHead)...)
	for _, s := range []string{d.URL, d.Title, d.Text} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	if d.Lang != "" {
		b = binary.AppendUvarint(b, uint64(len(d.Lang)))
		b = append(b, d.Lang...)
	}
	p := b[start+logRecordHead:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(p)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(p, castagnoli))
	return b
}

// decodeLogPayload decodes a record's payload, which must be exactly a
// document with a URL.
func decodeLogPayload(p []byte) (Document, bool) {
	d := dec{b: p}
	doc := Document{URL: d.str(), Title: d.str(), Text: d.str()}
	if d.err == nil && len(d.b) > 0 {
		doc.Lang = d.str() // version 2
	}
	return doc, d.err == nil && len(d.b) == 0 && doc.URL != ""
}

// logScanner reads the records of a log after its header. It stops at the
// end or at the first damaged record; end is then the offset just past the
// last good record.
type logScanner struct {
	r    *bufio.Reader
	size int64 // bytes available from the start of the log
	end  int64
	buf  []byte
	err  error // a read error other than a damaged record
}

func newLogScanner(r io.Reader, size int64) *logScanner {
	return &logScanner{r: bufio.NewReaderSize(r, 64<<10), size: size, end: logHeaderSize}
}

// next returns the next document, or false at the end of the good records.
func (s *logScanner) next() (Document, bool) {
	var head [logRecordHead]byte
	if s.size-s.end < logRecordHead {
		return Document{}, false
	}
	if _, err := io.ReadFull(s.r, head[:]); err != nil {
		s.readErr(err)
		return Document{}, false
	}
	n := int64(binary.LittleEndian.Uint32(head[:]))
	if n > maxRecord || n > s.size-s.end-logRecordHead {
		return Document{}, false
	}
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	p := s.buf[:n]
	if _, err := io.ReadFull(s.r, p); err != nil {
		s.readErr(err)
		return Document{}, false
	}
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(head[4:]) {
		return Document{}, false
	}
	doc, ok := decodeLogPayload(p)
	if !ok {
		return Document{}, false
	}
	s.end += logRecordHead + n
	if cap(s.buf) > 1<<20 {
		s.buf = nil // do not keep a huge page's buffer
	}
	return doc, true
}

func (s *logScanner) readErr(err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		s.err = err
	}
}

// logWriter appends records to the current log.
type logWriter struct {
	f    *os.File
	path string
	seq  uint64
	size int64
	sync bool // fsync after every record
	err  error
}

// createLog creates the log file seq with its header, synced.
func createLog(path string, dirID, seq uint64, sync bool) (*logWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, &Error{Op: "write", Subject: path, Err: err}
	}
	w := &logWriter{f: f, path: path, seq: seq, sync: sync}
	if _, err := f.Write(appendLogHeader(nil, dirID, seq)); err != nil {
		f.Close()
		return nil, &Error{Op: "write", Subject: path, Err: err}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, &Error{Op: "write", Subject: path, Err: err}
	}
	w.size = logHeaderSize
	return w, nil
}

// append writes one record (see appendLogRecord) with one write call. A
// failed write is undone by truncation, so that later records are not
// appended behind a torn one; if that fails too, the log refuses further
// writes.
func (w *logWriter) append(rec []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.f.WriteAt(rec, w.size)
	if err == nil && w.sync {
		err = w.f.Sync()
	}
	if err != nil {
		if n > 0 {
			if terr := w.f.Truncate(w.size); terr != nil {
				w.err = &Error{Op: "write", Subject: w.path, Err: terr}
			}
		}
		return &Error{Op: "write", Subject: w.path, Err: err}
	}
	w.size += int64(len(rec))
	return nil
}

func (w *logWriter) close() error {
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openLog opens the log at path for replay and appending: it checks the
// header, calls fn for every good record, cuts a damaged tail (and syncs),
// and returns the writer positioned at the end.
func openLog(path string, dirID, seq uint64, sync bool, fn func(Document) error) (*logWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, &Error{Op: "read", Subject: path, Err: err}
	}
	w := &logWriter{f: f, path: path, seq: seq, sync: sync}
	end, err := scanLog(f, path, dirID, seq, -1, fn)
	if err != nil {
		f.Close()
		return nil, err
	}
	if st, err := f.Stat(); err != nil || st.Size() != end {
		if err == nil {
			err = f.Truncate(end)
		}
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return nil, &Error{Op: "write", Subject: path, Err: err}
		}
	}
	w.size = end
	return w, nil
}

// scanLog checks the header of the log in f and calls fn (if not nil) for
// each good record, stopping at limit when limit ≥ 0. It returns the
// offset just past the last record read.
func scanLog(f *os.File, path string, dirID, seq uint64, limit int64, fn func(Document) error) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, &Error{Op: "read", Subject: path, Err: err}
	}
	size := st.Size()
	if limit >= 0 {
		size = min(size, limit)
	}
	hdr := make([]byte, logHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, &Error{Op: "read", Subject: path, Err: err}
	}
	id, s, err := decodeLogHeader(hdr)
	if err == nil && (id != dirID || s != seq) {
		err = fmt.Errorf("%w: log of another directory or number", ErrCorrupt)
	}
	if err != nil {
		return 0, &Error{Op: "read", Subject: path, Err: err}
	}
	sc := newLogScanner(io.NewSectionReader(f, logHeaderSize, max(size-logHeaderSize, 0)), size)
	for {
		doc, ok := sc.next()
		if !ok {
			break
		}
		if fn != nil {
			if err := fn(doc); err != nil {
				return 0, err
			}
		}
	}
	if sc.err != nil {
		return 0, &Error{Op: "read", Subject: path, Err: sc.err}
	}
	return sc.end, nil
}
