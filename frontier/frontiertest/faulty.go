package frontiertest

import (
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// FaultyStore wraps a frontier.Store and makes its fallible operations
// (Push, Pop, Defer, Due, Scan) fail on demand: the fault-injecting Store
// for testing how a frontier behaves on a failing disk. Safe for
// concurrent use (the wrapped store is called as the frontier calls it).
type FaultyStore struct {
	frontier.Store

	mu    sync.Mutex
	left  int // successful operations left before failing; < 0: never fail
	err   error
	fails int
}

// NewFaultyStore wraps s; it does not fail until FailAfter is called.
func NewFaultyStore(s frontier.Store) *FaultyStore {
	return &FaultyStore{Store: s, left: -1}
}

// FailAfter lets n more operations succeed, then fails every one with
// err. A negative n heals the store.
func (f *FaultyStore) FailAfter(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left, f.err = n, err
}

// Failures returns how many operations failed.
func (f *FaultyStore) Failures() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fails
}

func (f *FaultyStore) fail() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.left < 0:
		return nil
	case f.left > 0:
		f.left--
		return nil
	}
	f.fails++
	return f.err
}

// Push implements frontier.Store.
func (f *FaultyStore) Push(q int, us ...frontier.URL) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.Push(q, us...)
}

// Pop implements frontier.Store.
func (f *FaultyStore) Pop(q int) (frontier.URL, bool, error) {
	if err := f.fail(); err != nil {
		return frontier.URL{}, false, err
	}
	return f.Store.Pop(q)
}

// Defer implements frontier.Store.
func (f *FaultyStore) Defer(us ...frontier.URL) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.Defer(us...)
}

// Due implements frontier.Store.
func (f *FaultyStore) Due(now time.Time, max int, dst []frontier.URL) ([]frontier.URL, error) {
	if err := f.fail(); err != nil {
		return dst, err
	}
	return f.Store.Due(now, max, dst)
}

// Scan implements frontier.Store.
func (f *FaultyStore) Scan(yield func(frontier.URL) bool) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.Scan(yield)
}
