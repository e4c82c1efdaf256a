package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Error is the error every operation of this package returns: what was
// being done, where in the file (for reads), and the cause.
type Error struct {
	Op     string // "read", "write", "open", "rotate", "close"
	Offset int64  // for reads: offset of the record (or gzip member) at fault
	Err    error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Op == "read" {
		return fmt.Sprintf("warc: read at offset %d: %v", e.Offset, e.Err)
	}
	return "warc: " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = errors.New("malformed WARC")

// ReaderOptions bounds what a Reader accepts. The zero value of each field
// means its default.
type ReaderOptions struct {
	// MaxHeaderBytes bounds a record's header; default 64 KiB.
	MaxHeaderBytes int
	// MaxBlockBytes bounds a record's content block, which Reader holds in
	// memory; default 64 MiB.
	MaxBlockBytes int64
}

// Reader reads records from a WARC file, plain or gzip (one member per
// record, or one member for the whole file). Not safe for concurrent use.
type Reader struct {
	opts   ReaderOptions
	src    *byteCounter // raw (possibly compressed) input with its offset
	gz     *gzip.Reader
	br     *bufio.Reader // decompressed record stream
	zip    bool
	off    int64 // offset in the uncompressed stream (plain files)
	err    error
	single bool // gzip whole-file: member boundaries are not record boundaries
	fresh  bool // gz is at the start of a member not yet read from
	breaks int  // line feeds read after the last record's block (Repair)

	memberStart int64 // compressed offset of the current gzip member
}

// NewReader returns a Reader over r, detecting gzip by its magic bytes.
// opts may be nil: every field takes its default. The options are copied,
// so the caller may change or reuse them afterwards.
func NewReader(r io.Reader, opts *ReaderOptions) (*Reader, error) {
	var o ReaderOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.MaxBlockBytes <= 0 {
		o.MaxBlockBytes = 64 << 20
	}
	src := &byteCounter{r: bufio.NewReaderSize(r, 64<<10)}
	rd := &Reader{opts: o, src: src}
	magic, err := src.r.Peek(2)
	if err != nil && len(magic) == 0 {
		if err == io.EOF {
			rd.br = bufio.NewReader(src)
			return rd, nil
		}
		return nil, &Error{Op: "read", Err: err}
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		rd.zip, rd.fresh = true, true
		rd.gz, err = gzip.NewReader(src)
		if err != nil {
			return nil, &Error{Op: "read", Err: fmt.Errorf("%w: gzip: %w", ErrFormat, err)}
		}
		rd.gz.Multistream(false)
		rd.br = bufio.NewReaderSize(rd.gz, 32<<10)
	} else {
		rd.br = bufio.NewReaderSize(src, 32<<10)
	}
	return rd, nil
}

// Next returns the next record, or io.EOF after the last. A malformed
// record yields an *Error wrapping ErrFormat, and also io.ErrUnexpectedEOF
// when the input ends inside the record (a torn tail, see Repair); the
// Reader then stops. The returned record is the caller's.
func (rd *Reader) Next() (*Record, error) {
	if rd.err != nil {
		return nil, rd.err
	}
	rec, err := rd.next()
	if err != nil {
		rd.err = err
	}
	return rec, err
}

// All returns an iterator over the remaining records; it stops at the
// first error, which it yields with a nil record (io.EOF is not yielded).
func (rd *Reader) All() func(yield func(*Record, error) bool) {
	return func(yield func(*Record, error) bool) {
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				return
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

func (rd *Reader) next() (*Record, error) {
	var start int64
	for {
		if rd.zip && !rd.single && !rd.fresh {
			// The previous record's member should be exhausted now; if
			// it is not, the file is one gzip member holding many records.
			_, err := rd.br.Peek(1)
			switch {
			case err == nil:
				rd.single = true
			case err != io.EOF:
				return nil, rd.fail(rd.memberStart, err)
			default:
				rd.memberStart = rd.src.n
				if err := rd.gz.Reset(rd.src); err != nil {
					if err == io.EOF {
						return nil, io.EOF
					}
					return nil, rd.fail(rd.memberStart, fmt.Errorf("%w: gzip: %w", ErrFormat, err))
				}
				rd.gz.Multistream(false)
				rd.br.Reset(rd.gz)
			}
		}
		rd.fresh = false
		start = rd.off
		if rd.zip && !rd.single {
			start = rd.memberStart
		}
		// Skip blank lines between records (some writers emit extras).
		empty := false
		for {
			b, err := rd.br.Peek(1)
			if len(b) == 0 {
				if err != io.EOF {
					return nil, rd.fail(start, err)
				}
				if !rd.zip || rd.single {
					return nil, io.EOF
				}
				empty = true // an empty gzip member: go on to the next
				break
			}
			if b[0] != '\r' && b[0] != '\n' {
				break
			}
			rd.br.ReadByte()
			rd.off++
		}
		if !empty {
			break
		}
	}
	rec := &Record{Offset: start}
	line, err := rd.line(start)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "WARC/") {
		return nil, rd.fail(start, fmt.Errorf("%w: version line %q", ErrFormat, truncate(line)))
	}
	hbytes := len(line)
	for {
		line, err := rd.line(start)
		if err != nil {
			return nil, err
		}
		if line == "" {
			break
		}
		hbytes += len(line)
		if hbytes > rd.opts.MaxHeaderBytes {
			return nil, rd.fail(start, fmt.Errorf("%w: header over %d bytes", ErrFormat, rd.opts.MaxHeaderBytes))
		}
		if (line[0] == ' ' || line[0] == '\t') && rec.Header.Len() > 0 {
			// Continuation line (WARC 1.1 §4 allows folded values).
			f := &rec.Header.fields[len(rec.Header.fields)-1]
			f.value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			return nil, rd.fail(start, fmt.Errorf("%w: header line %q", ErrFormat, truncate(line)))
		}
		rec.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	cl := rec.Header.Get(FieldContentLength)
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n < 0 {
		return nil, rd.fail(start, fmt.Errorf("%w: Content-Length %q", ErrFormat, truncate(cl)))
	}
	if n > rd.opts.MaxBlockBytes {
		return nil, rd.fail(start, fmt.Errorf("%w: block of %d bytes over the %d limit", ErrFormat, n, rd.opts.MaxBlockBytes))
	}
	// Grow the buffer as data arrives, so a lying Content-Length cannot
	// make us allocate more than the input holds.
	var block bytes.Buffer
	got, err := io.CopyN(&block, rd.br, n)
	rd.off += got
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: block truncated after %d of %d bytes: %w", ErrFormat, got, n, io.ErrUnexpectedEOF)
		}
		return nil, rd.fail(start, err)
	}
	rec.Block = block.Bytes()
	// The record ends with CRLF CRLF; tolerate bare LFs and a missing end
	// at the end of the input.
	rd.breaks = 0
	for i := 0; i < 4; i++ {
		b, err := rd.br.Peek(1)
		if len(b) == 0 || err != nil || (b[0] != '\r' && b[0] != '\n') {
			break
		}
		if b[0] == '\n' {
			rd.breaks++
		}
		rd.br.ReadByte()
		rd.off++
	}
	return rec, nil
}

func (rd *Reader) line(start int64) (string, error) {
	var buf []byte
	for {
		frag, err := rd.br.ReadSlice('\n')
		rd.off += int64(len(frag))
		buf = append(buf, frag...)
		if len(buf) > rd.opts.MaxHeaderBytes {
			return "", rd.fail(start, fmt.Errorf("%w: header over %d bytes", ErrFormat, rd.opts.MaxHeaderBytes))
		}
		if err == nil {
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			return "", rd.fail(start, fmt.Errorf("%w: header truncated: %w", ErrFormat, io.ErrUnexpectedEOF))
		}
		return "", rd.fail(start, err)
	}
	return strings.TrimRight(string(buf), "\r\n"), nil
}

func (rd *Reader) fail(off int64, err error) error {
	var we *Error
	if errors.As(err, &we) {
		return err
	}
	if !errors.Is(err, ErrFormat) && (errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF)) {
		err = fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return &Error{Op: "read", Offset: off, Err: err}
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// byteCounter counts the bytes consumed from r. It implements
// io.ByteReader so that compress/flate reads no further than the end of a
// gzip member, which keeps member offsets exact.
type byteCounter struct {
	r *bufio.Reader
	n int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *byteCounter) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
