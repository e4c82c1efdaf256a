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
// per answer up to the maximum, retransmissions served before first
// attempts, slots given up skipped.
func TestWindow(t *testing.T) {
	f := newFlow(time.Millisecond, time.Second, initialWindow+2)
	for i := range initialWindow {
		if s := f.take(false); s != nil {
			t.Fatalf("query %d waits with %d in flight", i, f.inflight)
		}
	}
	first := f.take(false)
	gone := f.take(true)
	retry := f.take(true)
	if first == nil || retry == nil || gone == nil {
		t.Fatal("a full window let a query through")
	}
	f.cancel(gone)
	f.release() // a query gave its place up: the retransmission goes first
	if !closed(retry.ready) || closed(first.ready) || closed(gone.ready) {
		t.Fatalf("after one release: retry %v, first %v, given up %v; want only the retry",
			closed(retry.ready), closed(first.ready), closed(gone.ready))
	}
	f.answered() // one more place
	if !closed(first.ready) || f.inflight != initialWindow+1 {
		t.Fatalf("after an answer: first attempt let through %v, %d in flight", closed(first.ready), f.inflight)
	}
	for range 10 {
		f.answered()
	}
	if f.cwnd != initialWindow+2 {
		t.Errorf("window %d, want capped at %d", f.cwnd, initialWindow+2)
	}
	f.cancel(retry) // granted: its place is freed
	if f.inflight != initialWindow {
		t.Errorf("%d in flight after a granted slot was given up, want %d", f.inflight, initialWindow)
	}
	if !f.retries.empty() || !f.firsts.empty() {
		t.Error("queues not empty")
	}
}
