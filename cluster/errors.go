package cluster

import (
	"errors"
	"strings"
)

// Error is an error of a cluster operation: Op is what was attempted
// ("publish", "request", "decode urls", ...), Subject the node, subject or
// message it concerned.
type Error struct {
	Op      string
	Subject string
	Err     error
}

// Error implements error.
func (e *Error) Error() string {
	s := "cluster: " + e.Op
	if e.Subject != "" {
		s += " " + e.Subject
	}
	if e.Err != nil {
		s += ": " + strings.TrimPrefix(e.Err.Error(), "cluster: ")
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrClosed reports use of a closed Transport, Node or Splitter.
	ErrClosed = errors.New("cluster: closed")
	// ErrCorrupt reports a malformed wire message.
	ErrCorrupt = errors.New("cluster: corrupt message")
	// ErrNoResponder reports a request to a subject nobody serves.
	ErrNoResponder = errors.New("cluster: no responder")
	// ErrUnknownNode reports a node name that is not in the node list.
	ErrUnknownNode = errors.New("cluster: unknown node")
	// ErrUnavailable reports a request to a node whose circuit breaker
	// is open: it failed or did not answer in time lately.
	ErrUnavailable = errors.New("cluster: node unavailable")
	// ErrRemote reports an error the serving node returned for a request.
	ErrRemote = errors.New("cluster: remote error")
	// ErrNotStored reports URLs a Splitter could not have stored by their
	// owners: they stay buffered, and are published again later.
	ErrNotStored = errors.New("cluster: URLs not stored by their owners")
)
