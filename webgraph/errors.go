package webgraph

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrFormat reports a malformed or unsupported file: a corrupt bit
	// stream, inconsistent properties or offsets.
	ErrFormat = errors.New("webgraph: malformed graph data")
	// ErrNodeRange reports a node id outside [0, NumNodes).
	ErrNodeRange = errors.New("webgraph: node id out of range")
	// ErrUnknownURL reports a URL that is not in the graph.
	ErrUnknownURL = errors.New("webgraph: unknown URL")
	// ErrInput reports invalid input to a writer or builder (unsorted or
	// repeated successors, a graph too large for the format).
	ErrInput = errors.New("webgraph: invalid input")
)

// Error records a failed operation: what was attempted, on what (a node, a
// file, a URL) and why. Errors unwrap to one of the sentinels above or to
// an I/O or bitio error.
type Error struct {
	Op      string // "successors", "open", "encode", ...
	Subject string // "node 42", a path, a URL
	Err     error
}

// Error formats the operation, the subject and the cause.
func (e *Error) Error() string {
	msg := strings.TrimPrefix(e.Err.Error(), "webgraph: ")
	if e.Subject == "" {
		return "webgraph: " + e.Op + ": " + msg
	}
	return "webgraph: " + e.Op + " " + e.Subject + ": " + msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func nodeErr(op string, x int, err error) error {
	return &Error{Op: op, Subject: fmt.Sprintf("node %d", x), Err: err}
}

// nodeErr is the package's nodeErr naming the graph's file, if it has
// one: a damaged record found long after Open still says where it is.
func (g *BVGraph) nodeErr(op string, x int, err error) error {
	if g.name == "" {
		return nodeErr(op, x, err)
	}
	return &Error{Op: op, Subject: fmt.Sprintf("%s node %d", g.name, x), Err: err}
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}
