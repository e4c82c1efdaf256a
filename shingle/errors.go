package shingle

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrInvalidOptions is wrapped by errors about out-of-range options.
	ErrInvalidOptions = errors.New("shingle: invalid options")
	// ErrMismatch is wrapped by errors about signatures of different
	// lengths, or lengths that do not fit an index.
	ErrMismatch = errors.New("shingle: signature length mismatch")
	// ErrCorrupt is wrapped by errors about malformed serialised data.
	ErrCorrupt = errors.New("shingle: corrupt data")
	// ErrDuplicateID is returned by inserts of an ID already present.
	ErrDuplicateID = errors.New("shingle: duplicate id")
)

// Error describes a failed operation: Op is the operation
// ("NewSketcher", "UnmarshalBinary", ...), Subject what it was applied to,
// Err the cause (one of the sentinels above, usually).
type Error struct {
	Op      string
	Subject string
	Err     error
}

// Error formats the error as "shingle: Op Subject: Err".
func (e *Error) Error() string {
	msg := strings.TrimPrefix(e.Err.Error(), "shingle: ")
	if e.Subject == "" {
		return "shingle: " + e.Op + ": " + msg
	}
	return "shingle: " + e.Op + " " + e.Subject + ": " + msg
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

func errorf(op string, sentinel error, format string, args ...any) error {
	return &Error{Op: op, Subject: fmt.Sprintf(format, args...), Err: sentinel}
}
