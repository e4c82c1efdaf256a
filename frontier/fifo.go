package frontier

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// FIFO is the baseline frontier: one first-in first-out queue with
// per-key politeness. Next hands out the head URL once its key is free
// and its gap has passed; until then every worker waits behind it. It is
// polite (one lease per key, gaps honoured) but, as IIR §20.2.3 warns,
// links are local: a page's links mostly point to its own host, so the
// queue holds runs of one host and the crawl stalls on each run's gaps.
// The benchmarks compare it with Mercator. It ignores the Options fields
// marked "Mercator only".
//
// Costs: Add, Next, Done O(1) (revisits O(log n)); memory as Mercator's
// store plus one map entry per key contacted within the last gap. Safe
// for concurrent use.
type FIFO struct {
	mu      sync.Mutex
	o       Options
	store   Store
	clock   Clock
	head    URL
	hasHead bool
	hosts   map[string]*fifoHost
	sweepAt int
	waitq   waitq
	closed  bool
	queued  int
	leased  int
	stats   Stats
	one     [1]URL
	dueBuf  []URL
}

type fifoHost struct {
	te    int64
	lease *Lease
}

var (
	_ Frontier     = (*FIFO)(nil)
	_ Checkpointer = (*FIFO)(nil)
	_ Poller       = (*FIFO)(nil)
	_ Stater       = (*FIFO)(nil)
	_ Syncer       = (*FIFO)(nil)
	_ Holder       = (*FIFO)(nil)
	_ io.Closer    = (*FIFO)(nil)
)

// Hold implements Holder: key is not contacted before until. O(1).
func (f *FIFO) Hold(key string, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	h := f.hosts[key]
	if h == nil {
		h = &fifoHost{}
		f.hosts[key] = h
	}
	h.te = max(h.te, until.UnixNano())
}

// NewFIFO returns a FIFO frontier. URLs found in every queue of a
// reopened Store are taken over. opts may be nil: every field takes its
// default. The options are copied, so the caller may change or reuse them
// afterwards.
func NewFIFO(opts *Options) (*FIFO, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.ensureDefaults()
	f := &FIFO{o: o, store: o.Store, clock: o.Clock, hosts: make(map[string]*fifoHost), sweepAt: 1024}
	for q := 0; q < f.store.Queues(); q++ {
		n := f.store.Len(q)
		f.queued += n
		if q == 0 {
			continue
		}
		for range n {
			u, ok, err := f.store.Pop(q)
			if err != nil {
				return nil, &Error{Op: "open", Err: err}
			}
			if !ok {
				break
			}
			f.one[0] = u
			if err := f.store.Push(0, f.one[:]...); err != nil {
				return nil, &Error{Op: "open", Err: err}
			}
		}
	}
	f.one[0] = URL{}
	return f, nil
}

// Add implements Frontier.
func (f *FIFO) Add(ctx context.Context, urls ...URL) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	now := f.clock.Now()
	for i := range urls {
		u := urls[i]
		if u.URL == "" {
			return &Error{Op: "add", Err: errEmptyURL}
		}
		if u.Key == "" {
			u.Key = HostKey(u.URL)
		}
		f.stats.Added++
		f.one[0] = u
		var err error
		if u.Due.After(now) {
			err = f.store.Defer(f.one[:]...)
		} else {
			err = f.store.Push(0, f.one[:]...)
			f.queued++
		}
		if err != nil {
			return &Error{Op: "add", URL: u.URL, Err: err}
		}
	}
	f.one[0] = URL{}
	f.broadcast()
	return nil
}

// Next implements Frontier.
func (f *FIFO) Next(ctx context.Context) (*Lease, error) {
	return next(ctx, f.clock, &f.mu, &f.waitq, f.poll)
}

// Poll implements Poller.
func (f *FIFO) Poll() (*Lease, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.poll()
}

func (f *FIFO) poll() (*Lease, time.Time, error) {
	if f.closed {
		return nil, time.Time{}, ErrClosed
	}
	now := f.clock.Now()
	var due time.Time
	for f.store.Deferred() > 0 {
		d, _ := f.store.NextDue()
		if d.After(now) {
			due = d
			break
		}
		var err error
		if f.dueBuf, err = f.store.Due(now, 256, f.dueBuf[:0]); err != nil {
			return nil, time.Time{}, &Error{Op: "next", Err: err}
		}
		if err := f.store.Push(0, f.dueBuf...); err != nil {
			return nil, time.Time{}, &Error{Op: "next", Err: err}
		}
		f.queued += len(f.dueBuf)
		clear(f.dueBuf)
	}
	if !f.hasHead {
		u, ok, err := f.store.Pop(0)
		if err != nil {
			return nil, time.Time{}, &Error{Op: "next", Err: err}
		}
		if !ok {
			return nil, due, nil
		}
		f.head, f.hasHead = u, true
	}
	h := f.hosts[f.head.Key]
	if h != nil && h.lease != nil {
		return nil, due, nil // woken by Done
	}
	if h != nil && h.te > now.UnixNano() {
		ready := time.Unix(0, h.te)
		if !due.IsZero() && due.Before(ready) {
			ready = due
		}
		return nil, ready, nil
	}
	if h == nil {
		h = &fifoHost{}
		f.hosts[f.head.Key] = h
	}
	l := &Lease{URL: f.head, Time: now, q: -1, owner: f}
	h.lease = l
	f.head, f.hasHead = URL{}, false
	f.queued--
	f.leased++
	f.stats.Leases++
	return l, time.Time{}, nil
}

// Done implements Frontier.
func (f *FIFO) Done(l *Lease, r Result) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	if l == nil || l.owner != f {
		return ErrUnknownLease
	}
	h := f.hosts[l.URL.Key]
	if h == nil || h.lease != l {
		return ErrUnknownLease
	}
	h.lease = nil
	l.owner = nil
	f.leased--
	if r.Err != nil {
		f.stats.Errors++
	}
	now := f.clock.Now()
	// The later of the gap and a time the key was held to (Hold during
	// the lease) wins.
	if !r.Skipped {
		h.te = max(h.te, r.since(now).Add(f.o.Gap(r)).UnixNano())
	}
	var derr error
	if r.Requeue && !f.hasHead {
		// Back to the head of the queue, as if never taken.
		f.head, f.hasHead = l.URL, true
		f.queued++
	} else if r.Requeue {
		f.one[0] = l.URL
		if err := f.store.Push(0, f.one[:]...); err != nil {
			derr = &Error{Op: "done", URL: l.URL.URL, Err: err}
		} else {
			f.queued++
		}
		f.one[0] = URL{}
	} else if !r.Revisit.IsZero() {
		f.one[0] = Revisit(l.URL, r, now)
		if err := f.store.Defer(f.one[:]...); err != nil {
			derr = &Error{Op: "done", URL: l.URL.URL, Err: err}
		}
		f.one[0] = URL{}
	}
	if len(f.hosts) >= f.sweepAt {
		n := now.UnixNano()
		for k, h := range f.hosts {
			if h.lease == nil && h.te <= n {
				delete(f.hosts, k)
			}
		}
		f.sweepAt = max(1024, 2*len(f.hosts))
	}
	f.broadcast()
	return derr
}

// broadcast tells the waiting Next calls that something changed: the
// leader looks again (FIFO keeps no ready time to compare with).
func (f *FIFO) broadcast() {
	if f.closed {
		f.waitq.all()
		return
	}
	f.waitq.sooner()
}

// Stats implements Stater. O(1).
func (f *FIFO) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.Queued = f.queued
	s.Leased = f.leased
	s.Waiting = f.store.Deferred()
	s.Keys = len(f.hosts)
	return s
}

// Checkpoint implements Checkpointer; see Mercator.Checkpoint.
func (f *FIFO) Checkpoint(w io.Writer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	return writeCheckpoint(w, f.store, f.held())
}

// held returns the URLs out of the store: the head, then the leased ones.
func (f *FIFO) held() []URL {
	var held []URL
	if f.hasHead {
		held = append(held, f.head)
	}
	for _, h := range f.hosts {
		if h.lease != nil {
			held = append(held, h.lease.URL)
		}
	}
	return held
}

// Close stops the frontier; blocked and later calls return ErrClosed.
// The held head and the leased URLs go back to the Store, which is closed.
func (f *FIFO) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.closed = true
	f.broadcast()
	var err error
	if f.hasHead {
		f.one[0] = f.head
		err = f.store.Push(0, f.one[:]...)
	}
	for _, h := range f.hosts {
		if h.lease != nil {
			f.one[0] = h.lease.URL
			h.lease = nil
			err = errors.Join(err, f.store.Push(0, f.one[:]...))
		}
	}
	f.one[0] = URL{}
	return errors.Join(err, f.store.Close())
}

// Sync implements Syncer; see Mercator.Sync. The head URL held in memory
// counts as leased.
func (f *FIFO) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	return syncStore(f.store, f.held)
}
