package index

import (
	"errors"
	"strings"
)

var (
	// ErrCorrupt reports input that is not a valid index: bad magic, bad
	// checksum, truncated data or inconsistent contents.
	ErrCorrupt = errors.New("index: corrupt data")
	// ErrVersion reports an index file written by an unknown format version.
	ErrVersion = errors.New("index: unsupported format version")
	// ErrFull reports a shard that has used all 2^32−1 document ids; compact
	// it or add shards.
	ErrFull = errors.New("index: shard full")
	// ErrNoURL reports a document without a URL (the URL is its identity).
	ErrNoURL = errors.New("index: document without URL")
	// ErrClosed reports use of a closed Broker or Dir.
	ErrClosed = errors.New("index: closed")
	// ErrPosition reports a position token that Dir.Rewind cannot go back
	// to: malformed, from another directory, older than the previous
	// flush, or beyond the end of the log.
	ErrPosition = errors.New("index: invalid position")
	// ErrLocked reports a directory that another Dir, in this process or
	// another, has open.
	ErrLocked = errors.New("index: directory in use")
)

// Error is an index failure with the operation and its subject (a URL, a
// file section, a shard), wrapping the cause.
type Error struct {
	Op      string // "add", "read", "write", "search", "stats", "postings", "decode", "rewind", "merge"
	Subject string
	Err     error
}

// Error returns "index: op [subject]: cause", with the package prefix
// once: a cause that carries it too (ErrCorrupt does) loses its own.
func (e *Error) Error() string {
	s := "index: " + e.Op
	if e.Subject != "" {
		s += " " + e.Subject
	}
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "index: ")
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
