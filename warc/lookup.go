package warc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Index looks captures up in sorted CDXJ files (a Writer's, or pywb's) by
// binary search, reading a few lines of each file per lookup and holding
// none in memory, and reads the records they name.
//
// An Index is safe for concurrent use. Close it to close the files.
type Index struct {
	files []*indexFile
}

type indexFile struct {
	path string
	f    *os.File
	size int64
}

// OpenIndex opens the CDXJ files at paths. Each must be sorted as bytes
// (LC_ALL=C sort, as pywb requires and as a Writer writes them); records
// are read from the WARC file named by a line's filename, in the
// directory of the index file. Opening reads nothing but the files' sizes.
func OpenIndex(paths []string) (*Index, error) {
	ix := &Index{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			ix.Close()
			return nil, &Error{Op: "open", Err: err}
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			ix.Close()
			return nil, &Error{Op: "open", Err: err}
		}
		ix.files = append(ix.files, &indexFile{path: p, f: f, size: st.Size()})
	}
	return ix, nil
}

// OpenIndexDir is OpenIndex over every *.cdxj file in dir, in name order.
func OpenIndexDir(dir string) (*Index, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	var paths []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), IndexSuffix) {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return OpenIndex(paths)
}

// Lookup returns the captures of rawURL (the lines whose key is
// SURT(rawURL)) in every file, oldest first (by timestamp, then file
// order). A URL without captures returns none and no error; a URL SURT
// cannot key fails with an error wrapping ErrSURT, a malformed line met
// on the way with one wrapping ErrIndexFormat. Cost per file: O(log size)
// reads of a line each, then the lines of the URL.
func (ix *Index) Lookup(rawURL string) ([]IndexEntry, error) {
	key, err := SURT(rawURL)
	if err != nil {
		return nil, err
	}
	var out []IndexEntry
	for _, f := range ix.files {
		got, err := f.lookup(key)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	slices.SortStableFunc(out, func(a, b IndexEntry) int { return strings.Compare(a.Timestamp, b.Timestamp) })
	return out, nil
}

// Latest returns the latest capture of rawURL, and false if there is none.
func (ix *Index) Latest(rawURL string) (IndexEntry, bool, error) {
	es, err := ix.Lookup(rawURL)
	if err != nil || len(es) == 0 {
		return IndexEntry{}, false, err
	}
	return es[len(es)-1], true, nil
}

// Record reads the record e names: the WARC file e.Filename, at
// e.Offset, in the directory of the index files (that of the first one
// given to OpenIndex: a Writer's indexes lie beside their WARC files, in
// one directory). It fails with an
// *Error wrapping ErrFormat if no record starts there, or if the record
// there is not the one the line describes (another URL). Cost: one open
// and one record read.
func (ix *Index) Record(e IndexEntry) (*Record, error) {
	if len(ix.files) == 0 {
		return nil, &Error{Op: "read", Err: errors.New("the index has no files")}
	}
	if e.Filename != filepath.Base(e.Filename) || e.Filename == "." || e.Filename == ".." {
		return nil, &Error{Op: "read", Err: fmt.Errorf("%w: filename %q is not a base name", ErrFormat, e.Filename)}
	}
	path := filepath.Join(filepath.Dir(ix.files[0].path), e.Filename)
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Op: "read", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Op: "read", Err: err}
	}
	if e.Offset < 0 || e.Offset >= st.Size() {
		return nil, &Error{Op: "read", Offset: e.Offset, Err: fmt.Errorf("%w: offset beyond the end of %s", ErrFormat, e.Filename)}
	}
	n := st.Size() - e.Offset
	if e.Length > 0 {
		n = min(n, e.Length)
	}
	rd, err := NewReader(io.NewSectionReader(f, e.Offset, n), nil)
	if err != nil {
		return nil, &Error{Op: "read", Offset: e.Offset, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	rec, err := rd.Next()
	if err == io.EOF {
		err = &Error{Op: "read", Offset: e.Offset, Err: fmt.Errorf("%w: no record at offset", ErrFormat)}
	}
	if err != nil {
		return nil, err
	}
	rec.Offset = e.Offset
	if rec.TargetURI() != e.URL {
		return nil, &Error{Op: "read", Offset: e.Offset, Err: fmt.Errorf("%w: the record at offset is of %q, not %q", ErrFormat, truncate(rec.TargetURI()), truncate(e.URL))}
	}
	return rec, nil
}

// Close closes the index files.
func (ix *Index) Close() error {
	var first error
	for _, f := range ix.files {
		if err := f.f.Close(); err != nil && first == nil {
			first = err
		}
	}
	ix.files = nil
	return first
}

// scanWindow is the span of a file below which lookup stops bisecting and
// reads lines in order: a few lines, one read.
const scanWindow = 4 << 10

// lookup returns the lines of f whose key is key. It bisects the file by
// byte offset, keeping lo at the start of a line all of whose
// predecessors have smaller keys, and then reads lines from lo. A line
// whose key is not smaller may sit just after hi, so the final scan reads
// at most scanWindow bytes and the lines of the key.
func (f *indexFile) lookup(key string) ([]IndexEntry, error) {
	lo, hi := int64(0), f.size
	buf := make([]byte, 0, 512)
	for hi-lo > scanWindow {
		mid := lo + (hi-lo)/2
		start, line, err := f.lineAfter(mid, buf)
		if err != nil {
			return nil, err
		}
		if start >= hi || line == nil {
			hi = mid
			continue
		}
		if bytes.Compare(lineKey(line), []byte(key)) < 0 {
			lo = start
		} else {
			hi = mid
		}
		buf = line[:0]
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f.f, lo, f.size-lo), scanWindow)
	var out []IndexEntry
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			var long []byte
			long, err = readLongLine(br, line)
			line = long
		}
		if len(line) > 0 {
			switch c := bytes.Compare(lineKey(line), []byte(key)); {
			case c > 0:
				return out, nil
			case c == 0:
				e, perr := ParseIndexLine(line)
				if perr != nil {
					return nil, fmt.Errorf("%s: %w", f.path, perr)
				}
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, &Error{Op: "read " + f.path, Err: err}
		}
	}
}

// maxIndexLine bounds a CDXJ line; a longer one is malformed.
const maxIndexLine = 1 << 20

func readLongLine(br *bufio.Reader, first []byte) ([]byte, error) {
	long := append([]byte(nil), first...)
	for {
		frag, err := br.ReadSlice('\n')
		long = append(long, frag...)
		if len(long) > maxIndexLine {
			return nil, fmt.Errorf("warc: %w: line over %d bytes", ErrIndexFormat, maxIndexLine)
		}
		if err != bufio.ErrBufferFull {
			return long, err
		}
	}
}

// lineAfter returns the first line that starts after off (skipping the
// rest of the line off is in) and its start; a nil line at the end of the
// file.
func (f *indexFile) lineAfter(off int64, buf []byte) (int64, []byte, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(f.f, off, f.size-off), 1024)
	skipped := int64(0)
	for {
		frag, err := br.ReadSlice('\n')
		skipped += int64(len(frag))
		if err == nil {
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			return f.size, nil, nil
		}
		return 0, nil, &Error{Op: "read " + f.path, Err: err}
	}
	start := off + skipped
	// Only the key is compared: read up to the first space.
	line := buf[:0]
	for {
		frag, err := br.ReadSlice(' ')
		line = append(line, frag...)
		if err == nil || err == io.EOF {
			return start, line, nil
		}
		if err != bufio.ErrBufferFull {
			return 0, nil, &Error{Op: "read " + f.path, Err: err}
		}
		if len(line) > maxIndexLine {
			return 0, nil, fmt.Errorf("warc: %s: %w: key over %d bytes", f.path, ErrIndexFormat, maxIndexLine)
		}
	}
}

// lineKey returns the key of a CDXJ line: up to its first space, or its
// end.
func lineKey(line []byte) []byte {
	if i := bytes.IndexAny(line, " \r\n"); i >= 0 {
		return line[:i]
	}
	return line
}
