package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// IndexSuffix is appended to a WARC file's name to name its CDXJ index.
const IndexSuffix = ".cdxj"

// ErrIndexFormat is wrapped by the error ParseIndexLine returns for a line
// that is not a CDXJ line.
var ErrIndexFormat = errors.New("malformed CDXJ line")

// IndexEntry is one line of a CDXJ index, pywb's format: the record's SURT
// key, its 14-digit timestamp, and a JSON block naming the record
// (url, mime, status, digest, length, offset, filename):
//
//	com,example)/a 20261126120000 {"url": "http://example.com/a", "mime": "text/html", "status": "200", "digest": "sha1:...", "length": "1043", "offset": "2360", "filename": "crawlkit-20261126120000-00000.warc.gz"}
//
// The JSON values are strings, as pywb's indexer writes them; empty
// fields (a resource without status) are left out.
type IndexEntry struct {
	Key       string // SURT(URL)
	Timestamp string // YYYYMMDDhhmmss of the record's WARC-Date, UTC
	URL       string // WARC-Target-URI
	// Mime is the media type of the payload: the HTTP Content-Type of a
	// response (without parameters), "warc/revisit" for a revisit, the
	// record's Content-Type for other records.
	Mime     string
	Status   int    // HTTP status of a response or revisit; 0 for none
	Digest   string // WARC-Payload-Digest, "sha1:BASE32"
	Length   int64  // bytes of the record in the file (its gzip member)
	Offset   int64  // where the record starts in the file
	Filename string // the WARC file's base name
}

// AppendLine appends e's CDXJ line to b, without a line break. Strings are
// escaped as JSON requires; nothing else is, so that the line reads as
// pywb's indexer writes it. Allocates only to grow b.
func (e *IndexEntry) AppendLine(b []byte) []byte {
	b = append(b, e.Key...)
	b = append(b, ' ')
	b = append(b, e.Timestamp...)
	b = append(b, ` {"url": `...)
	b = appendJSONString(b, e.URL)
	if e.Mime != "" {
		b = append(b, `, "mime": `...)
		b = appendJSONString(b, e.Mime)
	}
	if e.Status != 0 {
		b = append(b, `, "status": "`...)
		b = strconv.AppendInt(b, int64(e.Status), 10)
		b = append(b, '"')
	}
	if e.Digest != "" {
		b = append(b, `, "digest": `...)
		b = appendJSONString(b, e.Digest)
	}
	b = append(b, `, "length": "`...)
	b = strconv.AppendInt(b, e.Length, 10)
	b = append(b, `", "offset": "`...)
	b = strconv.AppendInt(b, e.Offset, 10)
	b = append(b, `", "filename": `...)
	b = appendJSONString(b, e.Filename)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// indexJSON is the JSON block of a CDXJ line as read. Numbers are
// accepted as JSON strings (pywb) or numbers (other indexers).
type indexJSON struct {
	URL      string  `json:"url"`
	Mime     string  `json:"mime"`
	Status   flexInt `json:"status"`
	Digest   string  `json:"digest"`
	Length   flexInt `json:"length"`
	Offset   flexInt `json:"offset"`
	Filename string  `json:"filename"`
}

type flexInt struct {
	n   int64
	set bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" || s == "-" {
			return nil // pywb writes "-" for a missing status
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("not a non-negative integer: %s", truncate(string(b)))
	}
	f.n, f.set = n, true
	return nil
}

// ParseIndexLine parses one CDXJ line (a trailing line break is allowed):
// "KEY TIMESTAMP {JSON}". The JSON block must hold url, offset and
// filename; status and length may be JSON strings or numbers. A line
// that is not of this form fails with an error wrapping ErrIndexFormat.
// Cost: one JSON decode.
func ParseIndexLine(line []byte) (IndexEntry, error) {
	bad := func(format string, args ...any) (IndexEntry, error) {
		return IndexEntry{}, fmt.Errorf("warc: %w: "+format, append([]any{ErrIndexFormat}, args...)...)
	}
	line = bytes.TrimRight(line, "\r\n")
	key, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(key) == 0 {
		return bad("no key")
	}
	ts, js, ok := bytes.Cut(rest, []byte{' '})
	if !ok || len(ts) < 4 || len(ts) > 17 || !digits(string(ts)) {
		return bad("timestamp %q", truncate(string(ts)))
	}
	var j indexJSON
	if err := json.Unmarshal(js, &j); err != nil {
		return bad("JSON block: %v", err)
	}
	switch {
	case j.URL == "":
		return bad("no url")
	case !j.Offset.set:
		return bad("no offset")
	case j.Filename == "":
		return bad("no filename")
	case j.Status.n > 999:
		return bad("status %d", j.Status.n)
	}
	return IndexEntry{
		Key: string(key), Timestamp: string(ts), URL: j.URL, Mime: j.Mime,
		Status: int(j.Status.n), Digest: j.Digest, Length: j.Length.n,
		Offset: j.Offset.n, Filename: j.Filename,
	}, nil
}

// indexEntry returns the CDXJ entry of rec, length bytes long in the file
// called filename, and false for a record an index leaves out: pywb's
// indexer indexes response, revisit and resource records and metadata
// records that are not application/warc-fields (crawlkit's are), and
// every record needs a target URI with a host and a date.
func indexEntry(rec *Record, length int64, filename string) (IndexEntry, bool) {
	typ := rec.Type()
	ct := rec.Header.Get(FieldContentType)
	switch typ {
	case TypeResponse, TypeRevisit, TypeResource:
	case TypeMetadata:
		if strings.HasPrefix(ct, "application/warc-fields") {
			return IndexEntry{}, false
		}
	default:
		return IndexEntry{}, false
	}
	target := rec.TargetURI()
	key, err := SURT(target)
	if err != nil {
		return IndexEntry{}, false
	}
	ts := timestamp14(rec.Header.Get(FieldDate))
	if ts == "" {
		return IndexEntry{}, false
	}
	e := IndexEntry{Key: key, Timestamp: ts, URL: target, Length: length, Offset: rec.Offset, Filename: filename}
	e.Digest = rec.Header.Get(FieldPayloadDigest)
	http := strings.HasPrefix(ct, "application/http")
	switch {
	case typ == TypeRevisit:
		e.Mime = "warc/revisit"
	case http:
		e.Mime = httpHeader(rec.Block, "Content-Type")
	default:
		e.Mime = ct
	}
	if i := strings.IndexAny(e.Mime, "; \t"); i >= 0 {
		e.Mime = e.Mime[:i]
	}
	e.Mime = strings.Clone(e.Mime) // not the whole header it was cut from
	if http {
		e.Status = httpStatus(rec.Block)
	}
	if e.Digest == "" && typ != TypeRevisit {
		// pywb's indexer computes a missing payload digest.
		if p := HTTPPayload(rec.Block); http && p != nil {
			e.Digest = Digest(p)
		} else if !http {
			e.Digest = Digest(rec.Block)
		}
	}
	return e, true
}

// IndexPath returns the path of the CDXJ index of the WARC file at path.
func IndexPath(warcPath string) string { return warcPath + IndexSuffix }

// IndexFile writes the CDXJ index of the WARC file at path to
// IndexPath(path), replacing any there, and returns its number of lines.
// It is how a Writer's index is rebuilt when it is missing or suspect:
// after Repair, for a file written with NoIndex or by another tool. The
// index is written to a temporary file, synced and renamed into place, so
// that a reader never meets half an index. A malformed record fails with
// an *Error wrapping ErrFormat, and no index is written. Cost: one
// sequential read of the file, and memory for its lines (about 250 bytes
// per response) while they are sorted.
func IndexFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, &Error{Op: "index", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, &Error{Op: "index", Err: err}
	}
	var entries []IndexEntry
	err = scanRecords(io.NewSectionReader(f, 0, st.Size()), st.Size(), filepath.Base(path), func(rec *Record, length int64) {
		if e, ok := indexEntry(rec, length, filepath.Base(path)); ok {
			entries = append(entries, e)
		}
	})
	if err != nil {
		return 0, fileErr(path, err)
	}
	if err := writeIndex(path, entries); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// scanRecords calls fn with every record of the WARC stream r, size bytes
// long, and the record's length in the stream: up to the next record's
// offset, or the end.
func scanRecords(r io.Reader, size int64, name string, fn func(rec *Record, length int64)) error {
	rd, err := NewReader(r, &ReaderOptions{MaxBlockBytes: 1 << 30})
	if err != nil {
		return err
	}
	var prev *Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if rd.single {
			return &Error{Op: "index " + name, Err: fmt.Errorf("%w: one gzip member for the whole file: records have no offsets to index", ErrFormat)}
		}
		if prev != nil {
			fn(prev, rec.Offset-prev.Offset)
		}
		prev = rec
	}
	if prev != nil {
		fn(prev, size-prev.Offset)
	}
	return nil
}

// writeIndex writes the CDXJ lines of entries, sorted, to the index of the
// WARC file at path: to a temporary file, synced, then renamed over the
// index, so that the index is either the old one or the new one, whole.
func writeIndex(warcPath string, entries []IndexEntry) error {
	lines := make([][]byte, len(entries))
	size := 0
	for i := range entries {
		lines[i] = entries[i].AppendLine(nil)
		size += len(lines[i]) + 1
	}
	// Whole lines sorted as bytes, as pywb expects (LC_ALL=C sort): keys
	// hold no byte at or below the space (SURT), so this is key order,
	// then timestamp.
	slices.SortFunc(lines, bytes.Compare)
	return writeWhole(IndexPath(warcPath), "index", size, func(bw *bufio.Writer) error {
		for _, l := range lines {
			bw.Write(l)
			bw.WriteByte('\n')
		}
		return nil
	})
}

// writeWhole writes the file dst through fill: to a temporary file,
// synced, then renamed over dst, so that dst is either the old file or
// the new one, whole. size is about the bytes fill writes; op names the
// file in errors.
func writeWhole(dst, op string, size int, fill func(*bufio.Writer) error) error {
	tmp := dst + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return &Error{Op: op, Err: err}
	}
	bw := bufio.NewWriterSize(f, min(max(size, 4096), 1<<20))
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		testHook(op + " temporary")
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return &Error{Op: op + " " + filepath.Base(dst), Err: err}
	}
	syncDir(filepath.Dir(dst))
	return nil
}
