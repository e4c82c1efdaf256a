package dns

import (
	"context"
	"errors"
	"net"
	"strings"
)

// Kind classifies a lookup failure. A Kind is itself an error, so that
// errors.Is(err, dns.NotFound) tests the kind of any *Error in err's chain.
type Kind uint8

const (
	// Unknown is a failure that fits no other kind: the resolver was
	// closed, the caller's context was canceled, a socket failed.
	Unknown Kind = iota
	// NotFound: the name does not exist (NXDOMAIN) or has no address
	// records of the families asked for. Authoritative; cached negatively.
	NotFound
	// Timeout: no usable answer within the attempts, or the caller's
	// deadline passed. Temporary.
	Timeout
	// ServerFailure: the nameservers answered SERVFAIL, REFUSED or another
	// error code on every attempt. Temporary.
	ServerFailure
	// CNAMELoop: the alias chain loops or is longer than Options.MaxCNAME.
	CNAMELoop
	// BadName: the host name is not a valid DNS name (empty, too long, an
	// empty or over-long label, or a character other than letters, digits,
	// '-', '_' and '.'; IDNs must be converted to A-labels first).
	BadName
	// BadResponse: every answer received was malformed or did not match
	// the question.
	BadResponse
)

var kindNames = [...]string{"unknown failure", "not found", "timeout", "server failure", "CNAME loop", "bad name", "bad response"}

// Error returns the kind's description prefixed with "dns: ".
func (k Kind) Error() string { return "dns: " + k.String() }

// String returns the kind's description, e.g. "not found".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown failure"
}

// Error is the error of a failed lookup. Use errors.As to get it and
// errors.Is(err, dns.NotFound) (or another Kind) to test its kind; Unwrap
// gives the cause (e.g. context.DeadlineExceeded or a socket error).
type Error struct {
	Name   string // the host name looked up, as canonicalized
	Kind   Kind   // what went wrong
	Server string // nameserver of the last attempt ("" if none was asked)
	Err    error  // the cause; never nil
}

// Error implements error: "dns: lookup NAME: KIND: CAUSE (server S)".
func (e *Error) Error() string {
	s := "dns: lookup " + e.Name + ": " + e.Kind.String()
	if e.Err != nil && e.Err != error(e.Kind) {
		s += ": " + strings.TrimPrefix(e.Err.Error(), "dns: ")
	}
	if e.Server != "" {
		s += " (server " + e.Server + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// Timeout reports whether the lookup timed out (net.Error).
func (e *Error) Timeout() bool { return e.Kind == Timeout }

// Temporary reports whether trying again later may succeed: timeouts and
// server failures (net.Error).
func (e *Error) Temporary() bool { return e.Kind == Timeout || e.Kind == ServerFailure }

var _ net.Error = (*Error)(nil)

// Causes carried in Error.Err.
var (
	// ErrClosed is the cause of lookups made after, or cut short by, Close.
	ErrClosed = errors.New("dns: resolver closed")

	errNXDomain     = errors.New("dns: no such host (NXDOMAIN)")
	errNoAddress    = errors.New("dns: no address records")
	errServFail     = errors.New("dns: server failure (SERVFAIL)")
	errRefused      = errors.New("dns: query refused (REFUSED)")
	errRcode        = errors.New("dns: unexpected response code")
	errLoop         = errors.New("dns: CNAME chain loops")
	errLongChain    = errors.New("dns: CNAME chain too long")
	errBadName      = errors.New("dns: invalid host name")
	errBadResponse  = errors.New("dns: malformed response")
	errTruncatedTCP = errors.New("dns: truncated response over TCP")
	errConnRefused  = errors.New("dns: nameserver unreachable (connection refused)")
	errBusy         = errors.New("dns: too many queries in flight to one nameserver")
)

// ctxKind classifies a context error.
func ctxKind(err error) Kind {
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout
	}
	return Unknown
}

// fromNet converts an error of net.Resolver into an *Error.
func fromNet(name string, err error) error {
	var de *net.DNSError
	kind := Unknown
	server := ""
	switch {
	case errors.As(err, &de):
		server = de.Server
		switch {
		case de.IsNotFound:
			kind = NotFound
		case de.IsTimeout:
			kind = Timeout
		case de.IsTemporary:
			kind = ServerFailure
		}
	case errors.Is(err, context.DeadlineExceeded):
		kind = Timeout
	}
	return &Error{Name: name, Kind: kind, Server: server, Err: err}
}
