package warc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrBadPosition is wrapped by the *Error Rewind returns for a token that
// is not one Position makes, or names a file of another prefix.
var ErrBadPosition = errors.New("malformed WARC position")

// ErrPositionLost is wrapped by the *Error Rewind returns when the
// directory no longer holds what the position says was written: the file
// it names is gone, shorter than its offset, of another series, or does
// not end a complete write at the offset.
var ErrPositionLost = errors.New("WARC data before the position is gone")

// position is a decoded Position token.
type position struct {
	series string // 16 lowercase hex digits
	end    int64  // offset after the last complete write in file
	last   int64  // offset where that write began
	file   string // base name; "" before the series' first file
}

// positionMagic starts every token; its digit is the format's version.
const positionMagic = "warc1 "

// Position returns a token for the point after the last complete write: a
// Write, or all the records of a WriteExchange. A Writer resuming a killed
// crawl gives the last token it stored to Rewind, which cuts the files back
// to that point. Before the first file, the token names the series and no
// file, which is a valid position too: Rewind then removes every file of
// the series.
//
// The token is opaque to callers; it is text, "warc1 SERIES END LAST
// FILE": the series' identity (16 hex digits), the offset after the last
// complete write in FILE and the offset that write began at (decimal), and
// the base name of the file, last so that it may hold spaces. It covers the
// data handed to the operating system, which outlives a killed process but
// not a power failure: Position does not wait for the disk.
//
// Position fails only when a failed write could not be cut off again
// (every write then fails with the same error); the last token it returned
// stays valid. After Close, the token names the end of the last write.
// Safe for concurrent use; it waits for a write in progress. Cost: no
// system call, one allocation of the token, about 80 bytes.
func (w *Writer) Position() ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	p := w.position()
	return p.appendTo(make([]byte, 0, p.size())), nil
}

// AppendPosition is Position appending the token to b: with a b of enough
// capacity, it allocates nothing. Safe for concurrent use.
func (w *Writer) AppendPosition(b []byte) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return b, w.err
	}
	p := w.position()
	return p.appendTo(b), nil
}

func (w *Writer) position() position {
	return position{series: w.series, end: w.end, last: w.last, file: w.name}
}

// size returns the length of p's token.
func (p position) size() int {
	return len(positionMagic) + len(p.series) + 1 + decimals(p.end) + 1 + decimals(p.last) + 1 + len(p.file)
}

// decimals returns the number of digits of n ≥ 0 in decimal.
func decimals(n int64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

func (p position) appendTo(b []byte) []byte {
	b = append(b, positionMagic...)
	b = append(b, p.series...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, p.end, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, p.last, 10)
	b = append(b, ' ')
	return append(b, p.file...)
}

// parsePosition decodes a token of appendTo. It accepts exactly the tokens
// appendTo makes (one spelling of each number), so that a decoded token
// encodes back to the same bytes.
func parsePosition(b []byte) (position, error) {
	bad := func(why string) (position, error) {
		return position{}, &Error{Op: "rewind", Err: fmt.Errorf("%w: %s", ErrBadPosition, why)}
	}
	rest, ok := strings.CutPrefix(string(b), positionMagic)
	if !ok {
		return bad("no " + strings.TrimSpace(positionMagic) + " token")
	}
	var p position
	var end, last string
	p.series, rest, _ = strings.Cut(rest, " ")
	end, rest, _ = strings.Cut(rest, " ")
	last, p.file, ok = strings.Cut(rest, " ")
	if !ok {
		return bad("missing fields")
	}
	if len(p.series) != 16 || strings.Trim(p.series, "0123456789abcdef") != "" {
		return bad("series is not 16 hex digits")
	}
	var err error
	if p.end, err = parseOffset(end); err != nil {
		return bad("end offset " + strconv.Quote(end))
	}
	if p.last, err = parseOffset(last); err != nil {
		return bad("last offset " + strconv.Quote(last))
	}
	switch {
	case p.file == "" && (p.end != 0 || p.last != 0):
		return bad("offsets without a file")
	case p.file == "":
		return p, nil
	case p.last >= p.end:
		return bad("the last write does not end before the end offset")
	case len(p.file) > 255 || p.file == "." || p.file == ".." || strings.ContainsAny(p.file, "/\\\x00"):
		return bad("file " + strconv.Quote(p.file) + " is not a base name")
	}
	return p, nil
}

// parseOffset parses a non-negative decimal without leading zeros.
func parseOffset(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, strconv.ErrSyntax
	}
	return n, nil
}

// Rewind cuts the directory back to pos, a token of Position stored by a
// crawl that was then killed, and continues that crawl's series of files:
// it truncates the file pos names to pos's offset and removes the files of
// the series created after it, so that the directory holds exactly the
// writes made up to pos. The next write starts a new file rather than
// appending to the truncated one, so that each file's warcinfo record
// describes the Writer (options, software) that wrote its records.
//
// Rewind is valid only before this Writer writes a record; afterwards it
// fails. A file belongs to the series when its warcinfo record's
// crawlkit-series field is the token's: files of the prefix written by
// other crawls into the same directory stay, and so do files whose first
// record cannot be read. A kill leaves no such file of the series, since
// a file appears under its name with its warcinfo record in it (but see
// Writer for file systems without hard links); Rewind removes the
// temporary file the killed Writer created files through, and the
// temporary file of the index of any file it removes. A nil or empty pos
// names no series, so no file can be proved to follow it: Rewind does
// nothing. A crawl that wants a kill before its first commit undone
// stores Position before its first write, a token naming the series and
// no file.
//
// Rewind checks that the named file is of the series, holds pos's offset,
// and that the last write before it reads back whole; it does not Repair
// the file, since truncating at the offset drops whatever follows it, torn
// or not. A malformed pos fails with an *Error wrapping ErrBadPosition, a
// directory that lost data before pos with one wrapping ErrPositionLost;
// either way nothing is changed. Rewind is idempotent: a Rewind killed
// half-way can be done again.
//
// Rewind then rebuilds what a Writer keeps about the series' files up to
// pos: the payload digests revisit records refer to (unless NoRevisits),
// and the CDXJ index of pos's file and of any earlier file without one
// (unless NoIndex); the indexes and originals lists of the removed files
// are removed with them. It reads pos's file back whole, and of each
// earlier file its originals list (OriginalsSuffix), or the file itself
// when the list is missing, cut short or names another size, writing
// the list again. A file it reads that does not read to its end (damaged
// after it was written) fails Rewind with an *Error wrapping ErrFormat,
// after the files were cut back; a closed file with its list is not
// read, so damage to it is found by reading it (Reader, IndexFile).
//
// Safe for concurrent use. Cost: reading the last write before pos and
// each later file's warcinfo record, pos's file once (about 80-95 µs per
// 20 KB page, 19-22 s per GiB of .warc.gz, on a 2-core VM) and the
// earlier files' lists (about 5 µs per page; BenchmarkRewindReread);
// only pos's file when revisits are off.
func (w *Writer) Rewind(pos []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.wrote {
		return &Error{Op: "rewind", Err: errors.New("records were written before Rewind")}
	}
	if len(pos) == 0 {
		return nil
	}
	p, err := parsePosition(pos)
	if err != nil {
		return err
	}
	files, err := listFiles(w.opts.Dir, w.opts.Prefix)
	if err != nil {
		return err
	}
	var f *os.File
	after := files
	if p.file != "" {
		_, seq, ok := parseName(w.opts.Prefix, p.file)
		if !ok {
			return &Error{Op: "rewind", Err: fmt.Errorf("%w: %q is not a file of prefix %q", ErrBadPosition, p.file, w.opts.Prefix)}
		}
		if f, err = openPosition(filepath.Join(w.opts.Dir, p.file), p); err != nil {
			return err
		}
		defer f.Close()
		i := slices.IndexFunc(files, func(sf seriesFile) bool { return sf.seq > seq })
		if i < 0 {
			i = len(files)
		}
		after = files[i:]
	}
	// The temporary file the killed Writer was creating a file through:
	// the series is this Writer's now, so no other Writer uses it.
	if err := os.Remove(tempPath(w.opts.Dir, w.opts.Prefix, p.series)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return &Error{Op: "rewind", Err: err}
	}
	// Newest first, so that a Rewind cut short leaves the oldest files;
	// a file's index (and the temporary file of an index a kill cut
	// short) before the file, so that no index outlives its file.
	for _, sf := range slices.Backward(after) {
		path := filepath.Join(w.opts.Dir, sf.name)
		if s, err := readSeries(path); err != nil || s != p.series {
			continue
		}
		for _, rm := range []string{IndexPath(path) + ".tmp", IndexPath(path), path + OriginalsSuffix + ".tmp", path + OriginalsSuffix, path} {
			if err := os.Remove(rm); err != nil && !errors.Is(err, os.ErrNotExist) {
				return &Error{Op: "rewind", Err: err}
			}
		}
	}
	if f != nil {
		if err := f.Truncate(p.end); err != nil {
			return &Error{Op: "rewind " + p.file, Err: err}
		}
		if err := f.Sync(); err != nil {
			return &Error{Op: "rewind " + p.file, Err: err}
		}
	}
	syncDir(w.opts.Dir)
	if p.file != "" {
		if err := w.reread(files[:len(files)-len(after)], p); err != nil {
			return err
		}
	}
	w.series, w.name, w.end, w.last = p.series, p.file, p.end, p.last
	return nil
}

// reread reads back the files of p's series up to p's file, oldest
// first, after Rewind cut them back: it rebuilds the table of payload
// digests revisits refer to, and writes the CDXJ index of p's file (the
// next write starts a new file, so it is complete now; an index written
// before the kill may name records after p) and of any earlier file whose
// index is missing (a kill between its rotation and its index). The
// files' records are what the killed Writer had written up to p, so the
// table is the one it had then. Cost: one sequential read of every file
// of the series, or none when revisits are off and only p's file needs
// its index.
func (w *Writer) reread(files []seriesFile, p position) error {
	w.digests.reset()
	defer func() { w.origs = nil }()
	for _, sf := range files {
		path := filepath.Join(w.opts.Dir, sf.name)
		needIndex := !w.opts.NoIndex && sf.name == p.file
		if !needIndex && !w.opts.NoIndex {
			if _, err := os.Stat(IndexPath(path)); errors.Is(err, os.ErrNotExist) {
				needIndex = true
			}
		}
		if !needIndex && (w.opts.NoRevisits || sf.name != p.file && w.rememberListed(path, p)) {
			continue
		}
		if err := w.rereadFile(path, sf.name, p, needIndex); err != nil {
			return err
		}
	}
	return nil
}

// rememberListed adds to the digest table the originals that the
// originals file of the closed file at path lists, as reading the file
// would, and reports whether it could: the list must be whole and name
// the file's series and size (a file cut or grown since is read back).
// A file of another series is skipped, as rereadFile skips it.
func (w *Writer) rememberListed(path string, p position) bool {
	head, origs, err := readOriginals(path)
	if err != nil {
		return false
	}
	if head.Series != p.series {
		return true
	}
	if st, err := os.Stat(path); err != nil || st.Size() != head.Size {
		return false
	}
	for _, e := range origs {
		w.digests.add(e.digest, e.original)
	}
	return true
}

func (w *Writer) rereadFile(path, name string, p position, needIndex bool) error {
	testHook("reread")
	f, err := os.Open(path)
	if err != nil {
		return &Error{Op: "rewind " + name, Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &Error{Op: "rewind " + name, Err: err}
	}
	size := st.Size()
	if name == p.file {
		size = min(size, p.end)
	}
	if s, err := fileSeries(io.NewSectionReader(f, 0, size)); err != nil || s != p.series {
		return nil // another crawl's file, or one a kill left empty as it was created without hard links
	}
	var entries []IndexEntry
	w.origs = w.origs[:0]
	err = scanRecords(io.NewSectionReader(f, 0, size), size, name, func(rec *Record, length int64) {
		w.remember(rec)
		if e, ok := indexEntry(rec, length, name); ok && needIndex {
			entries = append(entries, e)
		}
	})
	if err != nil {
		// A file of the series that does not read to its end lost data
		// the crawl committed; carrying on would refer to records that
		// are gone.
		var we *Error
		if errors.As(err, &we) {
			return &Error{Op: "rewind " + name, Offset: we.Offset, Err: we.Err}
		}
		return &Error{Op: "rewind " + name, Err: err}
	}
	if !w.opts.NoRevisits {
		// Its list, for the next Rewind: kept in w.indexErr if it cannot
		// be written, since that Rewind reads the file back instead.
		if err := writeOriginals(path, p.series, size, w.origs); err != nil && w.indexErr == nil {
			w.indexErr = err
		}
	}
	if needIndex {
		return writeIndex(path, entries)
	}
	return nil
}

// openPosition opens the file at path for truncation to p.end, after
// checking that it is of p's series and that its last write before p.end
// reads back whole.
func openPosition(path string, p position) (*os.File, error) {
	lost := func(format string, args ...any) error {
		return &Error{Op: "rewind " + p.file, Err: fmt.Errorf("%w: "+format, append([]any{ErrPositionLost}, args...)...)}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, lost("the file is gone")
	}
	if err != nil {
		return nil, &Error{Op: "rewind " + p.file, Err: err}
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(&Error{Op: "rewind " + p.file, Err: err})
	}
	if st.Size() < p.end {
		return fail(lost("the file holds %d bytes, the position is at %d", st.Size(), p.end))
	}
	if s, err := fileSeries(io.NewSectionReader(f, 0, p.end)); err != nil || s != p.series {
		return fail(lost("the file is not of series %s", p.series))
	}
	rd, err := NewReader(io.NewSectionReader(f, p.last, p.end-p.last), nil)
	n := 0
	for err == nil {
		if _, err = rd.Next(); err == nil {
			n++
		}
	}
	if err != io.EOF || n == 0 {
		return fail(lost("no complete write from offset %d to %d (%v)", p.last, p.end, err))
	}
	return f, nil
}

// readSeries returns the series of the WARC file at path.
func readSeries(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return fileSeries(f)
}

// fileSeries returns the crawlkit-series field of the warcinfo record r
// starts with.
func fileSeries(r io.Reader) (string, error) {
	rd, err := NewReader(r, &ReaderOptions{MaxBlockBytes: 1 << 20})
	if err != nil {
		return "", err
	}
	rec, err := rd.Next()
	if err != nil {
		return "", err
	}
	if rec.Type() != TypeWarcinfo {
		return "", fmt.Errorf("%w: first record is %q, not warcinfo", ErrFormat, rec.Type())
	}
	return warcField(rec.Block, seriesField), nil
}

// syncDir commits the removal of files from dir to the disk. It is best
// effort: not every platform can sync a directory, and Rewind's contract is
// about killed processes, which lose nothing the kernel was handed.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
