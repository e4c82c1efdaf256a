package fetch

import (
	"crypto/tls"
	"math"
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
	// apart, so most idle connections would wait seconds for their next
	// use while holding their buffers (about 10 KiB each, more over TLS);
	// the cap trades a reconnect for that memory. Default 256.
	MaxIdleConns int

	// IdleConnTimeout closes a kept-alive connection unused this long.
	// Default 30 s.
	IdleConnTimeout time.Duration

	// TLSConfig is used for https; nil means the default configuration
	// (system roots). Tests point it at an httptest server's certificate.
	TLSConfig *tls.Config
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
		o.MaxIdleConns = 256
	}
	if o.IdleConnTimeout <= 0 {
		o.IdleConnTimeout = 30 * time.Second
	}
	return o
}
