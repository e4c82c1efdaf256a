package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// ErrNotArchived is wrapped by the *fetch.Error Replay.Fetch returns for a
// URL the archive holds no response record of.
var ErrNotArchived = errors.New("warc: URL not in the archive")

// ErrRevisitUnresolved is wrapped by the *fetch.Error Replay.Fetch returns
// for a URL archived as a revisit record whose original (the response
// holding the payload) the archive does not hold, or holds with another
// payload digest.
var ErrRevisitUnresolved = errors.New("warc: revisit record's original not in the archive")

// ReplayOptions configures OpenReplay. The zero value of each field means
// its default.
type ReplayOptions struct {
	// Reader bounds every record read, when indexing and when replaying.
	Reader ReaderOptions
	// MaxBodySize caps the body of a replayed response (after any
	// Content-Encoding is removed); a longer one is cut and the response
	// marked Truncated, as fetch.HTTP does. Default 10 MiB.
	MaxBodySize int64
}

// Replay is a fetch.Fetcher that answers from WARC files instead of the
// network, so a crawl can be re-run offline from its archive: re-parsed,
// re-indexed, its link graph rebuilt.
//
// OpenReplay reads every file once and indexes its response (and revisit) records by
// WARC-Target-URI (file and offset, about 100 bytes per URL plus the URL);
// Fetch then reads one record at its offset and parses the stored HTTP
// message into a *fetch.Response: status, headers, body (chunked transfer
// coding and gzip or deflate content coding removed, text converted to
// UTF-8 as fetch.HTTP does), Location of a 3xx resolved against the URL,
// ETag and Last-Modified. A request whose ETag equals the archived one is
// answered 304, like a server would. When a URL was archived more than once
// (a continuous crawl), the record with the latest WARC-Date wins.
//
// A URL archived as a revisit record (an identical payload archived
// before, see "Revisits" in the package documentation) is answered with
// the revisit's status and headers and the payload of the response record
// it refers to (WARC-Refers-To, found in any of the files; failing that,
// the capture of WARC-Refers-To-Target-URI), after checking that the two
// payload digests agree; an original the archive lacks fails with
// ErrRevisitUnresolved. The index of record IDs this needs costs about
// 100 bytes per response record.
//
// A URL the archive does not hold fails with a *fetch.Error wrapping
// ErrNotArchived, never an invented page; the one exception is robots.txt.
// crawlkit's WARC sink archives pages only, not the robots.txt files the
// crawler read, so an unarchived /robots.txt is answered 404 with an empty
// body, which RFC 9309 reads as "allow everything". A replayed crawl then
// asks for the URLs the original crawl's robots.txt forbade, and each of
// those fails with ErrNotArchived: the replay fetches exactly what was
// archived. Archives that hold robots.txt responses (wget, Heritrix) are
// answered from the archive.
//
// Files written with one gzip member per record (crawlkit's and most
// tools') are read at the offset directly, O(record); a file compressed as
// a single gzip member is decompressed from its start up to the record on
// every Fetch, O(offset).
//
// A Replay is safe for concurrent use. Close it to close the files.
type Replay struct {
	opts  ReplayOptions
	files []*replayFile
	index map[string]entry // exact target URI → record
	canon map[string]string
	ids   map[string]loc // response record ID → record, for revisits
}

// loc is where a record is: a file of Replay.files and an offset.
type loc struct {
	file int32
	off  int64
}

type replayFile struct {
	path   string
	f      *os.File
	size   int64
	stream bool // one gzip member for the whole file: offsets are uncompressed
}

type entry struct {
	file    int32
	off     int64
	date    time.Time
	charset string // original charset, from the metadata record
}

var _ fetch.Fetcher = (*Replay)(nil)

// OpenReplay opens and indexes the WARC files at paths, in order. It fails
// if a file cannot be opened or holds a malformed record; the files opened
// so far are closed. Cost: one sequential read of every file.
func OpenReplay(paths []string, opts *ReplayOptions) (*Replay, error) {
	r := &Replay{index: map[string]entry{}, canon: map[string]string{}, ids: map[string]loc{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.MaxBodySize <= 0 {
		r.opts.MaxBodySize = 10 << 20
	}
	for _, p := range paths {
		if err := r.add(p); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// OpenReplayDir is OpenReplay over every *.warc and *.warc.gz file in dir,
// in name order (which is write order for crawlkit's Writer).
func OpenReplayDir(dir string, opts *ReplayOptions) (*Replay, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	var paths []string
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".warc") || strings.HasSuffix(n, ".warc.gz")) {
			paths = append(paths, dir+string(os.PathSeparator)+n)
		}
	}
	sort.Strings(paths)
	return OpenReplay(paths, opts)
}

func (r *Replay) add(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &Error{Op: "open", Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return &Error{Op: "open", Err: err}
	}
	rf := &replayFile{path: path, f: f, size: st.Size()}
	r.files = append(r.files, rf)
	fi := int32(len(r.files) - 1)

	rd, err := NewReader(io.NewSectionReader(f, 0, rf.size), &r.opts.Reader)
	if err != nil {
		return fileErr(path, err)
	}
	// Metadata records follow their response; they name the charset the
	// page was in, which a response stored decoded (in UTF-8) no longer
	// says.
	byID := map[string]string{} // response record ID → target
	var probe *Record
	for rec, err := range rd.All() {
		if err != nil {
			return fileErr(path, err)
		}
		switch typ := rec.Type(); typ {
		case TypeResponse, TypeRevisit:
			if typ == TypeResponse && rec.Header.Get(FieldPayloadDigest) != "" {
				r.ids[rec.ID()] = loc{fi, rec.Offset}
			}
			target := rec.TargetURI()
			if target == "" {
				continue
			}
			e := entry{file: fi, off: rec.Offset, date: rec.Date()}
			if old, ok := r.index[target]; ok && old.date.After(e.date) {
				continue
			}
			r.index[target] = e
			if c, err := urlnorm.Canonical(target); err == nil && c != target {
				r.canon[c] = target
			}
			byID[rec.ID()] = target
			if probe == nil {
				probe = rec
			}
		case TypeMetadata:
			target, ok := byID[rec.Header.Get(FieldConcurrentTo)]
			if !ok {
				continue
			}
			if e, ok := r.index[target]; ok && e.file == fi {
				e.charset = warcField(rec.Block, "charset")
				r.index[target] = e
			}
		}
	}
	if probe == nil {
		return nil
	}
	// The Reader reports compressed member offsets for files of one gzip
	// member per record and uncompressed offsets for a file that is one
	// gzip member: find out which by reading a record back.
	if got, err := r.read(rf, probe.Offset); err == nil && got.ID() == probe.ID() {
		return nil
	}
	rf.stream = true
	if got, err := r.read(rf, probe.Offset); err != nil || got.ID() != probe.ID() {
		return fileErr(path, fmt.Errorf("%w: record at offset %d cannot be read back", ErrFormat, probe.Offset))
	}
	return nil
}

func fileErr(path string, err error) error {
	var we *Error
	if errors.As(err, &we) {
		return &Error{Op: "open " + path, Offset: we.Offset, Err: we.Err}
	}
	return &Error{Op: "open " + path, Err: err}
}

// warcField returns the value of name in an application/warc-fields block.
func warcField(block []byte, name string) string {
	for line := range strings.SplitSeq(string(block), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// read reads the record at off of rf.
func (r *Replay) read(rf *replayFile, off int64) (*Record, error) {
	if off < 0 || off >= rf.size && !rf.stream {
		return nil, &Error{Op: "read", Offset: off, Err: fmt.Errorf("%w: offset beyond end of file", ErrFormat)}
	}
	var src io.Reader
	if rf.stream {
		zr, err := gzip.NewReader(io.NewSectionReader(rf.f, 0, rf.size))
		if err != nil {
			return nil, &Error{Op: "read", Offset: off, Err: fmt.Errorf("%w: gzip: %v", ErrFormat, err)}
		}
		if _, err := io.CopyN(io.Discard, zr, off); err != nil {
			return nil, &Error{Op: "read", Offset: off, Err: fmt.Errorf("%w: %v", ErrFormat, err)}
		}
		src = zr
	} else {
		src = io.NewSectionReader(rf.f, off, rf.size-off)
	}
	rd, err := NewReader(src, &r.opts.Reader)
	if err != nil {
		return nil, err
	}
	rec, err := rd.Next()
	if err == io.EOF {
		err = &Error{Op: "read", Offset: off, Err: fmt.Errorf("%w: no record at offset", ErrFormat)}
	}
	return rec, err
}

// Len returns the number of URLs with an archived response.
func (r *Replay) Len() int { return len(r.index) }

// URLs returns the archived URLs, sorted.
func (r *Replay) URLs() []string {
	out := make([]string, 0, len(r.index))
	for u := range r.index {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// Locate returns the file and offset of the response record archived for
// rawURL (looked up as given, then in canonical form), and false if there
// is none. O(1).
func (r *Replay) Locate(rawURL string) (file string, offset int64, ok bool) {
	e, ok := r.lookup(rawURL)
	if !ok {
		return "", 0, false
	}
	return r.files[e.file].path, e.off, true
}

func (r *Replay) lookup(rawURL string) (entry, bool) {
	if e, ok := r.index[rawURL]; ok {
		return e, true
	}
	c, err := urlnorm.Canonical(rawURL)
	if err != nil {
		return entry{}, false
	}
	if e, ok := r.index[c]; ok {
		return e, true
	}
	if t, ok := r.canon[c]; ok {
		return r.index[t], true
	}
	return entry{}, false
}

// Fetch implements fetch.Fetcher. It costs one record read (a seek and the
// record's size, decompressed) and the parse of its HTTP message.
func (r *Replay) Fetch(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
	start := time.Now()
	if req == nil || req.URL == nil {
		return nil, &fetch.Error{Op: "replay", Kind: fetch.KindBadURL, Err: fetch.ErrScheme}
	}
	raw := req.URL.String()
	if sc := req.URL.Scheme; sc != "http" && sc != "https" || req.URL.Host == "" {
		return nil, &fetch.Error{Op: "replay", Kind: fetch.KindBadURL, URL: raw, Err: fetch.ErrScheme}
	}
	if err := ctx.Err(); err != nil {
		return nil, &fetch.Error{Op: "replay", Kind: fetch.KindCanceled, URL: raw, Err: err}
	}
	e, ok := r.lookup(raw)
	if !ok {
		if req.URL.Path == "/robots.txt" && req.URL.RawQuery == "" {
			return &fetch.Response{URL: req.URL, Status: http.StatusNotFound, Header: http.Header{},
				Timings: fetch.Timings{Start: start, Total: time.Since(start)}}, nil
		}
		return nil, &fetch.Error{Op: "replay", Kind: fetch.KindOther, URL: raw, Err: ErrNotArchived}
	}
	rec, err := r.read(r.files[e.file], e.off)
	if err != nil {
		return nil, &fetch.Error{Op: "replay", Kind: fetch.KindProtocol, URL: raw, Err: err}
	}
	if rec.Type() == TypeRevisit {
		if rec, err = r.resolve(rec); err != nil {
			kind := fetch.KindProtocol
			if errors.Is(err, ErrRevisitUnresolved) {
				kind = fetch.KindOther
			}
			return nil, &fetch.Error{Op: "replay", Kind: kind, URL: raw, Err: err}
		}
	}
	resp, err := r.parse(req, rec, e)
	if err != nil {
		return nil, &fetch.Error{Op: "replay", Kind: fetch.KindProtocol, URL: raw, Err: err}
	}
	if req.ETag != "" && resp.ETag == req.ETag && resp.Status == http.StatusOK {
		resp.Status, resp.Body, resp.Truncated = http.StatusNotModified, nil, false
	}
	resp.Timings = fetch.Timings{Start: start, Total: time.Since(start)}
	return resp, nil
}

// resolve returns the response a revisit record stands for: the
// revisit's header fields and HTTP headers, and the payload of its
// original.
func (r *Replay) resolve(rev *Record) (*Record, error) {
	l, ok := r.ids[rev.Header.Get(FieldRefersTo)]
	if !ok {
		if e, found := r.index[rev.Header.Get(FieldRefersToTargetURI)]; found {
			l, ok = loc{e.file, e.off}, true
		}
	}
	unresolved := func(why string) error {
		return fmt.Errorf("%w: revisit at offset %d: %s", ErrRevisitUnresolved, rev.Offset, why)
	}
	if !ok {
		return nil, unresolved("no record " + truncate(rev.Header.Get(FieldRefersTo)))
	}
	orig, err := r.read(r.files[l.file], l.off)
	if err != nil {
		return nil, err
	}
	if orig.Type() != TypeResponse {
		return nil, unresolved("the original is a " + truncate(orig.Type()) + " record")
	}
	payload := HTTPPayload(orig.Block)
	if d := rev.Header.Get(FieldPayloadDigest); d != "" && d != orig.Header.Get(FieldPayloadDigest) {
		return nil, unresolved("the original's payload digest differs")
	}
	out := &Record{Header: rev.Header, Offset: rev.Offset}
	if t := orig.Header.Get(FieldTruncated); t != "" {
		out.Header = Header{fields: slices.Clone(rev.Header.fields)}
		out.Header.Set(FieldTruncated, t)
	}
	switch p := HTTPPayload(rev.Block); {
	case p == nil || payload == nil:
		// Without HTTP headers of its own (or an original without a
		// payload) the revisit is its original, as it was archived.
		out.Block = orig.Block
	default:
		head := rev.Block[:len(rev.Block)-len(p)]
		out.Block = append(head[:len(head):len(head)], payload...)
	}
	return out, nil
}

// parse turns a response record into a fetch.Response.
func (r *Replay) parse(req *fetch.Request, rec *Record, e entry) (*fetch.Response, error) {
	hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), &http.Request{Method: http.MethodGet, URL: req.URL})
	if err != nil {
		return nil, fmt.Errorf("%w: record at offset %d: HTTP message: %v", ErrFormat, rec.Offset, err)
	}
	defer hr.Body.Close()
	wire, err := io.ReadAll(hr.Body)
	if err != nil && len(wire) == 0 {
		return nil, fmt.Errorf("%w: record at offset %d: HTTP body: %v", ErrFormat, rec.Offset, err)
	}
	resp := &fetch.Response{
		URL:          req.URL,
		Status:       hr.StatusCode,
		Header:       hr.Header,
		WireBytes:    int64(len(wire)),
		ETag:         hr.Header.Get("ETag"),
		LastModified: hr.Header.Get("Last-Modified"),
	}
	if ip, err := netip.ParseAddr(rec.Header.Get(FieldIPAddress)); err == nil {
		port, _ := strconv.ParseUint(req.URL.Port(), 10, 16)
		if port == 0 {
			port = 80
			if req.URL.Scheme == "https" {
				port = 443
			}
		}
		resp.Addr = netip.AddrPortFrom(ip, uint16(port))
	}
	body, truncated := decode(wire, hr.Header.Get("Content-Encoding"), r.opts.MaxBodySize)
	// A record marked WARC-Truncated holds a prefix of the body, as the
	// fetcher had it: the response is Truncated, as fetch.HTTP said.
	resp.Body, resp.Truncated = body, truncated || rec.Header.Get(FieldTruncated) != ""
	ct := hr.Header.Get("Content-Type")
	resp.ContentType = fetch.ContentTypeOf(ct, body) // as the fetcher saw it
	if isText(resp.ContentType) {
		resp.Body, resp.Charset = fetch.ToUTF8(resp.Body, ct)
		if e.charset != "" {
			resp.Charset = e.charset
		}
	}
	if loc := hr.Header.Get("Location"); loc != "" && resp.Status >= 300 && resp.Status < 400 {
		if u, err := urlnorm.Resolve(req.URL, loc); err == nil {
			resp.Location = u
		}
	}
	return resp, nil
}

// decode removes a gzip or deflate Content-Encoding (archives keep the
// body as the server sent it; crawlkit's sink stores it decoded only when
// the fetcher did not keep the wire bytes) with fetch.DecodeBody, the
// fetcher's own decoding, cutting at max bytes. A body that does not
// decode is returned as stored; a compressed stream cut short (a truncated
// record) decodes as far as it goes, as it did for the crawler.
func decode(body []byte, encoding string, max int64) ([]byte, bool) {
	out, truncated, err := fetch.DecodeBody(body, encoding, max)
	if err != nil {
		return cut(body, max)
	}
	return out, truncated
}

func cut(b []byte, max int64) ([]byte, bool) {
	if int64(len(b)) > max {
		return b[:max], true
	}
	return b, false
}

// isText reports the types fetch.HTTP converts to UTF-8.
func isText(ct string) bool {
	return strings.HasPrefix(ct, "text/") || ct == "application/xhtml+xml"
}

// Close closes the archive's files. Fetch fails after Close.
func (r *Replay) Close() error {
	var first error
	for _, rf := range r.files {
		if err := rf.f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// String describes the replay for logs.
func (r *Replay) String() string {
	return fmt.Sprintf("warc.Replay(%d files, %d URLs)", len(r.files), len(r.index))
}
