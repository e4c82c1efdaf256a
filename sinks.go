package crawlkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/warc"
)

// WARCSink writes every page as WARC 1.1 request, response and metadata
// records (one gzip member each) into rotating files. The response record
// holds the HTTP response as the server sent it when the fetcher kept the
// wire bytes (fetch.Response.Wire; the crawler's default fetcher does when
// a WARCSink is among the sinks): status line, headers, and the body with
// its Content-Encoding and charset, only the chunked transfer coding
// removed (Content-Length says the stored length). Otherwise it holds the
// body as the crawler kept it, decoded and in UTF-8, with the headers
// rewritten to match (see HTTPResponseBytes). A body cut at the fetcher's
// size limit is stored as far as it was read, in a record marked
// WARC-Truncated: length (unless all its wire bytes were read: a
// compressed body cut once decoded). A response whose payload the archive
// already holds (an exact duplicate, archived through Exchange) is
// written as a revisit record referring to it, unless the options say
// NoRevisits; each complete file gets a CDXJ index beside it (see package
// warc). A page a browser rendered (fetch.Response.Rendered) also gets a
// conversion record holding the document its scripts built, referring to
// its response record. Safe for concurrent use.
type WARCSink struct {
	w *warc.Writer
}

// WantsWire implements WireSink.
func (s *WARCSink) WantsWire() bool { return true }

var _ WireSink = (*WARCSink)(nil)

// NewWARCSink opens a WARC writer with opts (Dir is required), as
// warc.NewWriter does: nil opts fail with a *warc.Error, and the options
// are copied, so the caller may change or reuse them afterwards.
func NewWARCSink(opts *warc.WriterOptions) (*WARCSink, error) {
	w, err := warc.NewWriter(opts)
	if err != nil {
		return nil, err
	}
	return &WARCSink{w: w}, nil
}

// Write implements Sink.
func (s *WARCSink) Write(ctx context.Context, p *Page) error {
	pr, err := s.Prepare(ctx, p)
	if err != nil {
		return err
	}
	return pr.Write()
}

// Prepare implements PreparingSink: the page's request, response and
// metadata records are built, digested and compressed
// (warc.Writer.EncodeExchange), ready to be appended.
func (s *WARCSink) Prepare(_ context.Context, p *Page) (Prepared, error) {
	resp := p.Response
	req := HTTPRequestBytes(p)
	raw := HTTPResponseBytes(resp)
	ip := ""
	if resp.Addr.IsValid() {
		ip = resp.Addr.Addr().String()
	}
	meta := map[string]string{
		"depth":         strconv.Itoa(p.Depth),
		"fetchTimeMs":   strconv.FormatInt(resp.Timings.Total.Milliseconds(), 10),
		"fingerprint":   strconv.FormatUint(p.Fingerprint, 16),
		"outlinks":      strconv.Itoa(len(p.Links)),
		"charset":       resp.Charset,
		"wireBodyBytes": strconv.FormatInt(resp.WireBytes, 10),
	}
	if resp.Rendered {
		// Text and links came from the document after its scripts ran;
		// the response record holds what was received.
		meta["rendered"] = "true"
	}
	e, err := s.w.EncodeExchange(p.URL, ip, p.Fetched, req, raw, meta, truncation(resp))
	if err != nil {
		return nil, err
	}
	if resp.Rendered && len(resp.Body) > 0 {
		// The document the browser built, which the page's text and
		// links came from, beside what the server sent.
		if err := s.w.AddConversion(e, "text/html; charset=utf-8", resp.Body); err != nil {
			return nil, err
		}
	}
	return preparedExchange{s.w, e}, nil
}

// preparedExchange is a page WARCSink.Prepare encoded.
type preparedExchange struct {
	w *warc.Writer
	e *warc.EncodedExchange
}

func (p preparedExchange) Write() error {
	_, _, err := p.w.WriteEncoded(p.e)
	return err
}

var _ PreparingSink = (*WARCSink)(nil)

// truncation is the WARC-Truncated reason of resp's record, or "".
func truncation(resp *fetch.Response) string {
	if storedCut(resp) {
		return warc.TruncatedLength
	}
	return ""
}

// storedCut reports whether the body stored for resp is less than the
// server sent: the body was cut (resp.Truncated) and either the decoded
// body is what is stored, or the wire bytes do not add up to the length
// the server announced. A compressed body can be cut once decoded while
// its wire bytes were all read: that record is whole.
func storedCut(resp *fetch.Response) bool {
	if !resp.Truncated {
		return false
	}
	if resp.Wire == nil {
		return true
	}
	n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	return err != nil || n != int64(len(resp.Wire))
}

// Exchange implements ExchangeSink: a response that is not a page (a
// redirect, robots.txt, an error status, a 304) is archived as a request
// and a response record.
func (s *WARCSink) Exchange(_ context.Context, resp *fetch.Response, fetched time.Time) error {
	ip := ""
	if resp.Addr.IsValid() {
		ip = resp.Addr.Addr().String()
	}
	_, _, err := s.w.WriteTruncatedExchange(resp.URL.String(), ip, fetched, requestBytes(resp), HTTPResponseBytes(resp), nil, truncation(resp))
	return err
}

var _ ExchangeSink = (*WARCSink)(nil)

// Files returns the WARC files written so far.
func (s *WARCSink) Files() []string { return s.w.Files() }

// Position implements DurableSink: the point after the last complete
// exchange (warc.Writer.Position).
func (s *WARCSink) Position() ([]byte, error) { return s.w.Position() }

// Rewind implements DurableSink: the files are cut back to pos and the
// files begun after it removed (warc.Writer.Rewind). It fails after a
// record was written.
func (s *WARCSink) Rewind(pos []byte) error { return s.w.Rewind(pos) }

var _ DurableSink = (*WARCSink)(nil)

// Close implements Sink.
func (s *WARCSink) Close() error { return s.w.Close() }

// HTTPRequestBytes reconstructs the GET request of a page as it was sent
// (method, target, Host); headers the fetcher adds are not known here.
func HTTPRequestBytes(p *Page) []byte { return requestBytes(p.Response) }

func requestBytes(resp *fetch.Response) []byte {
	u := resp.URL
	var b strings.Builder
	b.WriteString("GET ")
	b.WriteString(u.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(u.Host)
	b.WriteString("\r\n\r\n")
	return []byte(b.String())
}

// HTTPResponseBytes serialises a response as an HTTP/1.1 message. With
// the wire bytes kept (resp.Wire), the message is the one received: its
// headers as sent but Transfer-Encoding (the chunking is gone) and
// Content-Length (the length of Wire), then Wire. When Wire is short of
// the body (resp.Truncated, and not all the bytes the server announced),
// the server's own Content-Length stays, if it sent one: the message is
// the one received as far as it went, as a truncated WARC record holds
// it. Without Wire the headers describe the decoded Body:
// Content-Encoding, Transfer-Encoding and Content-Length are replaced by
// the length of Body, and a text Content-Type names the charset utf-8.
func HTTPResponseBytes(resp *fetch.Response) []byte {
	wire := resp.Wire != nil
	cut := wire && storedCut(resp)
	body := resp.Body
	if wire {
		body = resp.Wire
	}
	var b bytes.Buffer
	b.Grow(len(body) + 512)
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", resp.Status, http.StatusText(resp.Status))
	names := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch http.CanonicalHeaderKey(k) {
		case "Transfer-Encoding":
			continue
		case "Content-Length":
			if !cut {
				continue
			}
		case "Content-Encoding":
			if !wire {
				continue
			}
		case "Content-Type":
			if !wire && resp.Charset != "" && resp.ContentType != "" {
				fmt.Fprintf(&b, "Content-Type: %s; charset=utf-8\r\n", resp.ContentType)
				continue
			}
		}
		for _, v := range resp.Header[k] {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(strings.Map(noCRLF, v))
			b.WriteString("\r\n")
		}
	}
	if !cut {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

func noCRLF(r rune) rune {
	if r == '\r' || r == '\n' {
		return ' '
	}
	return r
}

// LinkLog writes each page's out-links as "source\ttarget\n" lines, the
// input of webgraph.Builder. Pages without links are written as
// "source\n" so that every fetched page becomes a node. An alias is
// recorded as "=\talias\tcanonical\n" (see AliasSink). Writes are
// buffered and flushed by Close, which leaves the writer open. Safe for
// concurrent use. For an output that survives a crash with the crawl,
// use OpenLinkLog.
type LinkLog struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
}

// NewLinkLog returns a LinkLog writing to w.
func NewLinkLog(w io.Writer) *LinkLog {
	return &LinkLog{w: bufio.NewWriterSize(w, 64<<10)}
}

// Write implements Sink.
func (l *LinkLog) Write(_ context.Context, p *Page) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = appendLinks(l.buf[:0], p)
	_, err := l.w.Write(l.buf)
	return err
}

// Close implements Sink: it flushes, and leaves the writer open.
func (l *LinkLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

// appendLinks appends p's lines of a link log to b.
func appendLinks(b []byte, p *Page) []byte {
	if len(p.Links) == 0 {
		b = append(b, p.URL...)
		return append(b, '\n')
	}
	for _, t := range p.Links {
		b = append(b, p.URL...)
		b = append(b, '\t')
		b = append(b, t...)
		b = append(b, '\n')
	}
	return b
}

// LinkLogFile is a LinkLog in a file it owns, and a DurableSink: each
// page's lines reach the operating system in one write before Write
// returns, and Rewind cuts the file back to a committed page. Safe for
// concurrent use.
type LinkLogFile struct{ *lineFile }

// OpenLinkLog opens (or creates) the link log at path for appending. A
// torn last line (a process killed in mid-write) is cut off.
func OpenLinkLog(path string) (*LinkLogFile, error) {
	f, err := openLineFile(path)
	if err != nil {
		return nil, err
	}
	return &LinkLogFile{f}, nil
}

// Write implements Sink.
func (l *LinkLogFile) Write(_ context.Context, p *Page) error {
	return l.write(func(b []byte) ([]byte, error) { return appendLinks(b, p), nil })
}

// Prepare implements PreparingSink: the page's lines.
func (l *LinkLogFile) Prepare(_ context.Context, p *Page) (Prepared, error) {
	return preparedLines{l.lineFile, appendLinks(nil, p)}, nil
}

var _ PreparingSink = (*LinkLogFile)(nil)

// preparedLines are a page's lines for a lineFile.
type preparedLines struct {
	f *lineFile
	b []byte
}

func (p preparedLines) Write() error {
	return p.f.write(func(b []byte) ([]byte, error) { return append(b, p.b...), nil })
}

// lineFile is a file of newline-terminated records that a DurableSink
// appends to: one write per record batch, its size as the position.
type lineFile struct {
	mu   sync.Mutex
	f    *os.File
	path string
	off  int64
	buf  []byte
	err  error // a write that could not be undone: the file is unusable
}

// ErrSinkBehind is wrapped by the error Rewind returns when a sink's file
// is shorter than the position the crawl saved: data reported written is
// gone (an operating-system crash before it reached the disk, or a file
// replaced by hand).
var ErrSinkBehind = errors.New("crawlkit: sink file is shorter than the crawl's saved position")

// fileError names path in err once: an *fs.PathError of that path
// already does ("write /x/links.tsv: no space left on device").
func fileError(path string, err error) error {
	if pe, ok := err.(*fs.PathError); ok && pe.Path == path {
		return fmt.Errorf("crawlkit: %w", err)
	}
	return fmt.Errorf("crawlkit: %s: %w", path, err)
}

func openLineFile(path string) (*lineFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	n, err := lastLineEnd(f)
	if err == nil {
		err = f.Truncate(n)
	}
	if err != nil {
		f.Close()
		return nil, fileError(path, err)
	}
	return &lineFile{f: f, path: path, off: n}, nil
}

// lastLineEnd returns the offset after the last newline of f (0 if none),
// reading back from its end.
func lastLineEnd(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 4096)
	for end := st.Size(); end > 0; {
		n := min(end, int64(len(buf)))
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// write appends the bytes fill produces with one write system call.
func (l *lineFile) write(fill func([]byte) ([]byte, error)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	b, err := fill(l.buf[:0])
	l.buf = b
	if err != nil || len(b) == 0 {
		return err
	}
	n, err := l.f.WriteAt(b, l.off)
	if err != nil {
		// Cut a partial write off, so the next record starts clean.
		if terr := l.f.Truncate(l.off); terr != nil {
			l.err = fmt.Errorf("crawlkit: %s: a failed write could not be undone: %w", l.path, terr)
		}
		return fileError(l.path, err)
	}
	l.off += int64(n)
	return nil
}

// Position implements DurableSink: the file's length, 8 bytes big-endian.
func (l *lineFile) Position() ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	return binary.BigEndian.AppendUint64(nil, uint64(l.off)), nil
}

// Rewind implements DurableSink: the file is cut to pos, before or after
// writes alike.
func (l *lineFile) Rewind(pos []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(pos) != 8 {
		return fmt.Errorf("crawlkit: %s: malformed position (%d bytes)", l.path, len(pos))
	}
	off := int64(binary.BigEndian.Uint64(pos))
	if off < 0 || off > l.off {
		return fmt.Errorf("%w: %s holds %d bytes, the position is at %d", ErrSinkBehind, l.path, l.off, off)
	}
	if err := l.f.Truncate(off); err != nil {
		return fileError(l.path, err)
	}
	l.off = off
	return nil
}

// Close implements Sink: it closes the file.
func (l *lineFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if l.err == nil {
		l.err = os.ErrClosed
	}
	return err
}

// ReadLinkLog reads a link log written by LinkLog, calling node for every
// source and link for every (source, target) pair, as the pages were
// fetched: an alias (LinkLog.Alias) is a node of its own;
// ReadLinkLogCanonical collapses it into its canonical URL. It stops at
// the first error a callback returns. Malformed lines (no source) and
// alias records are skipped.
func ReadLinkLog(r io.Reader, node func(src string) error, link func(src, dst string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	last := ""
	for sc.Scan() {
		src, dst, hasDst := strings.Cut(sc.Text(), "\t")
		if src == "" || src == aliasMark {
			continue
		}
		if src != last {
			if err := node(src); err != nil {
				return err
			}
			last = src
		}
		if hasDst && dst != "" {
			if err := link(src, dst); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// JSONLines writes one JSON object per page (PageRecord): URL, depth,
// time, status, content type, title, language, sizes, number of links,
// fingerprint. Writes are buffered and flushed by Close, which leaves the
// writer open: NewJSONLines(os.Stdout) does not close standard output.
// Safe for concurrent use. For an output that survives a crash with the
// crawl, use OpenJSONLines.
type JSONLines struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
}

// PageRecord is the JSON form JSONLines writes.
type PageRecord struct {
	URL         string    `json:"url"`
	Depth       int       `json:"depth"`
	Fetched     time.Time `json:"fetched"`
	Status      int       `json:"status"`
	ContentType string    `json:"content_type,omitempty"`
	Charset     string    `json:"charset,omitempty"`
	Title       string    `json:"title,omitempty"`
	Lang        string    `json:"lang,omitempty"`
	Bytes       int       `json:"bytes"`
	FetchMillis int64     `json:"fetch_ms"`
	Links       int       `json:"links"`
	NoIndex     bool      `json:"noindex,omitempty"`
	Fingerprint string    `json:"fingerprint"`
	Canonical   string    `json:"canonical,omitempty"`
}

// NewJSONLines returns a JSONLines sink writing to w.
func NewJSONLines(w io.Writer) *JSONLines {
	return &JSONLines{w: bufio.NewWriterSize(w, 64<<10)}
}

// Write implements Sink.
func (j *JSONLines) Write(_ context.Context, p *Page) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, err := appendRecord(j.buf[:0], p)
	j.buf = b
	if err != nil {
		return err
	}
	_, err = j.w.Write(b)
	return err
}

// Close implements Sink: it flushes, and leaves the writer open.
func (j *JSONLines) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.w.Flush()
}

// appendRecord appends p's JSON line to b.
func appendRecord(b []byte, p *Page) ([]byte, error) {
	rec := PageRecord{
		URL: p.URL, Depth: p.Depth, Fetched: p.Fetched.UTC(), Status: p.Response.Status,
		ContentType: p.Response.ContentType, Charset: p.Response.Charset,
		Bytes: len(p.Response.Body), FetchMillis: p.Response.Timings.Total.Milliseconds(),
		Links: len(p.Links), Fingerprint: fmt.Sprintf("%016x", p.Fingerprint), Canonical: p.Canonical,
	}
	if p.Document != nil {
		rec.Title, rec.Lang, rec.NoIndex = p.Document.Title, p.Document.Lang, p.Document.NoIndex
	}
	out, err := json.Marshal(&rec)
	if err != nil {
		return b, err
	}
	b = append(b, out...)
	return append(b, '\n'), nil
}

// JSONLinesFile is JSONLines in a file it owns, and a DurableSink: each
// page's line reaches the operating system in one write before Write
// returns, and Rewind cuts the file back to a committed page. Safe for
// concurrent use.
type JSONLinesFile struct{ *lineFile }

// OpenJSONLines opens (or creates) the JSON Lines file at path for
// appending. A torn last line (a process killed in mid-write) is cut off.
func OpenJSONLines(path string) (*JSONLinesFile, error) {
	f, err := openLineFile(path)
	if err != nil {
		return nil, err
	}
	return &JSONLinesFile{f}, nil
}

// Write implements Sink.
func (j *JSONLinesFile) Write(_ context.Context, p *Page) error {
	return j.write(func(b []byte) ([]byte, error) { return appendRecord(b, p) })
}

// Prepare implements PreparingSink: the page's JSON line.
func (j *JSONLinesFile) Prepare(_ context.Context, p *Page) (Prepared, error) {
	b, err := appendRecord(nil, p)
	if err != nil {
		return nil, err
	}
	return preparedLines{j.lineFile, b}, nil
}

var _ PreparingSink = (*JSONLinesFile)(nil)

// IndexSink adds every page's title and text to an index shard, except
// pages that say noindex and aliases (Page.Canonical): the canonical
// page is the document. Safe for concurrent use (the Shard is).
type IndexSink struct {
	Shard *index.Shard
}

// Write implements Sink.
func (s IndexSink) Write(_ context.Context, p *Page) error {
	if p.Document == nil || p.Document.NoIndex || p.Canonical != "" {
		return nil
	}
	_, err := s.Shard.Add(index.Document{URL: p.URL, Title: p.Document.Title, Text: p.Document.Text, Lang: p.Document.Lang})
	return err
}

// Close implements Sink; the shard stays usable.
func (s IndexSink) Close() error { return nil }

// IndexDirSink adds every page's title and text to a durable, segmented
// index (index.Dir), except pages that say noindex and aliases
// (Page.Canonical). It is a DurableSink:
// each Add is in the index's log before Write returns, and a resumed
// crawl rewinds the index to its last committed page. Safe for concurrent
// use (the Dir is). Close leaves the Dir open: its owner closes it.
type IndexDirSink struct {
	Dir *index.Dir
}

// Write implements Sink.
func (s *IndexDirSink) Write(_ context.Context, p *Page) error {
	if p.Document == nil || p.Document.NoIndex || p.Canonical != "" {
		return nil
	}
	return s.Dir.Add(index.Document{URL: p.URL, Title: p.Document.Title, Text: p.Document.Text, Lang: p.Document.Lang})
}

// Prepare implements PreparingSink: the page's text is analysed
// (index.Dir.Prepare), so that only the insertion waits for the lock.
func (s *IndexDirSink) Prepare(_ context.Context, p *Page) (Prepared, error) {
	if p.Document == nil || p.Document.NoIndex || p.Canonical != "" {
		return preparedNothing{}, nil
	}
	d, err := s.Dir.Prepare(index.Document{URL: p.URL, Title: p.Document.Title, Text: p.Document.Text, Lang: p.Document.Lang})
	if err != nil {
		return nil, err
	}
	return preparedDoc{s.Dir, d}, nil
}

type preparedDoc struct {
	dir *index.Dir
	d   *index.PreparedDoc
}

func (p preparedDoc) Write() error { return p.dir.AddPrepared(p.d) }

// preparedNothing is a page a PreparingSink keeps nothing of.
type preparedNothing struct{}

func (preparedNothing) Write() error { return nil }

// Position implements DurableSink (index.Dir.Position).
func (s *IndexDirSink) Position() ([]byte, error) { return s.Dir.Position() }

// Rewind implements DurableSink (index.Dir.Rewind): it accepts the
// positions taken since the index's last-but-one flush, before or after
// writes.
func (s *IndexDirSink) Rewind(pos []byte) error { return s.Dir.Rewind(pos) }

// Close implements Sink; the Dir stays open.
func (s *IndexDirSink) Close() error { return nil }

var _ PreparingSink = (*IndexDirSink)(nil)
