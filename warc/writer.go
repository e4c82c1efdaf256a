package warc

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrClosed is returned by writes to a closed Writer.
var ErrClosed = errors.New("warc: writer closed")

// RecordWriter writes records to one stream, each record its own gzip
// member when compression is on (so a reader can seek to any record).
// Each record (or its gzip member) is assembled in memory and handed to the
// stream in one Write call, so that a process killed while writing to a
// file leaves at most one torn record, at the end (Rewind and Repair cut
// it), and none when the record fits in one page of the file: Linux stops
// a killed process's write only between pages. It is not safe for
// concurrent use.
type RecordWriter struct {
	w   io.Writer
	enc encoder
	buf bytes.Buffer // the record, or its gzip member, as it is written
	n   int64        // bytes written to w
}

// maxKeptBuffer bounds the record buffer a RecordWriter keeps between
// records, so that one huge record does not pin its size in memory.
const maxKeptBuffer = 1 << 20

// NewRecordWriter returns a RecordWriter on w; gzipped selects one gzip
// member per record (the ".warc.gz" convention).
func NewRecordWriter(w io.Writer, gzipped bool) *RecordWriter {
	rw := &RecordWriter{w: w, enc: encoder{zip: gzipped}}
	if gzipped {
		rw.enc.gz, _ = gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	}
	return rw
}

// Offset returns the number of bytes written so far: the offset the next
// record will start at.
func (rw *RecordWriter) Offset() int64 { return rw.n }

// Write writes r, filling in WARC-Record-ID, WARC-Date and Content-Length
// when they are missing (Content-Length is always set from the block), and
// sets r.Offset. Cost: one copy (or compression) of the record into a
// reused buffer, and one Write on the stream.
func (rw *RecordWriter) Write(r *Record) error {
	rw.buf.Reset()
	off := rw.n
	if err := rw.enc.encode(r, &rw.buf); err != nil {
		return err
	}
	r.Offset = off
	err := rw.writeRaw(rw.buf.Bytes())
	if rw.buf.Cap() > maxKeptBuffer {
		rw.buf = bytes.Buffer{}
	}
	return err
}

// writeRaw hands b, whole encoded records, to the stream in one Write.
func (rw *RecordWriter) writeRaw(b []byte) error {
	n, err := rw.w.Write(b)
	rw.n += int64(n)
	if err != nil {
		return &Error{Op: "write", Err: err}
	}
	return nil
}

// encoder turns records into their bytes: a gzip member each, or the
// plain record. Not safe for concurrent use; pooled.
type encoder struct {
	zip  bool
	gz   *gzip.Writer
	hbuf []byte
}

var encoders = [2]sync.Pool{
	{New: func() any { return &encoder{} }},
	{New: func() any {
		gz, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
		return &encoder{zip: true, gz: gz}
	}},
}

func getEncoder(zip bool) *encoder {
	if zip {
		return encoders[1].Get().(*encoder)
	}
	return encoders[0].Get().(*encoder)
}

func putEncoder(e *encoder) {
	if cap(e.hbuf) > maxKeptBuffer {
		e.hbuf = nil
	}
	if e.zip {
		e.gz.Reset(io.Discard)
		encoders[1].Put(e)
	} else {
		encoders[0].Put(e)
	}
}

// encode appends r's encoding to dst, filling in WARC-Record-ID,
// WARC-Date and Content-Length as Write does.
func (e *encoder) encode(r *Record, dst *bytes.Buffer) error {
	if r.Header.Get(FieldType) == "" {
		return &Error{Op: "write", Err: errors.New("record has no WARC-Type")}
	}
	if r.Header.Get(FieldRecordID) == "" {
		r.Header.Set(FieldRecordID, NewRecordID())
	}
	if r.Header.Get(FieldDate) == "" {
		r.Header.Set(FieldDate, time.Now().UTC().Format(time.RFC3339))
	}
	r.Header.Set(FieldContentLength, strconv.Itoa(len(r.Block)))
	r.Offset = int64(dst.Len())
	b := append(e.hbuf[:0], Version...)
	b = append(b, "\r\n"...)
	for _, f := range r.Header.fields {
		if !validField(f.name, f.value) {
			return &Error{Op: "write", Err: fmt.Errorf("invalid header field %q", f.name)}
		}
		b = append(b, f.name...)
		b = append(b, ": "...)
		b = append(b, f.value...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	h := len(b)
	b = append(b, "\r\n\r\n"...) // the record's end, written after the block
	e.hbuf = b
	// Writes to a bytes.Buffer, and so to a gzip.Writer on one, cannot
	// fail.
	if e.zip {
		e.gz.Reset(dst)
		e.gz.Write(b[:h])
		e.gz.Write(r.Block)
		e.gz.Write(b[h:])
		e.gz.Close()
	} else {
		dst.Write(b[:h])
		dst.Write(r.Block)
		dst.Write(b[h:])
	}
	return nil
}

// validField reports whether a header field can be written without
// breaking the record framing: no CR or LF in name or value, a non-empty
// name without ':'.
func validField(name, value string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c == ':' || c >= 0x7f {
			return false
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c == '\r' || c == '\n' {
			return false
		}
	}
	return true
}

// WriterOptions configures a Writer. The zero value of each field means its
// default.
type WriterOptions struct {
	// Dir is the directory WARC files are written to. Required.
	Dir string
	// Prefix starts every file name; default "crawlkit".
	Prefix string
	// MaxFileSize rotates to a new file once a file reaches this many
	// bytes; default 1 GiB (the WARC 1.1 annex recommendation). It is a
	// soft limit: rotation happens only before a write, never between the
	// records of one exchange, so a file can exceed it by one exchange.
	MaxFileSize int64
	// Uncompressed writes ".warc" files instead of ".warc.gz" with one gzip
	// member per record; default false.
	Uncompressed bool
	// Software names the writer in each file's warcinfo record; default
	// "crawlkit".
	Software string
	// Info adds fields to each file's warcinfo record (e.g. "operator",
	// "robots": "obey"), written in sorted key order. It cannot replace
	// the crawlkit-series field the Writer records there (see Rewind).
	Info map[string]string
	// Now is the clock for WARC-Date and for the timestamps in file names;
	// default time.Now.
	Now func() time.Time
	// NoRevisits writes every response in full. By default a response
	// whose payload is identical (same WARC-Payload-Digest) to that of a
	// response the series already holds is written as a revisit record
	// (profile ProfileIdenticalPayload): its HTTP headers, no payload, and
	// the original's record ID, URI and date. See "Revisits" in the
	// package documentation.
	NoRevisits bool
	// MaxDigests bounds the payload digests remembered for revisits;
	// default 200,000, about 55 MiB (some 280 bytes each for the digest,
	// record ID, URI and date of an original, with 60-byte URIs; see
	// BenchmarkDigestTable).
	// Once it is full, payloads not yet remembered are written in full
	// and not remembered: the first MaxDigests distinct payloads of the
	// series, in write order, are the ones revisits can refer to, the
	// same set a resumed Writer rebuilds.
	MaxDigests int
	// NoIndex writes no CDXJ index. By default each WARC file gets one
	// beside it, name + ".cdxj", written when the file is complete (at
	// rotation, Close, and for the file a Rewind ends at); see "CDXJ
	// index" in the package documentation.
	NoIndex bool
}

// Writer writes records into a series of WARC files in a directory,
// starting each file with a warcinfo record and rotating by size. It is
// safe for concurrent use; records are written whole, one write (a Write,
// or the records of a WriteExchange) at a time.
//
// Files are named Prefix-YYYYMMDDhhmmss-NNNNN.warc.gz (".warc" when
// Uncompressed): the UTC time the file was created, then a sequence
// number. Names never collide and sort in write order, across restarts
// too: a new Writer continues after the highest sequence number of its
// prefix in Dir, a file is created only if its name is free (the next
// number is tried otherwise), and a timestamp never goes back before the
// latest one in Dir, should the clock do so. The timestamp is the file's
// creation time rather than the Writer's start so that the names of one
// long crawl still sort by time past 99999 files.
//
// A response whose payload the series already holds is written as a
// revisit record, and each complete file gets a CDXJ index beside it
// (WriterOptions.NoRevisits and NoIndex turn them off; see the package
// documentation).
//
// The Writer keeps a crawl's files consistent across crashes: every write
// lands in one file, all of it or (after an error) none of it; Position
// names the point after the last write, and a Writer resuming a killed
// crawl cuts the directory back to such a point with Rewind. Repair cuts
// the torn tail of a file written without positions.
//
// A file appears under its name with its warcinfo record in it: the
// record is written to a hidden temporary file, ".PREFIX-SERIES.tmp",
// which is hard-linked to the file's name. A kill never leaves an empty
// file of the prefix, which Rewind could not tell from the file a Writer
// beside this one is creating, and would leave without an index. On a
// file system without hard links (FAT, some network file systems) the
// file is created, then its record written, and a kill between the two
// leaves it empty. Cost: eight system calls per file created, rather than
// two.
type Writer struct {
	opts WriterOptions

	mu     sync.Mutex
	series string // the identity of the series of files, in every warcinfo record
	f      *os.File
	rw     *RecordWriter
	name   string // base name of the file Position names; "" before any
	end    int64  // offset in name after the last complete write
	last   int64  // offset in name where that write began
	seq    int    // sequence number to try for the next file
	stamp  string // the latest timestamp of a file name in Dir
	files  []string
	infoID string
	wrote  bool  // a record was written: Rewind is no longer allowed
	err    error // a failed write could not be undone: every write fails
	closed bool

	digests  *digestTable // payload digest → original response, for revisits
	origs    []origEntry  // the digests the current file added to it, in order
	index    []IndexEntry // the CDXJ entries of the current file, unsorted
	indexErr error        // the first index or originals file that could not be written
}

// stampLayout is the time format in file names.
const stampLayout = "20060102150405"

// NewWriter creates opts.Dir if needed and returns a Writer. The first file
// is created with the first record. Cost: one listing of opts.Dir, to
// continue the sequence numbers of files already there.
//
// opts may be nil, but Dir is required: nil, like an empty Dir, fails with
// an *Error. The options are copied (Info too), so the caller may change or
// reuse them afterwards.
func NewWriter(opts *WriterOptions) (*Writer, error) {
	var o WriterOptions
	if opts != nil {
		o = *opts
		o.Info = maps.Clone(opts.Info)
	}
	if o.Dir == "" {
		return nil, &Error{Op: "open", Err: errors.New("WriterOptions.Dir is empty")}
	}
	if o.Prefix == "" {
		o.Prefix = "crawlkit"
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = 1 << 30
	}
	if o.Software == "" {
		o.Software = "crawlkit"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxDigests <= 0 {
		o.MaxDigests = defaultMaxDigests
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	w := &Writer{opts: o, series: newSeries(), digests: newDigestTable(o.MaxDigests)}
	files, err := listFiles(o.Dir, o.Prefix)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		w.seq = max(w.seq, f.seq+1)
		w.stamp = max(w.stamp, f.stamp)
	}
	return w, nil
}

// Files returns the paths of the files this Writer created, oldest first.
// Safe for concurrent use; O(files).
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.files...)
}

// Write writes one record, rotating first if the current file is full. It
// sets WARC-Warcinfo-ID to the current file's warcinfo record. The record's
// Offset is set; the file is the last of Files. If the write fails, the
// bytes of it that reached the file are cut off again. Safe for
// concurrent use.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.begin(); err != nil {
		return err
	}
	start := w.rw.Offset()
	if err := w.writeLocked(r); err != nil {
		w.undo(start)
		return err
	}
	w.last, w.end = start, w.rw.Offset()
	w.remember(r)
	if !w.opts.NoIndex {
		w.indexRecord(r, w.end-start)
	}
	return nil
}

// WriteExchange writes a fetch as WARC's request, response and (when
// metadata is not empty) metadata records, linked by WARC-Concurrent-To.
// request and response are the raw HTTP messages; ip may be empty. The
// records land in one file, all of them or, if a write fails, none. It
// returns the response record's file and offset, for replay indexes. Safe
// for concurrent use.
func (w *Writer) WriteExchange(target, ip string, date time.Time, request, response []byte, metadata map[string]string) (file string, offset int64, err error) {
	return w.writeExchange(target, ip, date, request, response, metadata, "")
}

// WriteTruncatedExchange is WriteExchange for a response whose body was
// cut short: the response record carries WARC-Truncated with reason (one
// of the Truncated constants), so that readers know the payload is a
// prefix of what the server sent. An empty reason writes no field.
func (w *Writer) WriteTruncatedExchange(target, ip string, date time.Time, request, response []byte, metadata map[string]string, reason string) (file string, offset int64, err error) {
	return w.writeExchange(target, ip, date, request, response, metadata, reason)
}

func (w *Writer) writeExchange(target, ip string, date time.Time, request, response []byte, metadata map[string]string, truncated string) (file string, offset int64, err error) {
	e, err := w.EncodeExchange(target, ip, date, request, response, metadata, truncated)
	if err != nil {
		return "", 0, err
	}
	return w.WriteEncoded(e)
}

// EncodedExchange is a fetch encoded as WARC records by EncodeExchange,
// ready to be appended by WriteEncoded.
type EncodedExchange struct {
	recs   []*Record    // response (or revisit), then request and metadata if any
	infoID string       // the warcinfo record the encoding names
	data   bytes.Buffer // the records, encoded
	resp   int64        // offset of the response record in data
	digest string       // the response's payload digest, if it may be an original
	orig   original     // the response as an original for revisits
}

// EncodeExchange does the costly part of WriteTruncatedExchange (an
// empty truncated writes no WARC-Truncated field) without the Writer's
// lock: the records' digests, and their compression into one gzip member
// each, so that callers writing from many goroutines encode in parallel
// and only WriteEncoded, which appends, takes turns. Safe for concurrent
// use. The EncodedExchange keeps request and response until written.
func (w *Writer) EncodeExchange(target, ip string, date time.Time, request, response []byte, metadata map[string]string, truncated string) (*EncodedExchange, error) {
	d := date.UTC().Format(time.RFC3339)
	resp := &Record{Block: response}
	resp.Header.Set(FieldType, TypeResponse)
	resp.Header.Set(FieldRecordID, NewRecordID())
	resp.Header.Set(FieldDate, d)
	resp.Header.Set(FieldTargetURI, target)
	if ip != "" {
		resp.Header.Set(FieldIPAddress, ip)
	}
	resp.Header.Set(FieldContentType, "application/http;msgtype=response")
	resp.Header.Set(FieldBlockDigest, Digest(response))
	if p := HTTPPayload(response); p != nil {
		resp.Header.Set(FieldPayloadDigest, Digest(p))
	}
	if truncated != "" {
		resp.Header.Set(FieldTruncated, truncated)
	}
	e := &EncodedExchange{recs: []*Record{resp}}
	digest, orig, isOrig := originalOf(resp)
	var prior original
	revisit := false
	w.mu.Lock()
	infoID := w.infoID
	if isOrig && !w.opts.NoRevisits {
		prior, revisit = w.digests.get(digest)
	}
	w.mu.Unlock()
	if revisit {
		revisitOf(resp, prior, len(HTTPPayload(response)))
	} else if isOrig && !w.opts.NoRevisits {
		e.digest, e.orig = digest, orig
	}
	if request != nil {
		req := &Record{Block: request}
		req.Header.Set(FieldType, TypeRequest)
		req.Header.Set(FieldRecordID, NewRecordID())
		req.Header.Set(FieldDate, d)
		req.Header.Set(FieldTargetURI, target)
		req.Header.Set(FieldConcurrentTo, resp.ID())
		req.Header.Set(FieldContentType, "application/http;msgtype=request")
		req.Header.Set(FieldBlockDigest, Digest(request))
		e.recs = append(e.recs, req)
	}
	if len(metadata) > 0 {
		meta := &Record{Block: encodeFields(metadata)}
		meta.Header.Set(FieldType, TypeMetadata)
		meta.Header.Set(FieldRecordID, NewRecordID())
		meta.Header.Set(FieldDate, d)
		meta.Header.Set(FieldTargetURI, target)
		meta.Header.Set(FieldConcurrentTo, resp.ID())
		meta.Header.Set(FieldContentType, "application/warc-fields")
		e.recs = append(e.recs, meta)
	}
	if err := w.encode(e, infoID); err != nil {
		return nil, err
	}
	return e, nil
}

// AddConversion adds to e, before it is written, a conversion record
// (WARC 1.1 §6.8): another form of the response's content that archiving
// made, of the given media type — the document a browser built from the
// page once its scripts ran, for one. It names the response (or revisit)
// record in WARC-Refers-To, carries the response's target and date, and
// lands in the same file with the rest of the exchange. It is not in the
// CDXJ index: replay serves the response. Safe for concurrent use with
// other exchanges; not with another call on e.
func (w *Writer) AddConversion(e *EncodedExchange, contentType string, block []byte) error {
	resp := e.recs[0]
	c := &Record{Block: block}
	c.Header.Set(FieldType, TypeConversion)
	c.Header.Set(FieldRecordID, NewRecordID())
	c.Header.Set(FieldDate, resp.Header.Get(FieldDate))
	c.Header.Set(FieldTargetURI, resp.TargetURI())
	c.Header.Set(FieldRefersTo, resp.ID())
	c.Header.Set(FieldContentType, contentType)
	c.Header.Set(FieldBlockDigest, Digest(block))
	if e.infoID != "" {
		c.Header.Set(FieldWarcinfoID, e.infoID)
	}
	enc := getEncoder(!w.opts.Uncompressed)
	defer putEncoder(enc)
	n := e.data.Len()
	if err := enc.encode(c, &e.data); err != nil {
		e.data.Truncate(n) // e stands as it was
		return err
	}
	e.recs = append(e.recs, c)
	return nil
}

// encode encodes e's records into e.data, naming warcinfo record infoID.
func (w *Writer) encode(e *EncodedExchange, infoID string) error {
	e.infoID = infoID
	e.data.Reset()
	enc := getEncoder(!w.opts.Uncompressed)
	defer putEncoder(enc)
	for i, r := range e.recs {
		if infoID != "" {
			r.Header.Set(FieldWarcinfoID, infoID)
		}
		if i == 0 {
			e.resp = int64(e.data.Len())
		}
		if err := enc.encode(r, &e.data); err != nil {
			return err
		}
	}
	return nil
}

// WriteEncoded appends an exchange EncodeExchange prepared, with one
// write, rotating first if the current file is full; the records land
// in one file, all of them or, if the write fails, none. It returns the
// response record's file and offset. Records encoded before a rotation
// (they name the previous file's warcinfo record) are encoded again.
// Safe for concurrent use.
func (w *Writer) WriteEncoded(e *EncodedExchange) (file string, offset int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.begin(); err != nil {
		return "", 0, err
	}
	if e.infoID != w.infoID {
		if err := w.encode(e, w.infoID); err != nil {
			return "", 0, err
		}
	}
	start := w.rw.Offset()
	if err := w.rw.writeRaw(e.data.Bytes()); err != nil {
		w.undo(start)
		return "", 0, err
	}
	for _, r := range e.recs {
		r.Offset += start
	}
	w.last, w.end = start, w.rw.Offset()
	if e.digest != "" {
		w.addOriginal(e.digest, e.orig)
	}
	if !w.opts.NoIndex {
		// The records' lengths: they were encoded one after another.
		for i, r := range e.recs {
			end := w.end
			if i+1 < len(e.recs) {
				end = e.recs[i+1].Offset
			}
			w.indexRecord(r, end-r.Offset)
		}
	}
	return w.files[len(w.files)-1], start + e.resp, nil
}

// indexRecord notes r, length bytes long in the current file, for the
// file's CDXJ index, if an index holds such records.
func (w *Writer) indexRecord(r *Record, length int64) {
	if e, ok := indexEntry(r, length, w.name); ok {
		w.index = append(w.index, e)
	}
}

// remember notes r, just written, as the original of its payload for
// revisits, if it may be one.
func (w *Writer) remember(r *Record) {
	if w.opts.NoRevisits {
		return
	}
	if d, o, ok := originalOf(r); ok {
		w.addOriginal(d, o)
	}
}

// addOriginal adds an original to the digest table and, if it was
// added, to the current file's originals.
func (w *Writer) addOriginal(digest string, o original) {
	if e, ok := w.digests.add(digest, o); ok {
		w.origs = append(w.origs, e)
	}
}

// begin readies the Writer for a write: it fails if the Writer is closed
// or broken, and opens the first file, or the next one when the current
// file is full. It is the only place files rotate, so that a write's
// records share a file.
func (w *Writer) begin() error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if w.rw != nil && w.rw.Offset() < w.opts.MaxFileSize {
		return nil
	}
	return w.rotate()
}

// writeLocked writes r to the current file, which begin has opened.
func (w *Writer) writeLocked(r *Record) error {
	if w.infoID != "" && r.Header.Get(FieldWarcinfoID) == "" && r.Type() != TypeWarcinfo {
		r.Header.Set(FieldWarcinfoID, w.infoID)
	}
	if r.Header.Get(FieldDate) == "" {
		r.Header.Set(FieldDate, w.opts.Now().UTC().Format(time.RFC3339))
	}
	return w.rw.Write(r)
}

// undo cuts the current file back to start, the offset a failed write
// began at, so that no part of the write stays. If that fails too, the
// Writer is broken: the file holds a partial write after the last
// position, and writing on would bury it.
func (w *Writer) undo(start int64) {
	if w.rw.Offset() == start {
		return
	}
	err := w.f.Truncate(start)
	if err == nil {
		_, err = w.f.Seek(start, io.SeekStart)
	}
	if err != nil {
		w.err = &Error{Op: "write", Err: fmt.Errorf("cutting off a failed write: %w", err)}
		return
	}
	w.rw.n = start
}

// rotate closes the current file, if any, and creates the next one with
// its warcinfo record.
func (w *Writer) rotate() error {
	if w.f != nil {
		// The file is complete: synced, so that its index never names
		// records the disk lost, then indexed.
		err := w.f.Sync()
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		w.f, w.rw = nil, nil
		if err != nil {
			return &Error{Op: "rotate", Err: err}
		}
		testHook("closed")
		w.flushIndex()
		testHook("indexed")
	}
	ext := ".warc.gz"
	if w.opts.Uncompressed {
		ext = ".warc"
	}
	stamp := max(w.opts.Now().UTC().Format(stampLayout), w.stamp)
	var (
		name, path string
		f          *os.File
	)
	rw := NewRecordWriter(nil, !w.opts.Uncompressed)
	var info *Record
	for tries := 0; ; tries++ {
		name = fmt.Sprintf("%s-%s-%05d%s", w.opts.Prefix, stamp, w.seq, ext)
		w.seq++
		path = filepath.Join(w.opts.Dir, name)
		// The warcinfo record names the file, so it is encoded for each
		// name tried.
		info = w.warcinfo(name)
		rw.buf.Reset()
		if err := rw.enc.encode(info, &rw.buf); err != nil {
			return &Error{Op: "rotate", Err: err}
		}
		var err error
		f, err = w.create(path, rw.buf.Bytes())
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries == maxNameTries {
			return &Error{Op: "rotate", Err: err}
		}
	}
	w.stamp = stamp
	rw.w, rw.n = f, int64(rw.buf.Len())
	testHook("created")
	w.f, w.rw = f, rw
	w.files = append(w.files, path)
	w.infoID = info.ID()
	w.name, w.last, w.end = name, 0, rw.Offset()
	w.wrote = true
	return nil
}

// warcinfo returns the warcinfo record that starts the file called name.
func (w *Writer) warcinfo(name string) *Record {
	fields := map[string]string{"software": w.opts.Software, "format": "WARC File Format 1.1", "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}
	for k, v := range w.opts.Info {
		fields[k] = v
	}
	fields[seriesField] = w.series
	info := &Record{Block: encodeFields(fields)}
	info.Header.Set(FieldType, TypeWarcinfo)
	info.Header.Set(FieldRecordID, NewRecordID())
	info.Header.Set(FieldDate, w.opts.Now().UTC().Format(time.RFC3339))
	info.Header.Set(FieldFilename, name)
	info.Header.Set(FieldContentType, "application/warc-fields")
	return info
}

// create makes the file at path holding data, the encoded warcinfo
// record, and opens it for appending after it; it fails with an error
// wrapping fs.ErrExist if the name is taken. The file appears under its
// name with data whole, never empty, wherever a kill lands: data is
// written to the series' temporary file (tempPath), which is then
// hard-linked to path and unlinked. A link, unlike a rename, fails rather
// than replace the file a Writer beside this one just made. A kill
// leaves at most the temporary file, which Rewind removes; an empty file
// of the prefix would be one Rewind cannot tell from the file a Writer
// beside this one is creating, so it would stay, without an index.
//
// On a file system without hard links (FAT, some network file systems)
// the file is created empty and data written into it, in one write: there
// a kill between the two leaves an empty file.
func (w *Writer) create(path string, data []byte) (*os.File, error) {
	tmp := tempPath(w.opts.Dir, w.opts.Prefix, w.series)
	// Removed rather than truncated: after a kill between the link and
	// the unlink, it is a second name of a WARC file.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	t, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = t.Write(data)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	testHook("temporary")
	err = link(tmp, path)
	if err == nil {
		testHook("linked")
	}
	// An unlink that fails leaves the name to the next rotation or Rewind.
	os.Remove(tmp)
	if errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if err != nil {
		// No hard links here: the file is created, then written.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(data); err != nil {
			// The file holds no complete record: removed, so that no
			// reader meets its torn warcinfo record.
			f.Close()
			os.Remove(path)
			return nil, err
		}
		return f, nil
	}
	// Opened again rather than kept open under the temporary name: a file
	// open on Windows cannot be unlinked.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		if _, err = f.Seek(int64(len(data)), io.SeekStart); err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return f, nil
}

// link is os.Link; a test replaces it to act as a file system without
// hard links.
var link = os.Link

// tempPath returns the path of the temporary file a Writer of series
// creates its files through: hidden, and not of the WARC names of the
// prefix, so that no listing takes it for a WARC file; named after the
// series, so that Rewind, which continues the series, removes it knowing
// that no other Writer is using it.
func tempPath(dir, prefix, series string) string {
	return filepath.Join(dir, "."+prefix+"-"+series+".tmp")
}

// maxNameTries bounds the names rotate tries when the next ones are
// taken, by a Writer of the same prefix running beside this one.
const maxNameTries = 1000

// Close flushes and closes the current file and writes its CDXJ index.
// Further writes fail with ErrClosed. It returns the first error of
// writing an index, if any index could not be written (see flushIndex).
// Safe for concurrent use; costs two fsyncs and the index.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return w.indexErr
	}
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return &Error{Op: "close", Err: err}
	}
	if err := w.f.Close(); err != nil {
		return &Error{Op: "close", Err: err}
	}
	w.flushIndex()
	return w.indexErr
}

// flushIndex writes the CDXJ index and the originals file of the file
// just completed, w.end bytes long. One that cannot be written does not
// stop the writes (the WARC files are the archive; IndexFile rebuilds an
// index from them, Rewind reads a file without its originals whole): the
// first such error is kept, and Close returns it.
func (w *Writer) flushIndex() {
	entries, origs := w.index, w.origs
	w.index, w.origs = nil, nil
	if w.name == "" {
		return
	}
	path := filepath.Join(w.opts.Dir, w.name)
	var err error
	if !w.opts.NoIndex {
		err = writeIndex(path, entries)
	}
	if !w.opts.NoRevisits {
		err = errors.Join(err, writeOriginals(path, w.series, w.end, origs))
	}
	if err != nil && w.indexErr == nil {
		w.indexErr = err
	}
}

// seriesField names the warcinfo field that holds a Writer's series, the
// identity Rewind recognises its files by.
const seriesField = "crawlkit-series"

// newSeries returns a fresh series identity: 16 random hex digits.
func newSeries() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b[:])
}

// seriesFile is a file of a Writer's prefix, its name parsed.
type seriesFile struct {
	name  string
	stamp string
	seq   int
}

// listFiles returns the files of prefix in dir, by sequence number.
func listFiles(dir, prefix string) ([]seriesFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	var files []seriesFile
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if stamp, seq, ok := parseName(prefix, e.Name()); ok {
			files = append(files, seriesFile{e.Name(), stamp, seq})
		}
	}
	slices.SortFunc(files, func(a, b seriesFile) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return files, nil
}

// parseName parses a file name Writer makes for prefix:
// prefix-YYYYMMDDhhmmss-N.warc or .warc.gz, N of up to 9 digits.
func parseName(prefix, name string) (stamp string, seq int, ok bool) {
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return "", 0, false
	}
	if r, gz := strings.CutSuffix(rest, ".warc.gz"); gz {
		rest = r
	} else if rest, ok = strings.CutSuffix(rest, ".warc"); !ok {
		return "", 0, false
	}
	stamp, n, ok := strings.Cut(rest, "-")
	if !ok || len(stamp) != len(stampLayout) || !digits(stamp) || n == "" || len(n) > 9 || !digits(n) {
		return "", 0, false
	}
	seq, _ = strconv.Atoi(n)
	return stamp, seq, true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// encodeFields encodes an application/warc-fields block, keys sorted so
// the output is deterministic. CR and LF in values are replaced by spaces.
func encodeFields(m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, ": "...)
		for i := 0; i < len(m[k]); i++ {
			c := m[k][i]
			if c == '\r' || c == '\n' {
				c = ' '
			}
			b = append(b, c)
		}
		b = append(b, "\r\n"...)
	}
	return b
}

// testHookKill, set by a test, is called at the steps of a rotation (and
// of writing an index) that a kill may fall between, with the step's
// name, so that the test can kill the process there.
var testHookKill func(step string)

func testHook(step string) {
	if testHookKill != nil {
		testHookKill(step)
	}
}
