package urlnorm

import (
	"errors"
	"strconv"
)

// Sentinel errors wrapped by *Error; test for them with errors.Is.
var (
	// ErrNoScheme: the URL given to Canonical has no scheme, or a relative
	// reference was given to Resolve without a base.
	ErrNoScheme = errors.New("urlnorm: missing scheme")
	// ErrBadScheme: the scheme contains a character RFC 3986 §3.1 does not allow.
	ErrBadScheme = errors.New("urlnorm: invalid scheme")
	// ErrBadHost: the host is empty where the scheme needs one, contains a
	// character no host may contain, is a malformed IPv6 literal, or is an
	// internationalized name IDNA rejects.
	ErrBadHost = errors.New("urlnorm: invalid host")
	// ErrBadPort: the port is not a decimal number up to 65535.
	ErrBadPort = errors.New("urlnorm: invalid port")
)

// Error reports a URL that could not be resolved or canonicalized.
type Error struct {
	Op  string // "resolve" or "canonical"
	URL string // the input
	Err error  // a sentinel above, or the error of net/url or idna
}

// Error implements error.
func (e *Error) Error() string {
	return "urlnorm: " + e.Op + " " + quote(e.URL) + ": " + trimPrefix(e.Err.Error())
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func trimPrefix(s string) string {
	const p = "urlnorm: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}
