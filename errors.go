package crawlkit

import "strings"

// Error is a failure of the crawl with what it was doing when it failed:
// Op says it ("loading the state", "committing to the state", "rewinding
// sink 1 (*crawlkit.LinkLogFile)"), Err is the cause, which errors.Is and
// errors.As reach through Unwrap (ErrSinkBehind, crawldb.ErrCorrupt, an
// *os.PathError...).
type Error struct {
	Op  string
	Err error
}

// Error returns "crawlkit: op: cause", with the package prefix once: a
// cause that carries it too (ErrSinkBehind does) loses its own.
func (e *Error) Error() string {
	return "crawlkit: " + e.Op + ": " + strings.TrimPrefix(e.Err.Error(), "crawlkit: ")
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
