package fetch

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Fetcher fetches one URL: the fetch module of the book's Figure 20.1.
// Implementations must be safe for concurrent use. A Fetcher does not follow
// redirects: a 3xx response is returned with its resolved Location, so the
// crawler sends the target through its URL filter and duplicate check.
type Fetcher interface {
	// Fetch fetches req.URL. A response is returned for every HTTP status;
	// the error, a *Error, is non-nil only when no complete response head
	// was received or the body could not be read.
	Fetch(ctx context.Context, req *Request) (*Response, error)
}

// FetcherFunc adapts a function to the Fetcher interface, like
// http.HandlerFunc.
type FetcherFunc func(ctx context.Context, req *Request) (*Response, error)

// Fetch calls f(ctx, req).
func (f FetcherFunc) Fetch(ctx context.Context, req *Request) (*Response, error) { return f(ctx, req) }

// Gate admits the requests a Fetcher makes on its own on the way to a
// page, such as a rendering fetcher's scripts, styles and data requests.
// A crawl installs its Gate on every Fetcher that is Gated, so that those
// requests obey robots.txt and the politeness of the crawl's own fetches.
// Implementations must be safe for concurrent use.
type Gate interface {
	// Admit is called before a request for sub made while fetching page.
	// It returns when the request may be sent, with a release to call
	// once its response has been read; an error refuses the request
	// (robots.txt disallows it, or ctx ended while waiting).
	Admit(ctx context.Context, page, sub *url.URL) (release func(), err error)
}

// Gated is implemented by Fetchers that make requests of their own on the
// way to a page. SetGate is called before the first Fetch.
type Gated interface {
	Fetcher
	SetGate(Gate)
}

// Request is one fetch.
type Request struct {
	// URL is the absolute http or https URL to fetch.
	URL *url.URL
	// ETag, if set, is sent as If-None-Match: a server whose copy has not
	// changed answers 304 Not Modified with no body (re-crawls).
	ETag string
	// LastModified, if set, is sent as If-Modified-Since (the
	// Last-Modified of an earlier response, as received).
	LastModified string
	// Header holds extra request headers (e.g. Accept-Language). Headers
	// the fetcher sets itself (User-Agent, Accept-Encoding, the conditional
	// ones) take precedence.
	Header http.Header
}

// Response is the result of a fetch.
type Response struct {
	// URL is the URL fetched; it equals Request.URL since redirects are
	// not followed.
	URL *url.URL
	// Status is the HTTP status code.
	Status int
	// Header is the response header as received (Content-Encoding
	// included, although Body is decoded).
	Header http.Header
	// Body is the body with its Content-Encoding (gzip) removed and, for
	// text types (text/*, XHTML), converted to UTF-8.
	Body []byte
	// Truncated reports that the body was longer than the fetcher's
	// MaxBodySize (decoded) and Body holds only its beginning.
	Truncated bool
	// Location is the Location header of a 3xx response resolved against
	// URL; nil if absent or unparseable.
	Location *url.URL
	// ContentType is the media type of Content-Type, lowercase, without
	// parameters ("text/html").
	ContentType string
	// Charset is the character encoding the body was in before conversion
	// (a WHATWG name: "utf-8", "windows-1252", ...); "" for non-text types.
	Charset string
	// ETag and LastModified are the validators to send with the next
	// conditional fetch of URL.
	ETag, LastModified string
	// Addr is the address of the server the response came from; through
	// a proxy, the address the proxy was asked to connect to.
	Addr netip.AddrPort
	// WireBytes is the number of body bytes received before decoding.
	WireBytes int64
	// Wire is the body as received (chunked transfer coding removed,
	// Content-Encoding and charset conversion not applied) when the
	// fetcher keeps it (Options.KeepWire), nil otherwise; it holds at most
	// MaxBodySize bytes, and only the beginning of the body when Truncated.
	// Do not modify it: it may share memory with Body.
	Wire []byte
	// Timings says where the time went. Politeness waits k times
	// Timings.Total before contacting the host again (book §20.2.3).
	Timings Timings
	// Rendered reports that Body is the document after its scripts ran
	// (a rendering fetcher), not the bytes received; Wire, when kept,
	// still holds those.
	Rendered bool
	// Subresources are the responses the fetcher received on its own on
	// the way to this one, in order: a rendering fetcher's scripts,
	// styles and data requests. The crawl archives them with the page.
	Subresources []*Response
}

// NotModified reports a 304 answer to a conditional fetch.
func (r *Response) NotModified() bool { return r.Status == http.StatusNotModified }

// Redirect reports a 3xx status with a Location.
func (r *Response) Redirect() bool { return r.Status >= 300 && r.Status < 400 && r.Location != nil }

// Timings are the durations of the phases of a fetch. DNS and Connect are
// zero when a kept-alive connection was reused.
type Timings struct {
	Start     time.Time     // when Fetch was called
	DNS       time.Duration // resolving the host name
	Connect   time.Duration // TCP connect (and TLS handshake for https)
	FirstByte time.Duration // from Start to the first byte of the response
	Total     time.Duration // from Start to the end of the body
	Reused    bool          // the connection was kept alive from an earlier fetch
}
