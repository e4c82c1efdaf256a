package frontier

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"

	"github.com/crawlkit/crawlkit/internal/wire"
)

// urlVersion starts every encoded URL. Version 1 had no Sitemap,
// ChangeFreq and validators (ETag, LastModified); it is still read.
const (
	urlVersion   = 2
	urlVersionV1 = 1
)

// maxRecord bounds one encoded URL so a corrupt length cannot make a
// reader allocate without limit.
const maxRecord = 1 << 20

// AppendBinary appends the binary encoding of u to b (encoding.BinaryAppender).
// Anchor, Source and LastMod are not encoded, nor Key when it is
// HostKey(URL); Sitemap is clamped to 0..255.
// The encoding is stable across versions of this package: a leading
// version byte, then varints and length-prefixed strings.
func (u *URL) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, urlVersion)
	b = binary.AppendUvarint(b, uint64(len(u.URL)))
	b = append(b, u.URL...)
	// A Key equal to the default is left out: it is derived again on
	// decoding, as a substring of URL.
	if key := u.Key; key == HostKey(u.URL) {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(key))+1)
		b = append(b, key...)
	}
	b = binary.AppendVarint(b, int64(u.Priority))
	b = binary.AppendVarint(b, int64(u.Depth))
	b = binary.LittleEndian.AppendUint64(b, u.Fingerprint)
	b = binary.AppendUvarint(b, uint64(u.History.Fetches))
	b = binary.AppendUvarint(b, uint64(u.History.Changes))
	b = binary.AppendVarint(b, unixNano(u.History.First))
	b = binary.AppendVarint(b, unixNano(u.History.Last))
	b = binary.AppendVarint(b, unixNano(u.Due))
	b = append(b, byte(min(max(u.Sitemap, 0), 255)), byte(u.ChangeFreq))
	b = binary.AppendUvarint(b, uint64(len(u.ETag)))
	b = append(b, u.ETag...)
	b = binary.AppendUvarint(b, uint64(len(u.LastModified)))
	b = append(b, u.LastModified...)
	return b, nil
}

// MarshalBinary returns the encoding of AppendBinary.
func (u *URL) MarshalBinary() ([]byte, error) { return u.AppendBinary(nil) }

// UnmarshalBinary decodes data written by AppendBinary into u. It returns
// an error wrapping ErrCorrupt, never panics, on malformed input.
func (u *URL) UnmarshalBinary(data []byte) error {
	d := decoder{wire.Decoder{B: data}}
	v := d.Byte()
	if v != urlVersion && v != urlVersionV1 {
		return &Error{Op: "decode", Err: ErrCorrupt}
	}
	var x URL
	x.URL = d.str()
	if n := d.Uvarint(); n > 0 && !d.Bad {
		x.Key = d.strN(n - 1)
	} else {
		x.Key = HostKey(x.URL)
	}
	x.Priority = d.int()
	x.Depth = d.int()
	x.Fingerprint = d.Uint64()
	x.History.Fetches = d.u32()
	x.History.Changes = d.u32()
	x.History.First = fromUnixNano(d.Varint())
	x.History.Last = fromUnixNano(d.Varint())
	x.Due = fromUnixNano(d.Varint())
	if v >= 2 {
		x.Sitemap = int(d.Byte())
		if x.ChangeFreq = ChangeFreq(d.Byte()); x.ChangeFreq >= numFreqs {
			d.Bad = true
		}
		x.ETag = d.str()
		x.LastModified = d.str()
	}
	if !d.Done() || x.URL == "" {
		return &Error{Op: "decode", Err: ErrCorrupt}
	}
	*u = x
	return nil
}

// decoder reads a URL record: a wire.Decoder with the record's types.
type decoder struct{ wire.Decoder }

func (d *decoder) int() int {
	v := d.Varint()
	if v > math.MaxInt32 || v < math.MinInt32 {
		d.Bad = true
		return 0
	}
	return int(v)
}

func (d *decoder) u32() uint32 {
	v := d.Uvarint()
	if v > math.MaxUint32 {
		d.Bad = true
		return 0
	}
	return uint32(v)
}

func (d *decoder) str() string { return d.strN(d.Uvarint()) }

func (d *decoder) strN(n uint64) string { return string(d.Fixed(n, math.MaxUint64)) }

// checkpointMagic starts every checkpoint stream.
const checkpointMagic = "crawlkit frontier checkpoint v1\n"

// CheckpointWriter writes a checkpoint stream: a header, one
// length-prefixed record per URL, and a trailer with the count and a
// CRC-32C of the records, so that a truncated or damaged stream is
// detected on restore. Not safe for concurrent use.
type CheckpointWriter struct {
	w   *bufio.Writer
	crc uint32
	n   uint64
	buf []byte
	err error
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewCheckpointWriter starts a checkpoint stream on w.
func NewCheckpointWriter(w io.Writer) *CheckpointWriter {
	cw := &CheckpointWriter{w: bufio.NewWriterSize(w, 64<<10)}
	_, cw.err = cw.w.WriteString(checkpointMagic)
	return cw
}

// Write appends one URL. Errors are sticky and also returned by Close.
func (cw *CheckpointWriter) Write(u *URL) error {
	if cw.err != nil {
		return cw.err
	}
	rec, _ := u.AppendBinary(cw.buf[:0])
	var hb [binary.MaxVarintLen64]byte
	hdr := binary.AppendUvarint(hb[:0], uint64(len(rec)))
	cw.crc = crc32.Update(cw.crc, castagnoli, rec)
	if _, err := cw.w.Write(hdr); err != nil {
		cw.err = err
		return err
	}
	if _, err := cw.w.Write(rec); err != nil {
		cw.err = err
		return err
	}
	cw.buf = rec
	cw.n++
	return nil
}

// Close writes the trailer and flushes; it does not close the underlying
// writer.
func (cw *CheckpointWriter) Close() error {
	if cw.err != nil {
		return cw.err
	}
	t := binary.AppendUvarint(nil, 0)
	t = binary.AppendUvarint(t, cw.n)
	t = binary.LittleEndian.AppendUint32(t, cw.crc)
	if _, err := cw.w.Write(t); err != nil {
		cw.err = err
		return err
	}
	cw.err = cw.w.Flush()
	return cw.err
}

// Err returns the first error met.
func (cw *CheckpointWriter) Err() error { return cw.err }

// CheckpointReader reads a stream written by CheckpointWriter. Not safe
// for concurrent use.
type CheckpointReader struct {
	r    *bufio.Reader
	crc  uint32
	n    uint64
	buf  []byte
	err  error
	init bool
}

// NewCheckpointReader reads a checkpoint stream from r.
func NewCheckpointReader(r io.Reader) *CheckpointReader {
	return &CheckpointReader{r: bufio.NewReaderSize(r, 64<<10)}
}

func corrupt(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Op: "restore", Err: ErrCorrupt}
	}
	return &Error{Op: "restore", Err: err}
}

// Next returns the next URL, io.EOF after a complete, intact stream, and
// an error wrapping ErrCorrupt when the stream is damaged or truncated.
func (cr *CheckpointReader) Next() (URL, error) {
	if cr.err != nil {
		return URL{}, cr.err
	}
	if !cr.init {
		cr.init = true
		hdr := make([]byte, len(checkpointMagic))
		if _, err := io.ReadFull(cr.r, hdr); err != nil || string(hdr) != checkpointMagic {
			cr.err = corrupt(err)
			return URL{}, cr.err
		}
	}
	n, err := binary.ReadUvarint(cr.r)
	if err != nil {
		cr.err = corrupt(err)
		return URL{}, cr.err
	}
	if n == 0 {
		cnt, err := binary.ReadUvarint(cr.r)
		var sum [4]byte
		if err == nil {
			_, err = io.ReadFull(cr.r, sum[:])
		}
		switch {
		case err != nil:
			cr.err = corrupt(err)
		case cnt != cr.n || binary.LittleEndian.Uint32(sum[:]) != cr.crc:
			cr.err = &Error{Op: "restore", Err: ErrCorrupt}
		default:
			cr.err = io.EOF
		}
		return URL{}, cr.err
	}
	if n > maxRecord {
		cr.err = &Error{Op: "restore", Err: ErrCorrupt}
		return URL{}, cr.err
	}
	if uint64(cap(cr.buf)) < n {
		cr.buf = make([]byte, n)
	}
	cr.buf = cr.buf[:n]
	if _, err := io.ReadFull(cr.r, cr.buf); err != nil {
		cr.err = corrupt(err)
		return URL{}, cr.err
	}
	cr.crc = crc32.Update(cr.crc, castagnoli, cr.buf)
	var u URL
	if err := u.UnmarshalBinary(cr.buf); err != nil {
		cr.err = err
		return URL{}, err
	}
	cr.n++
	return u, nil
}

// Restore reads a checkpoint from r and adds its URLs to f (normally a
// new, empty frontier), in batches; URLs that were leased when the
// checkpoint was taken are queued again, revisits keep their due time.
// It returns the number of URLs added. The whole stream is validated
// before its last batch is added, but earlier batches are already in f
// when a damaged stream is detected.
func Restore(ctx context.Context, f Frontier, r io.Reader) (int, error) {
	cr := NewCheckpointReader(r)
	batch := make([]URL, 0, 1024)
	total := 0
	for {
		u, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return total, err
		}
		batch = append(batch, u)
		if len(batch) == cap(batch) {
			if err := f.Add(ctx, batch...); err != nil {
				return total, err
			}
			total += len(batch)
			batch = batch[:0]
		}
	}
	if err := f.Add(ctx, batch...); err != nil {
		return total, err
	}
	return total + len(batch), nil
}
