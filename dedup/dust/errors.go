package dust

import "errors"

var (
	// ErrCorrupt reports state given to UnmarshalBinary that this
	// package did not write: truncated, damaged or inconsistent (a rule
	// of an unknown kind, a parked URL under a rule that is not active).
	ErrCorrupt = errors.New("dust: corrupt state")
	// ErrOptions reports an Options field out of range.
	ErrOptions = errors.New("dust: invalid options")
)

// Error describes a failed operation: Op is the method ("New",
// "UnmarshalBinary"), Subject what it was applied to (a field, the
// part of the state being decoded), Err the cause, ErrCorrupt or
// ErrOptions.
type Error struct {
	Op      string
	Subject string
	Err     error
}

// Error formats the error as "dust: Op Subject: Err".
func (e *Error) Error() string {
	msg := e.Err.Error()
	if len(msg) > 6 && msg[:6] == "dust: " {
		msg = msg[6:]
	}
	if e.Subject == "" {
		return "dust: " + e.Op + ": " + msg
	}
	return "dust: " + e.Op + " " + e.Subject + ": " + msg
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }
