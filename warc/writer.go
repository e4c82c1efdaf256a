package warc

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// ErrClosed is returned by writes to a closed Writer.
var ErrClosed = errors.New("warc: writer closed")

// RecordWriter writes records to one stream, each record its own gzip
// member when compression is on (so a reader can seek to any record).
// It is not safe for concurrent use.
type RecordWriter struct {
	w    io.Writer
	gz   *gzip.Writer
	bw   *bufio.Writer
	n    int64 // bytes written to w
	zip  bool
	hbuf []byte
}

// NewRecordWriter returns a RecordWriter on w; gzipped selects one gzip
// member per record (the ".warc.gz" convention).
func NewRecordWriter(w io.Writer, gzipped bool) *RecordWriter {
	rw := &RecordWriter{zip: gzipped}
	rw.w = &countWriter{w: w, n: &rw.n}
	if gzipped {
		rw.gz, _ = gzip.NewWriterLevel(rw.w, gzip.DefaultCompression)
		rw.bw = bufio.NewWriterSize(rw.gz, 32<<10)
	} else {
		rw.bw = bufio.NewWriterSize(rw.w, 32<<10)
	}
	return rw
}

// Offset returns the number of bytes written so far: the offset the next
// record will start at.
func (rw *RecordWriter) Offset() int64 { return rw.n }

// Write writes r, filling in WARC-Record-ID, WARC-Date and Content-Length
// when they are missing (Content-Length is always set from the block), and
// sets r.Offset.
func (rw *RecordWriter) Write(r *Record) error {
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
	r.Offset = rw.n
	if rw.zip {
		rw.gz.Reset(rw.w)
	}
	b := append(rw.hbuf[:0], Version...)
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
	rw.hbuf = b
	if _, err := rw.bw.Write(b); err != nil {
		return &Error{Op: "write", Err: err}
	}
	if _, err := rw.bw.Write(r.Block); err != nil {
		return &Error{Op: "write", Err: err}
	}
	if _, err := rw.bw.WriteString("\r\n\r\n"); err != nil {
		return &Error{Op: "write", Err: err}
	}
	if err := rw.bw.Flush(); err != nil {
		return &Error{Op: "write", Err: err}
	}
	if rw.zip {
		if err := rw.gz.Close(); err != nil {
			return &Error{Op: "write", Err: err}
		}
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

type countWriter struct {
	w io.Writer
	n *int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// WriterOptions configures a Writer. The zero value of each field means its
// default.
type WriterOptions struct {
	// Dir is the directory WARC files are written to. Required.
	Dir string
	// Prefix starts every file name; default "crawlkit".
	Prefix string
	// MaxFileSize rotates to a new file once a file reaches this many
	// bytes; default 1 GiB (the WARC 1.1 annex recommendation).
	MaxFileSize int64
	// Uncompressed writes ".warc" files instead of ".warc.gz" with one gzip
	// member per record; default false.
	Uncompressed bool
	// Software names the writer in each file's warcinfo record; default
	// "crawlkit".
	Software string
	// Info adds fields to each file's warcinfo record (e.g. "operator",
	// "robots": "obey"), written in sorted key order.
	Info map[string]string
	// Now is the clock for WARC-Date; default time.Now.
	Now func() time.Time
}

// Writer writes records into a series of WARC files in a directory,
// starting each file with a warcinfo record and rotating by size. It is
// safe for concurrent use; records are written whole, one at a time.
type Writer struct {
	opts WriterOptions

	mu     sync.Mutex
	f      *os.File
	rw     *RecordWriter
	seq    int
	files  []string
	infoID string
	closed bool
	stamp  string
}

// NewWriter creates opts.Dir if needed and returns a Writer. The first file
// is created with the first record.
func NewWriter(opts WriterOptions) (*Writer, error) {
	if opts.Dir == "" {
		return nil, &Error{Op: "open", Err: errors.New("WriterOptions.Dir is empty")}
	}
	if opts.Prefix == "" {
		opts.Prefix = "crawlkit"
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = 1 << 30
	}
	if opts.Software == "" {
		opts.Software = "crawlkit"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	return &Writer{opts: opts, stamp: opts.Now().UTC().Format("20060102150405")}, nil
}

// Files returns the paths of the files written so far, oldest first.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.files...)
}

// Write writes one record, rotating first if the current file is full. It
// sets WARC-Warcinfo-ID to the current file's warcinfo record. The record's
// Offset is set; Location reports the file.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeLocked(r)
}

// WriteExchange writes a fetch as WARC's request, response and (when
// metadata is not empty) metadata records, linked by WARC-Concurrent-To.
// request and response are the raw HTTP messages; ip may be empty. All
// three land in the same file. It returns the response record's file and
// offset, for replay indexes.
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
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.rotateIfFull(); err != nil {
		return "", 0, err
	}
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
	if err := w.writeLocked(resp); err != nil {
		return "", 0, err
	}
	file, offset = w.files[len(w.files)-1], resp.Offset
	if request != nil {
		req := &Record{Block: request}
		req.Header.Set(FieldType, TypeRequest)
		req.Header.Set(FieldRecordID, NewRecordID())
		req.Header.Set(FieldDate, d)
		req.Header.Set(FieldTargetURI, target)
		req.Header.Set(FieldConcurrentTo, resp.ID())
		req.Header.Set(FieldContentType, "application/http;msgtype=request")
		req.Header.Set(FieldBlockDigest, Digest(request))
		if err := w.writeLocked(req); err != nil {
			return "", 0, err
		}
	}
	if len(metadata) > 0 {
		meta := &Record{Block: encodeFields(metadata)}
		meta.Header.Set(FieldType, TypeMetadata)
		meta.Header.Set(FieldRecordID, NewRecordID())
		meta.Header.Set(FieldDate, d)
		meta.Header.Set(FieldTargetURI, target)
		meta.Header.Set(FieldConcurrentTo, resp.ID())
		meta.Header.Set(FieldContentType, "application/warc-fields")
		if err := w.writeLocked(meta); err != nil {
			return "", 0, err
		}
	}
	return file, offset, nil
}

func (w *Writer) writeLocked(r *Record) error {
	if w.closed {
		return ErrClosed
	}
	if err := w.rotateIfFull(); err != nil {
		return err
	}
	if w.infoID != "" && r.Header.Get(FieldWarcinfoID) == "" && r.Type() != TypeWarcinfo {
		r.Header.Set(FieldWarcinfoID, w.infoID)
	}
	if r.Header.Get(FieldDate) == "" {
		r.Header.Set(FieldDate, w.opts.Now().UTC().Format(time.RFC3339))
	}
	return w.rw.Write(r)
}

// rotateIfFull opens the first file, or the next one when the current
// file has reached MaxFileSize.
func (w *Writer) rotateIfFull() error {
	if w.closed {
		return ErrClosed
	}
	if w.rw != nil && w.rw.Offset() < w.opts.MaxFileSize {
		return nil
	}
	if w.f != nil {
		if err := w.f.Close(); err != nil {
			return &Error{Op: "rotate", Err: err}
		}
		w.f, w.rw = nil, nil
	}
	ext := ".warc.gz"
	if w.opts.Uncompressed {
		ext = ".warc"
	}
	name := fmt.Sprintf("%s-%s-%05d%s", w.opts.Prefix, w.stamp, w.seq, ext)
	w.seq++
	path := filepath.Join(w.opts.Dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return &Error{Op: "rotate", Err: err}
	}
	w.f = f
	w.rw = NewRecordWriter(f, !w.opts.Uncompressed)
	w.files = append(w.files, path)

	fields := map[string]string{"software": w.opts.Software, "format": "WARC File Format 1.1", "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}
	for k, v := range w.opts.Info {
		fields[k] = v
	}
	info := &Record{Block: encodeFields(fields)}
	info.Header.Set(FieldType, TypeWarcinfo)
	info.Header.Set(FieldRecordID, NewRecordID())
	info.Header.Set(FieldDate, w.opts.Now().UTC().Format(time.RFC3339))
	info.Header.Set(FieldFilename, name)
	info.Header.Set(FieldContentType, "application/warc-fields")
	w.infoID = info.ID()
	return w.rw.Write(info)
}

// Close flushes and closes the current file. Further writes fail with
// ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return &Error{Op: "close", Err: err}
	}
	if err := w.f.Close(); err != nil {
		return &Error{Op: "close", Err: err}
	}
	return nil
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
