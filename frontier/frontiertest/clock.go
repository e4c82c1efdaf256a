package frontiertest

import (
	"sort"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// FakeClock is a frontier.Clock that only moves when told to: Advance and
// Set fire the timers whose deadline has come. Safe for concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFakeClock returns a FakeClock reading start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

var _ frontier.Clock = (*FakeClock)(nil)

type fakeTimer struct {
	c        chan time.Time
	deadline time.Time
	clock    *FakeClock
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer firing when the clock reaches Now()+d; at once
// if d ≤ 0.
func (c *FakeClock) NewTimer(d time.Duration) frontier.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: make(chan time.Time, 1), deadline: c.now.Add(d), clock: c}
	if d <= 0 {
		t.c <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t (never backwards) and fires due timers.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	keep := c.timers[:0]
	for _, x := range c.timers {
		if !x.deadline.After(c.now) {
			x.c <- c.now
		} else {
			keep = append(keep, x)
		}
	}
	clear(c.timers[len(keep):])
	c.timers = keep
}

// NextDeadline returns the earliest deadline of the pending timers.
func (c *FakeClock) NextDeadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].deadline.Before(c.timers[j].deadline) })
	return c.timers[0].deadline, true
}

// Timers returns the number of pending timers.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
