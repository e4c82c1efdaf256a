package fetch

import (
	"context"
	"crypto/tls"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/crawlkit/crawlkit/dns"
)

// DefaultUserAgent is the User-Agent sent when Options.UserAgent is empty.
const DefaultUserAgent = "crawlkit/0.1 (+https://github.com/crawlkit/crawlkit)"

// Options configure an HTTP fetcher. The zero value is usable: every zero
// field means its default.
type Options struct {
	// Resolver resolves host names before dialing. Default dns.System{}.
	Resolver dns.Resolver

	// AllowPrivate permits connections to loopback, private (RFC 1918,
	// RFC 4193), link-local, multicast, unspecified and other special-use
	// addresses. Default false: the crawler never lets a page make it reach
	// inside the network it runs in. The check is on the address actually
	// dialed, after resolution. Tests and demos on 127.0.0.1 set it.
	AllowPrivate bool

	// UserAgent is sent with every request. Default DefaultUserAgent.
	UserAgent string

	// Accept is the Accept header. Default
	// "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5".
	Accept string

	// MaxBodySize caps the (decoded) body; a longer body is cut and the
	// response marked Truncated. Default 10 MiB.
	MaxBodySize int64

	// KeepWire keeps each body as it came off the connection (chunked
	// transfer coding removed, Content-Encoding and charset not) in
	// Response.Wire, for archives that store what the server sent (WARC).
	// It costs the compressed copy of compressed bodies; an uncompressed
	// body is shared with Body until its charset is converted. A
	// compressed body cut at MaxBodySize is then decoded from the kept
	// bytes with DecodeBody, as a replay of the archive decodes it, so the
	// two agree (a stream cut short decodes to its last complete block).
	KeepWire bool

	// MaxHeaderSize caps the response header. Default 64 KiB.
	MaxHeaderSize int64

	// MaxRatio caps decompressed size over compressed size once the
	// decompressed body exceeds 1 MiB, which stops decompression bombs
	// early; the fetch fails with ErrCompressionBomb. Default 100.
	MaxRatio int64

	// ConnectTimeout bounds the TCP connect and the TLS handshake, each.
	// Default 10 s.
	ConnectTimeout time.Duration

	// FirstByteTimeout bounds the wait for the response header after the
	// request was written. Default 30 s.
	FirstByteTimeout time.Duration

	// Timeout bounds the whole fetch, DNS to the last body byte. Default 60 s.
	Timeout time.Duration

	// MinRate is the slowest body transfer accepted, in bytes per second,
	// measured over each RateWindow: a server dripping its body slower is
	// cut off with ErrTooSlow. Default 1024; negative disables the check.
	MinRate int64

	// RateWindow is the interval over which MinRate is measured. Default 5 s.
	RateWindow time.Duration

	// MaxIdleConnsPerHost is how many kept-alive connections per host are
	// kept. Default 2 (a polite crawler has one request per host at a time).
	MaxIdleConnsPerHost int

	// MaxIdleConns caps the kept-alive connections of all hosts
	// together. A crawl of many hosts contacts each one a politeness gap
	// apart, so most idle connections wait for their next use while
	// holding their buffers (about 10 KiB each, more over TLS); the cap
	// trades a reconnect for that memory. Below the number of hosts a
	// crawl turns over, the oldest connection goes first and nearly every
	// request reconnects: a crawl of 1,000 hosts at 64 workers opened
	// 4,800 connections with a cap of 256 and 1,006 with 1,024. Default
	// 1024 (about 10 MiB when full).
	MaxIdleConns int

	// IdleConnTimeout closes a kept-alive connection unused this long.
	// Default 30 s.
	IdleConnTimeout time.Duration

	// TLSConfig is used for https; nil means the default configuration
	// (system roots). Tests point it at an httptest server's certificate.
	TLSConfig *tls.Config

	// Jar keeps cookies between fetches, so that a crawl keeps a session:
	// the cookies of every response (redirects and errors too) go into
	// it, and each request carries the ones the jar's rules give its URL.
	// Default nil: no cookies are kept or sent. Make one with
	// net/http/cookiejar and the public suffix list, which keeps a site
	// from setting cookies for a whole public suffix:
	//
	//	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List}) // golang.org/x/net/publicsuffix
	//
	// The jar must be safe for concurrent use (cookiejar's is).
	Jar http.CookieJar

	// Header holds request headers sent with every request, below
	// HostHeader and Request.Header. The headers the fetcher owns are
	// not taken from it (Validate reports them): User-Agent (UserAgent:
	// robots.txt rules are matched against the one agent the crawler
	// announces), Accept (Accept), Accept-Encoding (the fetcher asks for
	// gzip and decodes it itself, within MaxRatio), the conditional
	// If-None-Match and If-Modified-Since (Request.ETag and
	// LastModified), Host, the hop-by-hop and framing headers, and
	// Proxy-Authorization (credentials go in the proxy's URL). A Cookie
	// header is sent as given, followed by the Jar's cookies. Default
	// nil. NewHTTP copies it.
	Header http.Header

	// HostHeader holds headers for the hosts it names (lower case, port
	// ignored), added over Header: a header named here replaces the one
	// of Header. The same headers as in Header are the fetcher's own.
	// Default nil. NewHTTP copies it.
	HostHeader map[string]http.Header

	// Prepare, if set, is called with every request Fetch sends, after
	// the fetcher has set its headers and before the Jar's cookies are
	// added (so that a login it makes counts for the request itself):
	// for credentials that change (a token to refresh, a signature) or a
	// login done when first needed (see the Example of PostForm). It
	// may change any header but User-Agent and Accept-Encoding, which the
	// fetcher sets again afterwards; it must not change the method or the
	// URL. An error fails the fetch (a *Error of Op "prepare"). PostForm
	// does not call it, so that Prepare may log in through PostForm. It
	// must be safe for concurrent use. Default nil.
	Prepare func(ctx context.Context, req *http.Request) error

	// Proxy, if set, chooses the proxy for the connections to a URL: it
	// is called once per new connection with the URL of the request that
	// opens it (connections are kept alive per host, so the choice
	// should depend on the scheme and host only) and returns an http://
	// or socks5:// URL, with credentials if the proxy needs them, or nil
	// for a direct connection. ProxyURL makes one for a single proxy;
	// ParseProxy checks a proxy URL. The fetcher still resolves every
	// host name itself and judges the addresses (AllowPrivate) before it
	// asks the proxy for a tunnel to the address it judged, never to the
	// name: HTTP CONNECT to IP:port (with the name in the Host header) or
	// SOCKS5 CONNECT to the IP address, for http and https alike, so that
	// neither DNS rebinding nor the proxy's own resolver can lead a fetch
	// to an address the guard refused. A proxy that allows CONNECT only
	// to port 443 therefore cannot carry plain http. ConnectTimeout bounds
	// the connection to the proxy and, separately, the opening of the
	// tunnel; MaxHeaderSize bounds the proxy's answer. Default nil: direct
	// connections.
	Proxy func(target *url.URL) (*url.URL, error)

	// AllowPrivateProxy permits a proxy on a loopback or private address
	// (one on the crawler's own machine or in its network, the usual
	// place for one) even when AllowPrivate is off; the targets are still
	// judged by AllowPrivate. Default false: a proxy's address is judged
	// like a target's, so that a proxy chosen from data cannot be pointed
	// inside the network. AllowPrivate implies it.
	AllowPrivateProxy bool
}

func (o Options) withDefaults() Options {
	if o.Resolver == nil {
		o.Resolver = dns.System{}
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Accept == "" {
		o.Accept = "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"
	}
	if o.MaxBodySize <= 0 {
		o.MaxBodySize = 10 << 20
	}
	// No limit is math.MaxInt64; one byte less leaves room for the +1
	// that detects a body longer than the limit.
	o.MaxBodySize = min(o.MaxBodySize, math.MaxInt64-1)
	if o.MaxHeaderSize <= 0 {
		o.MaxHeaderSize = 64 << 10
	}
	if o.MaxRatio <= 0 {
		o.MaxRatio = 100
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.FirstByteTimeout <= 0 {
		o.FirstByteTimeout = 30 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.MinRate == 0 {
		o.MinRate = 1024
	}
	if o.RateWindow <= 0 {
		o.RateWindow = 5 * time.Second
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = 2
	}
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = 1024
	}
	if o.IdleConnTimeout <= 0 {
		o.IdleConnTimeout = 30 * time.Second
	}
	o.Header = cloneHeader(o.Header)
	if o.HostHeader != nil {
		hh := make(map[string]http.Header, len(o.HostHeader))
		for host, h := range o.HostHeader {
			k := hostKey(host)
			c := cloneHeader(h)
			if hh[k] == nil {
				hh[k] = c
				continue
			}
			for name, v := range c { // "A.example" and "a.example:443" are one host
				hh[k][name] = append(hh[k][name], v...)
			}
		}
		o.HostHeader = hh
	}
	return o
}
