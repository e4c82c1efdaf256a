package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// Kind classifies a fetch failure, so that a crawler can count failures and
// decide whether to retry without parsing error strings.
type Kind uint8

// The kinds of failure.
const (
	KindOther    Kind = iota // anything not classified below
	KindBadURL               // the URL is not an absolute http or https URL
	KindDNS                  // the host name did not resolve
	KindRefused              // every address of the host is private and AllowPrivate is off
	KindConnect              // the TCP connection failed (refused, unreachable)
	KindTLS                  // the TLS handshake or certificate check failed
	KindTimeout              // a connect, first-byte or total timeout, or a server sending slower than MinRate
	KindTooLarge             // the header exceeded MaxHeaderSize or compression exceeded MaxRatio
	KindReset                // the connection was reset or closed before the response was complete
	KindProtocol             // the server did not speak HTTP, or sent a body that does not decode
	KindCanceled             // the caller's context was canceled
	KindProxy                // the proxy could not be reached, refused the tunnel or failed (see ProxyError)
)

var kindNames = [...]string{
	KindOther: "other", KindBadURL: "bad url", KindDNS: "dns", KindRefused: "refused address",
	KindConnect: "connect", KindTLS: "tls", KindTimeout: "timeout", KindTooLarge: "too large",
	KindReset: "reset", KindProtocol: "protocol", KindCanceled: "canceled", KindProxy: "proxy",
}

// String returns the name of k ("timeout", "refused address", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Sentinel errors wrapped by *Error; test for them with errors.Is.
var (
	// ErrScheme: the request has no URL, or not an absolute http(s) one (KindBadURL).
	ErrScheme = errors.New("fetch: URL is not absolute http or https")
	// ErrPrivateAddress: every address of the host is one IsPrivate refuses (KindRefused).
	ErrPrivateAddress = errors.New("fetch: address is private, loopback, link-local, multicast or unspecified")
	// ErrConnectTimeout: the TCP connect took longer than ConnectTimeout (KindTimeout).
	ErrConnectTimeout = errors.New("fetch: connect timeout")
	// ErrFirstByte: no response header within FirstByteTimeout of the request (KindTimeout).
	ErrFirstByte = errors.New("fetch: no response header within FirstByteTimeout")
	// ErrTimeout: the fetch took longer than Timeout (KindTimeout).
	ErrTimeout = errors.New("fetch: total timeout")
	// ErrTooSlow: a RateWindow passed with less than MinRate received (KindTimeout).
	ErrTooSlow = errors.New("fetch: transfer slower than MinRate")
	// ErrHeaderTooLarge: the response header exceeded MaxHeaderSize (KindTooLarge).
	ErrHeaderTooLarge = errors.New("fetch: response header larger than MaxHeaderSize")
	// ErrCompressionBomb: the body decompressed beyond MaxRatio (KindTooLarge).
	ErrCompressionBomb = errors.New("fetch: decompressed body exceeds MaxRatio times its compressed size")
)

// Error describes a failed fetch or parse: what was being done (Op:
// "resolve", "dial", "proxy", "prepare", "request", "read", "decode",
// "parse"), the kind of
// failure, the URL, and the underlying error (a sentinel above, or the
// error of net, net/http, crypto/tls, compress/gzip). Use errors.As to get
// it and errors.Is for the sentinels.
type Error struct {
	Op   string
	Kind Kind
	URL  string
	Err  error
}

// Error implements error.
func (e *Error) Error() string {
	return "fetch: " + e.Op + " " + e.URL + ": " + e.Kind.String() + ": " + strings.TrimPrefix(e.Err.Error(), "fetch: ")
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the failure is a timeout, as net.Error does.
func (e *Error) Timeout() bool { return e.Kind == KindTimeout }

// classify turns an error of net/http, net or crypto/tls into a *Error. cause
// is the cancellation cause of the fetch's context, if it was canceled.
func classify(op, rawURL string, err, cause error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		c := *fe // the transport may hand one dial error to several requests
		if c.URL == "" {
			c.URL = rawURL
		}
		if c.Op == "" {
			c.Op = op
		}
		return &c
	}
	e := &Error{Op: op, URL: rawURL, Err: err}
	if cause != nil && !errors.Is(cause, context.Canceled) {
		// One of our own timers canceled the fetch: report that, not the
		// "context canceled" the transport saw.
		e.Err = cause
		switch {
		case errors.Is(cause, ErrHeaderTooLarge), errors.Is(cause, ErrCompressionBomb):
			e.Kind = KindTooLarge
		case errors.Is(cause, context.DeadlineExceeded), errors.Is(cause, ErrTimeout),
			errors.Is(cause, ErrFirstByte), errors.Is(cause, ErrTooSlow):
			e.Kind = KindTimeout
		default:
			e.Kind = KindOther
		}
		return e
	}
	var (
		ne   net.Error
		dnse *net.DNSError
		rhe  tls.RecordHeaderError
		ae   tls.AlertError
		cve  *tls.CertificateVerificationError
		uae  x509.UnknownAuthorityError
		he   x509.HostnameError
		cie  x509.CertificateInvalidError
	)
	msg := err.Error()
	switch {
	case strings.Contains(msg, "timeout awaiting response headers"):
		e.Kind, e.Err = KindTimeout, errors.Join(ErrFirstByte, err)
	case errors.Is(err, context.Canceled) || cause != nil:
		e.Kind = KindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind = KindTimeout
	case errors.As(err, &dnse):
		e.Kind = KindDNS
	case errors.As(err, &rhe), errors.As(err, &ae), errors.As(err, &cve), errors.As(err, &uae),
		errors.As(err, &he), errors.As(err, &cie), strings.Contains(msg, "tls: "):
		e.Kind = KindTLS
	case strings.Contains(msg, "server response headers exceeded"):
		e.Kind, e.Err = KindTooLarge, errors.Join(ErrHeaderTooLarge, err)
	case errors.As(err, &ne) && ne.Timeout():
		e.Kind = KindTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF), strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "server closed idle connection"):
		e.Kind = KindReset
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH):
		e.Kind = KindConnect
	case strings.Contains(msg, "malformed"), strings.Contains(msg, "gzip:"),
		strings.Contains(msg, "flate:"), strings.Contains(msg, "invalid"):
		e.Kind = KindProtocol
	default:
		e.Kind = KindOther
	}
	return e
}
