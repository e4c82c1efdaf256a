package frontier

import (
	"context"
	"sync"
	"time"
)

// waitq parks the goroutines blocked in Next. One of them, the leader,
// sleeps until the earliest time a key may be contacted; the others sleep
// until woken. Handing out a lease wakes one more waiter, and a change
// that makes something ready sooner wakes the leader, so k keys becoming
// ready wake about k goroutines instead of every worker: with hundreds of
// workers, a broadcast on every Add and Done (or a timer per waiter, all
// firing together) costs more CPU than the crawl. All methods are called
// with the frontier's mutex held.
type waitq struct {
	leader *waiter
	queue  []*waiter // FIFO of the other parked goroutines
}

type waiter struct {
	ch chan struct{} // buffered: a wake-up sent before the select is kept
}

// park adds w and reports whether it is the leader, the one that sleeps
// towards the ready time.
func (q *waitq) park(w *waiter) bool {
	if q.leader == nil {
		q.leader = w
		return true
	}
	q.queue = append(q.queue, w)
	return false
}

// unpark removes w after it woke up, for whatever reason.
func (q *waitq) unpark(w *waiter) {
	if q.leader == w {
		q.leader = nil
		return
	}
	for i, x := range q.queue {
		if x == w {
			q.queue = append(q.queue[:i], q.queue[i+1:]...)
			return
		}
	}
}

// waiting reports whether any goroutine is parked.
func (q *waitq) waiting() bool { return q.leader != nil || len(q.queue) > 0 }

// sooner wakes the leader (so it looks again and re-arms its timer for an
// earlier time), or, without a leader, the first waiter, which becomes it.
func (q *waitq) sooner() {
	if q.leader != nil {
		wake(q.leader)
		return
	}
	q.handOn()
}

// handOn wakes the first non-leader waiter: after a lease, another key may
// be ready too, and without a leader someone must watch the clock.
func (q *waitq) handOn() {
	if len(q.queue) == 0 {
		if q.leader == nil {
			return
		}
		wake(q.leader)
		return
	}
	w := q.queue[0]
	q.queue = q.queue[1:]
	wake(w)
}

// all wakes every parked goroutine (Close).
func (q *waitq) all() {
	if q.leader != nil {
		wake(q.leader)
	}
	for _, w := range q.queue {
		wake(w)
	}
	q.queue = q.queue[:0]
}

func wake(w *waiter) {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

var waiterPool = sync.Pool{New: func() any { return &waiter{ch: make(chan struct{}, 1)} }}

// next is the blocking loop shared by the frontiers: poll under mu; when
// nothing is ready, park until woken, until the ready time (the leader
// only), or until ctx is done.
func next(ctx context.Context, clock Clock, mu *sync.Mutex, q *waitq, poll func() (*Lease, time.Time, error)) (*Lease, error) {
	w := waiterPool.Get().(*waiter)
	defer func() {
		select { // drain a wake-up that raced with the return
		case <-w.ch:
		default:
		}
		waiterPool.Put(w)
	}()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mu.Lock()
		l, ready, err := poll()
		if l != nil || err != nil {
			if l != nil {
				q.handOn()
			}
			mu.Unlock()
			return l, err
		}
		leader := q.park(w)
		now := clock.Now()
		mu.Unlock()
		var t Timer
		var tc <-chan time.Time
		if leader && !ready.IsZero() {
			t = clock.NewTimer(ready.Sub(now))
			tc = t.C()
		}
		var cancelled bool
		select {
		case <-ctx.Done():
			cancelled = true
		case <-w.ch:
		case <-tc:
		}
		if t != nil {
			t.Stop()
		}
		mu.Lock()
		q.unpark(w)
		if cancelled && leader {
			// Someone else must watch the clock now.
			q.handOn()
		}
		mu.Unlock()
	}
}
