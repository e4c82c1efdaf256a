package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/crawlkit/crawlkit/shingle"
)

// Durable is implemented by a ContentSeen whose state can be kept as an
// append-only log of its changes. The crawler keeps that log in its
// checkpoint directory, so a resumed crawl still knows the content it
// fetched before it was stopped or killed. Content and ExactContent
// implement it.
//
// A log is a sequence of records, each a 4-byte little-endian payload
// length, the CRC-32C of the payload and the payload: '+', the
// fingerprint (8 bytes), the URL (uvarint length and bytes), K (uvarint),
// the K MinHash values and the simhash (8 bytes each) of a recorded
// document; or '-' and the fingerprint of a forgotten one. ExactContent
// writes K = 0 and no simhash.
type Durable interface {
	// LogTo makes every later change (a document recorded by Seen, a
	// fingerprint forgotten) be written to w as one record, with one
	// Write call, before the call that made it returns; an error writing
	// it is returned by that call (the change itself stands). LogTo(nil)
	// stops logging.
	LogTo(w io.Writer)
	// Replay applies the records of r, as LogTo wrote them, and returns
	// the length of the complete records read. A record cut short at the
	// end (a process killed in mid-write) ends the replay without error:
	// truncate the log to the length returned before appending. A damaged
	// record, or one written with another K, is an *Error wrapping
	// ErrCorrupt or ErrMismatch.
	Replay(r io.Reader) (int64, error)
	// Rewrite writes the current state to w as a log that replays to it
	// (one record per document, nothing forgotten) and makes w the log:
	// later changes are appended to w. No change made meanwhile is lost
	// to either log. It compacts a log that forgotten documents have
	// grown (a continuous crawl's revisits).
	Rewrite(w io.Writer) error
}

var (
	// ErrCorrupt reports a damaged content log record.
	ErrCorrupt = errors.New("corrupt content log")
	// ErrMismatch reports a content log written with other options (a
	// different MinHash K) than the ContentSeen replaying it.
	ErrMismatch = errors.New("content log written with other options")
)

var (
	_ Durable = (*Content)(nil)
	_ Durable = (*ExactContent)(nil)
)

// maxRecord bounds a record's payload: a URL of up to 1 MiB and up to
// shingle.MaxK MinHash values.
const maxRecord = 1 + 8 + binary.MaxVarintLen64 + 1<<20 + binary.MaxVarintLen64 + 8*shingle.MaxK + 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// logRecord is one change of a content log.
type logRecord struct {
	add     bool
	fp      uint64
	url     string
	sig     shingle.Signature
	simhash uint64
}

// appendRecord appends the framed record to b.
func appendRecord(b []byte, r *logRecord) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0) // length and CRC, filled in below
	if !r.add {
		b = append(b, '-')
		b = binary.LittleEndian.AppendUint64(b, r.fp)
	} else {
		b = append(b, '+')
		b = binary.LittleEndian.AppendUint64(b, r.fp)
		url := r.url
		if len(url) > 1<<20 {
			url = url[:1<<20] // only the record's "first seen at"
		}
		b = binary.AppendUvarint(b, uint64(len(url)))
		b = append(b, url...)
		b = binary.AppendUvarint(b, uint64(len(r.sig)))
		for _, v := range r.sig {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		if len(r.sig) > 0 {
			b = binary.LittleEndian.AppendUint64(b, r.simhash)
		}
	}
	payload := b[start+8:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

// decodeRecord decodes a record's payload (without its frame).
func decodeRecord(p []byte) (logRecord, error) {
	var r logRecord
	if len(p) < 9 || p[0] != '+' && p[0] != '-' {
		return r, ErrCorrupt
	}
	r.add, r.fp, p = p[0] == '+', binary.LittleEndian.Uint64(p[1:]), p[9:]
	if !r.add {
		if len(p) != 0 {
			return r, ErrCorrupt
		}
		return r, nil
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return r, ErrCorrupt
	}
	r.url, p = string(p[k:k+int(n)]), p[k+int(n):]
	n, k = binary.Uvarint(p)
	if k <= 0 || n > shingle.MaxK {
		return r, ErrCorrupt
	}
	p = p[k:]
	want := 8 * int(n)
	if n > 0 {
		want += 8
	}
	if len(p) != want {
		return r, ErrCorrupt
	}
	if n > 0 {
		r.sig = make(shingle.Signature, n)
		for i := range r.sig {
			r.sig[i] = binary.LittleEndian.Uint64(p[8*i:])
		}
		r.simhash = binary.LittleEndian.Uint64(p[8*n:])
	}
	return r, nil
}

// replay reads the records of r and applies each with apply; see
// Durable.Replay.
func replay(op string, r io.Reader, apply func(*logRecord) error) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var frame [8]byte
	var payload []byte
	var off int64
	for n := 0; ; n++ {
		if _, err := io.ReadFull(br, frame[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return off, nil // the end, or a torn frame
			}
			return off, &Error{Op: op, Err: err}
		}
		size := binary.LittleEndian.Uint32(frame[:])
		if size > maxRecord {
			return off, &Error{Op: op, Subject: fmt.Sprintf("record %d at byte %d", n, off), Err: ErrCorrupt}
		}
		if cap(payload) < int(size) {
			payload = make([]byte, size)
		}
		payload = payload[:size]
		if _, err := io.ReadFull(br, payload); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return off, nil // a torn record
			}
			return off, &Error{Op: op, Err: err}
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(frame[4:]) {
			return off, &Error{Op: op, Subject: fmt.Sprintf("record %d at byte %d", n, off), Err: ErrCorrupt}
		}
		rec, err := decodeRecord(payload)
		if err == nil {
			err = apply(&rec)
		}
		if err != nil {
			return off, &Error{Op: op, Subject: fmt.Sprintf("record %d at byte %d", n, off), Err: err}
		}
		off += 8 + int64(size)
	}
}

// writeRecord writes r to w with one Write call; buf is reused scratch.
func writeRecord(w io.Writer, buf *[]byte, r *logRecord) error {
	*buf = appendRecord((*buf)[:0], r)
	if _, err := w.Write(*buf); err != nil {
		return &Error{Op: "log", Subject: fmt.Sprintf("%016x", r.fp), Err: err}
	}
	return nil
}

// LogTo implements Durable.
func (c *Content) LogTo(w io.Writer) {
	c.mu.Lock()
	c.log = w
	c.mu.Unlock()
}

// Replay implements Durable. Records written by ExactContent (K = 0) are
// kept for exact duplicates only.
func (c *Content) Replay(r io.Reader) (int64, error) {
	k := c.k
	return replay("Replay", r, func(rec *logRecord) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !rec.add {
			delete(c.docs, rec.fp)
			c.near.Remove(rec.fp)
			return nil
		}
		if len(rec.sig) != 0 && len(rec.sig) != k {
			return fmt.Errorf("%w: K = %d, not %d", ErrMismatch, len(rec.sig), k)
		}
		if _, ok := c.docs[rec.fp]; ok {
			return nil
		}
		if len(rec.sig) > 0 {
			if err := c.near.Insert(rec.fp, rec.sig, rec.simhash); err != nil {
				return err
			}
		}
		c.docs[rec.fp] = rec.url
		return nil
	})
}

// LogTo implements Durable.
func (c *ExactContent) LogTo(w io.Writer) {
	c.mu.Lock()
	c.log = w
	c.mu.Unlock()
}

// Replay implements Durable; the MinHash values of records written by
// Content are skipped.
func (c *ExactContent) Replay(r io.Reader) (int64, error) {
	return replay("Replay", r, func(rec *logRecord) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !rec.add {
			delete(c.docs, rec.fp)
			return nil
		}
		if c.docs == nil {
			c.docs = make(map[uint64]string)
		}
		if _, ok := c.docs[rec.fp]; !ok {
			c.docs[rec.fp] = rec.url
		}
		return nil
	})
}

// Rewrite implements Durable. Changes wait while the snapshot is written.
func (c *Content) Rewrite(w io.Writer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := snapshot(w, c.docs, func(r *logRecord) {
		r.sig, r.simhash, _ = c.near.Item(r.fp) // none: an exact-only record
	})
	if err == nil {
		c.log = w
	}
	return err
}

// Rewrite implements Durable. Changes wait while the snapshot is written.
func (c *ExactContent) Rewrite(w io.Writer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := snapshot(w, c.docs, func(*logRecord) {})
	if err == nil {
		c.log = w
	}
	return err
}

// snapshot writes one record per document of docs to w, in fingerprint
// order (so the same state writes the same bytes); fill completes each.
func snapshot(w io.Writer, docs map[uint64]string, fill func(*logRecord)) error {
	fps := make([]uint64, 0, len(docs))
	for fp := range docs {
		fps = append(fps, fp)
	}
	slices.Sort(fps)
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	for _, fp := range fps {
		r := logRecord{add: true, fp: fp, url: docs[fp]}
		fill(&r)
		buf = appendRecord(buf[:0], &r)
		if _, err := bw.Write(buf); err != nil {
			return &Error{Op: "Rewrite", Err: err}
		}
	}
	if err := bw.Flush(); err != nil {
		return &Error{Op: "Rewrite", Err: err}
	}
	return nil
}
