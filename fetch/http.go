package fetch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// HTTP is the default Fetcher: net/http underneath, dialing only the
// addresses its dns.Resolver returns and the private-address guard allows,
// with every limit of Options enforced. It keeps connections alive between
// fetches of one host.
//
// An HTTP is safe for concurrent use. Close it to release kept-alive
// connections.
type HTTP struct {
	opts Options
	tr   *http.Transport
	// tcp makes the TCP connections, to servers and proxies alike, to
	// the addresses the guard allowed; tests replace it.
	tcp func(ctx context.Context, network, addr string) (net.Conn, error)
}

var _ Fetcher = (*HTTP)(nil)

// NewHTTP returns an HTTP fetcher with opts (zero fields take their
// defaults). opts may be nil: every field takes its default. The options
// are copied, and the transport gets a clone of TLSConfig, so the caller
// may change or reuse them afterwards.
func NewHTTP(opts *Options) *HTTP {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	f := &HTTP{opts: o, tcp: (&net.Dialer{Timeout: o.ConnectTimeout}).DialContext}
	var tlsConf = o.TLSConfig
	if tlsConf != nil {
		tlsConf = tlsConf.Clone()
	}
	f.tr = &http.Transport{
		Proxy:                  nil, // dial opens proxy tunnels itself, to the checked address
		DialContext:            f.dial,
		TLSClientConfig:        tlsConf,
		TLSHandshakeTimeout:    o.ConnectTimeout,
		ResponseHeaderTimeout:  o.FirstByteTimeout,
		DisableCompression:     true, // we decode gzip ourselves, to bound it
		MaxResponseHeaderBytes: o.MaxHeaderSize,
		MaxIdleConns:           o.MaxIdleConns,
		MaxIdleConnsPerHost:    o.MaxIdleConnsPerHost,
		IdleConnTimeout:        o.IdleConnTimeout,
		ForceAttemptHTTP2:      true,
	}
	return f
}

// Options returns the options in effect, defaults filled in.
func (f *HTTP) Options() Options { return f.opts }

// Close closes kept-alive connections. Fetches in progress are not
// interrupted; cancel their contexts for that. It always returns nil.
func (f *HTTP) Close() error {
	f.tr.CloseIdleConnections()
	return nil
}

// Fetch implements Fetcher. Its cost is the network's; on top of it, one
// copy of the body into a buffer grown up to MaxBodySize, and one more for a
// body not in UTF-8.
func (f *HTTP) Fetch(ctx context.Context, req *Request) (*Response, error) {
	return f.do(ctx, http.MethodGet, req, nil)
}

// PostForm posts form to u as application/x-www-form-urlencoded, the way
// a browser submits a login form, and returns the answer as Fetch does
// (a redirect is not followed). It goes through everything a Fetch does
// (the guard, the proxy, the limits, Header and HostHeader, the Jar,
// which keeps the cookies of the answer) but Options.Prepare, so that a
// Prepare may call it. It is how a crawl logs in before it starts:
//
//	resp, err := f.PostForm(ctx, loginURL, url.Values{"user": {"crawler"}, "password": {pw}})
//	// a 303 to the members' area with a session cookie, now in the Jar
//
// It is safe for concurrent use.
func (f *HTTP) PostForm(ctx context.Context, u *url.URL, form url.Values) (*Response, error) {
	return f.do(ctx, http.MethodPost, &Request{URL: u}, []byte(form.Encode()))
}

// do sends one request: a GET (Fetch) or a form POST (PostForm, body
// not nil).
func (f *HTTP) do(ctx context.Context, method string, req *Request, body []byte) (*Response, error) {
	start := time.Now()
	if req == nil || req.URL == nil || req.URL.Host == "" ||
		(req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		raw := ""
		if req != nil && req.URL != nil {
			raw = req.URL.String()
		}
		return nil, &Error{Op: "request", Kind: KindBadURL, URL: raw, Err: ErrScheme}
	}
	raw := req.URL.String()
	ctx, cancelTotal := context.WithTimeoutCause(ctx, f.opts.Timeout, ErrTimeout)
	defer cancelTotal()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	ct := &connTrace{url: req.URL}
	var (
		mu        sync.Mutex
		firstByte time.Time
		reused    bool
		remote    string
	)
	ctx = context.WithValue(ctx, traceKey{}, ct)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			mu.Lock()
			reused, remote = i.Reused, i.Conn.RemoteAddr().String()
			mu.Unlock()
		},
		GotFirstResponseByte: func() {
			mu.Lock()
			firstByte = time.Now()
			mu.Unlock()
		},
	})

	var rbody io.Reader
	if body != nil {
		rbody = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, raw, rbody)
	if err != nil {
		return nil, &Error{Op: "request", Kind: KindBadURL, URL: raw, Err: err}
	}
	hreq.Header = f.requestHeader(req.URL.Host, req.Header)
	hreq.Header.Set("User-Agent", f.opts.UserAgent)
	if hreq.Header.Get("Accept") == "" {
		hreq.Header.Set("Accept", f.opts.Accept)
	}
	hreq.Header.Set("Accept-Encoding", "gzip")
	if req.ETag != "" {
		hreq.Header.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hreq.Header.Set("If-Modified-Since", req.LastModified)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if f.opts.Prepare != nil && body == nil {
		if err := f.opts.Prepare(ctx, hreq); err != nil {
			var fe *Error
			if errors.As(err, &fe) || ctx.Err() != nil { // a login that failed, a canceled fetch
				return nil, classify("prepare", raw, err, context.Cause(ctx))
			}
			return nil, &Error{Op: "prepare", Kind: KindOther, URL: raw, Err: err}
		}
		hreq.Header.Set("User-Agent", f.opts.UserAgent)
		hreq.Header.Set("Accept-Encoding", "gzip")
	}
	if f.opts.Jar != nil {
		// After Prepare: a login it makes counts for this request.
		for _, c := range f.opts.Jar.Cookies(req.URL) {
			hreq.AddCookie(c)
		}
	}

	hresp, err := f.tr.RoundTrip(hreq)
	if err != nil {
		return nil, classify("request", raw, err, context.Cause(ctx))
	}
	defer hresp.Body.Close()
	if f.opts.Jar != nil {
		// Every answer's cookies, a redirect's too: a login answers 303
		// with the session cookie, and the redirect is not followed.
		if cs := hresp.Cookies(); len(cs) > 0 {
			f.opts.Jar.SetCookies(req.URL, cs)
		}
	}

	resp := &Response{
		URL:          req.URL,
		Status:       hresp.StatusCode,
		Header:       hresp.Header,
		ETag:         hresp.Header.Get("ETag"),
		LastModified: hresp.Header.Get("Last-Modified"),
	}
	if hresp.StatusCode >= 300 && hresp.StatusCode < 400 {
		if loc := hresp.Header.Get("Location"); loc != "" {
			resp.Location, _ = urlnorm.Resolve(req.URL, loc)
		}
	}

	body, wire, wireN, truncated, err := f.readBody(ctx, cancel, hresp)
	if err != nil {
		return nil, classify("read", raw, err, context.Cause(ctx))
	}
	resp.Body, resp.Wire, resp.WireBytes, resp.Truncated = body, wire, wireN, truncated

	ctype := hresp.Header.Get("Content-Type")
	resp.ContentType = ContentTypeOf(ctype, body)
	if isText(resp.ContentType) {
		resp.Body, resp.Charset = ToUTF8(resp.Body, ctype)
	}

	mu.Lock()
	defer mu.Unlock()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	resp.Addr, _ = netip.ParseAddrPort(remote)
	resp.Timings = Timings{
		Start:   start,
		DNS:     ct.dns,
		Connect: ct.connect,
		Total:   time.Since(start),
		Reused:  reused,
	}
	if !firstByte.IsZero() {
		resp.Timings.FirstByte = firstByte.Sub(start)
	}
	return resp, nil
}

// MediaType returns the media type of a Content-Type value, lowercase and
// without parameters ("text/html"), or "" when there is none or it is not
// a media type ("text html"). Parameters mime.ParseMediaType rejects do
// not lose the type.
func MediaType(ct string) string {
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	t, _, _ := strings.Cut(ct, ";")
	if mt, _, err := mime.ParseMediaType(t); err == nil {
		return mt
	}
	return ""
}

// ContentTypeOf is Response.ContentType for a response with Content-Type
// header value ct and the given body: its MediaType, or, when that is
// empty, the type sniffed from the body (http.DetectContentType; "" for
// an empty body), as browsers do.
func ContentTypeOf(ct string, body []byte) string {
	if mt := MediaType(ct); mt != "" || len(body) == 0 {
		return mt
	}
	// The type only: DetectContentType says utf-8 for any HTML.
	return MediaType(http.DetectContentType(body))
}

// isText reports whether a media type is text to convert to UTF-8. XML is
// left alone: it declares its encoding itself and sitemaps must be UTF-8.
func isText(mt string) bool {
	return strings.HasPrefix(mt, "text/") || mt == "application/xhtml+xml"
}

// ToUTF8 converts body to UTF-8 and returns it with the name of the encoding
// it was in. The encoding is found as browsers find it (golang.org/x/net/html/charset):
// a byte-order mark, the charset of contentType, a <meta> charset in the
// first 1024 bytes; without any of these, a body that is valid UTF-8 is
// UTF-8 and anything else windows-1252 (which is what "latin-1" means on the
// web). Invalid UTF-8 is replaced by U+FFFD. body is returned as it is when
// it needs no change; otherwise it is not modified.
func ToUTF8(body []byte, contentType string) ([]byte, string) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || (!certain && name == "windows-1252" && utf8.Valid(body)) {
		if !utf8.Valid(body) {
			return bytes.ToValidUTF8(body, []byte("\uFFFD")), "utf-8"
		}
		return body, "utf-8"
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return bytes.ToValidUTF8(body, []byte("\uFFFD")), name
	}
	return out, name
}

// gzipPool recycles gzip readers between fetches, each with the buffered
// reader it reads the wire through (gzip.Reader.Reset would allocate a new
// one for every response).
var gzipPool sync.Pool

type gzipReader struct {
	zr *gzip.Reader
	br *bufio.Reader
}

// scratchPool recycles the buffers decoded bodies are read into; the body
// returned is a copy of its exact length. A decoded body's length is not
// known in advance, and reading straight into a buffer of a guessed size
// allocated 32 KiB for every compressed page, twice what a typical page
// holds. Buffers above maxPooledScratch are left to the collector.
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledScratch = 1 << 20

// countingReader counts the bytes read through it, for MinRate and
// MaxRatio, and keeps the first max of them when keep is set (the body as
// received, for KeepWire).
type countingReader struct {
	r    io.Reader
	n    atomic.Int64
	keep bool
	max  int64
	kept []byte
	cut  bool // bytes beyond max were not kept
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if c.keep {
		room := c.max - int64(len(c.kept))
		c.kept = append(c.kept, p[:max(0, min(int64(n), room))]...)
		c.cut = c.cut || int64(n) > room
	}
	return n, err
}

// ratioFloor is the decoded size below which MaxRatio is not checked: small
// bodies of repetitive markup compress far better than 100:1.
const ratioFloor = 1 << 20

// readBody reads the body decoded, bounded by MaxBodySize, MaxRatio and
// MinRate. It returns the body, the body as received when KeepWire asks
// for it (the body itself when there is nothing to decode), the number of
// bytes received on the wire, and whether the body was cut.
func (f *HTTP) readBody(ctx context.Context, cancel context.CancelCauseFunc, hresp *http.Response) (body, kept []byte, n int64, truncated bool, err error) {
	wire := &countingReader{r: hresp.Body, max: f.opts.MaxBodySize}
	// Whatever still points to wire after the fetch (a pooled reader that
	// missed its reset) holds neither the connection's body nor the kept
	// bytes.
	defer func() { wire.r, wire.kept = nil, nil }()
	if f.opts.MinRate > 0 {
		stop := f.watchRate(wire, cancel)
		defer stop()
	}
	var r io.Reader = wire
	switch strings.ToLower(strings.TrimSpace(hresp.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		wire.keep = f.opts.KeepWire
		g, _ := gzipPool.Get().(*gzipReader)
		if g == nil {
			g = &gzipReader{zr: new(gzip.Reader), br: bufio.NewReader(nil)}
		}
		g.br.Reset(wire)
		err := g.zr.Reset(g.br)
		// Put back holding neither the wire nor the connection.
		defer func() { g.br.Reset(nil); gzipPool.Put(g) }()
		if err != nil {
			if errors.Is(err, io.EOF) { // empty body: nothing to decode
				return nil, nil, 0, false, nil
			}
			return nil, nil, wire.n.Load(), false, protocolErr(err)
		}
		r = g.zr // its 40 KiB of decoder state are reused
	case "deflate":
		wire.keep = f.opts.KeepWire
		zr, err := zlib.NewReader(wire)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil, 0, false, nil
			}
			return nil, nil, wire.n.Load(), false, protocolErr(err)
		}
		defer zr.Close()
		r = zr
	}
	body, truncated, err = f.readDecoded(ctx, cancel, hresp, wire, r)
	if err == nil && truncated && wire.keep && f.opts.KeepWire {
		// The body is cut and the archive will hold the wire bytes read
		// so far: decode those as a replay of the archive will
		// (DecodeBody), so that the two agree. When the wire bytes were
		// all read this is the same body; when the stream was cut too, a
		// decompressor stops at its last complete block, a little before
		// where the live one, fed more, got to.
		if b, _, derr := DecodeBody(wire.kept, hresp.Header.Get("Content-Encoding"), f.opts.MaxBodySize); derr == nil {
			body = b
		}
	}
	switch {
	case err != nil:
		return nil, nil, wire.n.Load(), false, err
	case !f.opts.KeepWire:
	case wire.keep && wire.cut && !truncated:
		// A compressed body longer on the wire than MaxBodySize decoded
		// within it (incompressible data grows a little): the wire copy
		// is incomplete, so there is none.
	case wire.keep:
		kept = wire.kept
	default:
		kept = body // nothing to decode: the body is the wire
	}
	return body, kept, wire.n.Load(), truncated, nil
}

// DecodeBody removes the content coding encoding from body, a response
// body as received, whole or cut short: gzip (or x-gzip) and deflate,
// which is the zlib format (RFC 9110 §8.4.1); any other coding, or none,
// returns body as it is. At most limit decoded bytes are kept; truncated
// reports that there were more. A stream cut short decodes as far as its
// last complete block. An error means that body does not start as the
// coding says. HTTP.Fetch decodes with the same decompressors, so a body
// archived as received (Options.KeepWire, warc.Replay) decodes to what
// the crawler saw. A limit of math.MaxInt64 means none; a negative one is
// 0.
func DecodeBody(body []byte, encoding string, limit int64) (decoded []byte, truncated bool, err error) {
	limit = min(max(limit, 0), math.MaxInt64-1) // room for the +1 below
	var zr io.ReadCloser
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "gzip", "x-gzip":
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err != nil {
			return nil, false, protocolErr(err)
		}
	case "deflate":
		if zr, err = zlib.NewReader(bytes.NewReader(body)); err != nil {
			return nil, false, protocolErr(err)
		}
	default:
		if int64(len(body)) > limit {
			return body[:limit], true, nil
		}
		return body, false, nil
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && len(out) == 0 {
		return nil, false, protocolErr(err)
	}
	if int64(len(out)) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// readDecoded reads r, the decoded body of the wire, bounded by
// MaxBodySize and MaxRatio.
func (f *HTTP) readDecoded(ctx context.Context, cancel context.CancelCauseFunc, hresp *http.Response, wire *countingReader, r io.Reader) ([]byte, bool, error) {
	max := f.opts.MaxBodySize
	decoding := r != io.Reader(wire)
	lr := io.LimitReader(r, max+1) // one byte more than max shows a longer body
	if cl := hresp.ContentLength; cl >= 0 && !decoding {
		body, _, truncated, err := f.readInto(ctx, cancel, wire, decoding, make([]byte, 0, min(cl+1, max+1)), lr)
		return body, truncated, err
	}
	// The length is unknown: read into a pooled buffer, and copy the body
	// out at its length.
	sp := scratchPool.Get().(*[]byte)
	buf := *sp
	if cap(buf) == 0 {
		buf = make([]byte, 0, min(32<<10, max+1))
	}
	body, buf, truncated, err := f.readInto(ctx, cancel, wire, decoding, buf[:0], lr)
	body = bytes.Clone(body)
	if cap(buf) <= maxPooledScratch {
		*sp = buf[:0]
		scratchPool.Put(sp)
	}
	return body, truncated, err
}

// readInto reads lr into buf, growing it, until EOF, more than MaxBodySize
// bytes or an error. It returns the body, a slice of the buffer, and the
// buffer.
func (f *HTTP) readInto(ctx context.Context, cancel context.CancelCauseFunc, wire *countingReader, decoding bool, buf []byte, lr io.Reader) (body, _ []byte, truncated bool, err error) {
	max := f.opts.MaxBodySize
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return buf[:max], buf, true, nil
		}
		if d := int64(len(buf)); decoding && d > ratioFloor && d > f.opts.MaxRatio*wire.n.Load() {
			cancel(ErrCompressionBomb)
			return nil, buf, false, ErrCompressionBomb
		}
		switch {
		case err == io.EOF:
			return buf, buf, false, nil
		case err == nil:
		case ctx.Err() != nil:
			return nil, buf, false, context.Cause(ctx)
		case decoding && isDecodeErr(err):
			return nil, buf, false, protocolErr(err)
		default:
			return nil, buf, false, err
		}
	}
}

func isDecodeErr(err error) bool {
	return errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, zlib.ErrHeader) || errors.Is(err, zlib.ErrChecksum) ||
		strings.Contains(err.Error(), "flate: corrupt")
}

func protocolErr(err error) error {
	return &Error{Op: "decode", Kind: KindProtocol, Err: err}
}

// watchRate cancels the fetch with ErrTooSlow when a RateWindow passes with
// fewer than MinRate × RateWindow bytes received. It uses a timer, not a
// goroutine; the returned func stops it.
func (f *HTTP) watchRate(c *countingReader, cancel context.CancelCauseFunc) (stop func()) {
	window := f.opts.RateWindow
	need := int64(float64(f.opts.MinRate) * window.Seconds())
	var (
		mu      sync.Mutex
		stopped bool
		last    int64
		t       *time.Timer
	)
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(window, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		n := c.n.Load()
		if n-last < need {
			cancel(ErrTooSlow)
			return
		}
		last = n
		t.Reset(window)
	})
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}
