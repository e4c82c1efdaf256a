package dedup

import (
	"errors"
	"strings"
)

var (
	// ErrClosed is returned by operations on a closed set.
	ErrClosed = errors.New("dedup: closed")
)

// Error describes a failed operation: Op is the method ("TestAndAdd",
// "Seen", "Forget", ...), Subject what it was applied to (a URL, a
// fingerprint in hex), Err the cause.
type Error struct {
	Op      string
	Subject string
	Err     error
}

// Error formats the error as "dedup: Op Subject: Err".
func (e *Error) Error() string {
	msg := strings.TrimPrefix(e.Err.Error(), "dedup: ")
	if e.Subject == "" {
		return "dedup: " + e.Op + ": " + msg
	}
	return "dedup: " + e.Op + " " + e.Subject + ": " + msg
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }
