package dns

import (
	"testing"
	"time"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestRTO checks the retransmission timeout (RFC 6298): Timeout until the
// first answer, then SRTT + 4·RTTVAR clamped to [MinTimeout, Timeout];
// waiters are told when it falls to half of what they may have started
// with, not when it rises.
func TestRTO(t *testing.T) {
	f := newFlow(100*time.Millisecond, time.Second, 256)
	if f.rto != time.Second {
		t.Fatalf("initial RTO %v, want Timeout (1s)", f.rto)
	}
	drop := f.drop
	f.sample(time.Millisecond) // SRTT 1ms, RTTVAR 0.5ms: 3ms, clamped
	if f.rto != 100*time.Millisecond || !closed(drop) {
		t.Fatalf("after a 1ms answer: RTO %v (want 100ms), waiters told: %v", f.rto, closed(drop))
	}
	drop = f.drop
	for range 20 {
		f.sample(400 * time.Millisecond)
	}
	if f.rto < 400*time.Millisecond || f.rto > time.Second || closed(drop) {
		t.Fatalf("after slow answers: RTO %v, want in [400ms, 1s]; waiters told: %v", f.rto, closed(drop))
	}
	for range 5 {
		f.sample(5 * time.Second)
	}
	if f.rto != time.Second {
		t.Fatalf("RTO %v, want capped at Timeout", f.rto)
	}
	for range 50 {
		f.sample(2 * time.Millisecond)
	}
	if f.rto != 100*time.Millisecond || !closed(drop) {
		t.Fatalf("fast again: RTO %v (want 100ms), waiters told: %v", f.rto, closed(drop))
	}
	if g := newFlow(time.Second, 200*time.Millisecond, 1); g.minRTO != 200*time.Millisecond {
		t.Errorf("MinTimeout above Timeout: floor %v, want Timeout", g.minRTO)
	}
}

// TestWindow checks the window: initialWindow places at first, one more
// per answer up to the maximum.
func TestWindow(t *testing.T) {
	const maxWnd = initialWindow + 2
	f := newFlow(time.Millisecond, time.Second, maxWnd)
	take := func() bool {
		select {
		case f.sem <- struct{}{}:
			return true
		default:
			return false
		}
	}
	for i := range initialWindow {
		if !take() {
			t.Fatalf("query %d waits with %d places taken", i, i)
		}
	}
	if take() {
		t.Fatal("a full window let a query through")
	}
	<-f.sem // a query gave its place up
	if !take() || take() {
		t.Fatal("a freed place was not taken exactly once")
	}
	f.answered() // one more place
	if !take() || take() {
		t.Fatal("an answer did not open exactly one place")
	}
	for range 10 {
		f.answered()
	}
	if !take() || take() || f.reserved != 0 || len(f.sem) != maxWnd {
		t.Errorf("window not capped at %d: %d places, %d reserved", maxWnd, len(f.sem), f.reserved)
	}
}
