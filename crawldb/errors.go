package crawldb

import (
	"path/filepath"
	"strings"
)

// Error is the error type of the state's operations: Op names the
// operation ("open", "replay", "load", "lookup", "commit", "sync",
// "queue"), Path the file or directory at fault, Subject the record in
// it when there is one ("offset 347", "key ..."). Callers test the cause
// with errors.Is (ErrCorrupt, ErrVersion) and get the fields with
// errors.As.
type Error struct {
	Op      string
	Path    string
	Subject string
	Err     error
}

// Error returns "crawldb: op path [subject]: cause", with the package
// prefix once: a cause that carries it too (ErrCorrupt does) loses its
// own.
func (e *Error) Error() string {
	s := "crawldb: " + e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	if e.Subject != "" {
		s += " " + e.Subject
	}
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "crawldb: ")
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// fail wraps err, met by op on the Pebble database, with its directory;
// nil stays nil.
func (d *DB) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Path: filepath.Join(d.dir, "db"), Err: err}
}
