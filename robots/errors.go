package robots

import (
	"errors"
	"strings"
)

var (
	// ErrClosed is returned by a Cache used after Close.
	ErrClosed = errors.New("robots: cache closed")
	// ErrScheme is returned for a URL that is neither http nor https: the
	// Cache fetches robots.txt over HTTP only, although RFC 9309 §2.3 lets
	// other URI schemes have one.
	ErrScheme = errors.New("robots: unsupported scheme")
	// ErrNoHost is returned for a URL without a host.
	ErrNoHost = errors.New("robots: URL without host")
)

// Error records a Cache operation that failed and the host it was for.
type Error struct {
	Op   string // "allowed", "check", "get"
	Host string // scheme://host[:port] the robots.txt belongs to
	Err  error
}

// Error returns "robots: OP HOST: CAUSE".
func (e *Error) Error() string {
	return "robots: " + e.Op + " " + e.Host + ": " + strings.TrimPrefix(e.Err.Error(), "robots: ")
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// errNoResponse stands for a FetchFunc that returned neither a response
// nor an error.
var errNoResponse = errors.New("robots: fetch returned no response")
