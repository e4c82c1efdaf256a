package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Splitter is the host splitter of IIR Figure 20.2 and implements
// crawlkit.HostSplitter: Local says whether this node owns a host (by the
// Ring), Send buffers the URLs of other nodes' hosts per destination and
// publishes a destination's buffer to its inbox when it holds BatchSize
// URLs, when its oldest URL has waited BatchDelay, or when the traffic
// pauses: no Send for four times the mean gap between Sends (at least
// 2 ms, at most BatchDelay). The last rule is Nagle's: while links keep
// coming, batches fill (up to BatchDelay's worth of them); when they stop
// (the crawl's tail, a slow phase), what is buffered goes out within a
// few gaps instead of waiting for the delay. A publish that fails is kept
// and retried, so Send loses no URL; it returns an error only after
// Close. Idle reports cluster-wide quiescence as the Node's status loop
// last computed it. Safe for concurrent use.
type Splitter struct {
	ring  *Ring
	self  string
	t     Transport
	size  int
	delay time.Duration
	log   *slog.Logger
	// local and gate, set by a Node with membership, decide from the
	// shards it owns instead of the Ring.
	local func(host string) bool
	gate  func(url string) (func(), bool)

	mu       sync.Mutex
	bufs     map[string][]frontier.URL
	since    map[string]time.Time // when each buffer's oldest URL came
	buffered int                  // URLs in bufs and in publishes not yet stored
	lastSend time.Time
	meanGap  time.Duration // moving mean of the gaps between Sends
	retryAt  time.Time     // no flush by the timer before this, after a failed publish
	timer    *time.Timer
	closed   bool
	flushing sync.WaitGroup
	// pubs are the publishes under way, each registered (under mu) when
	// its batch leaves bufs, so that Flush can wait for those a Send or
	// the timer started before it.
	pubs    map[uint64]*pub
	nextPub uint64

	idle     atomic.Bool
	hold     atomic.Bool // tests: publish nothing, as a node about to die
	messages atomic.Uint64
	urls     atomic.Uint64
	bytes    atomic.Uint64
}

func newSplitter(ring *Ring, self string, t Transport, size int, delay time.Duration, log *slog.Logger) *Splitter {
	return &Splitter{ring: ring, self: self, t: t, size: size, delay: delay, log: log,
		bufs: map[string][]frontier.URL{}, since: map[string]time.Time{}, pubs: map[uint64]*pub{}}
}

// pub is one publish under way: done is closed when it ends, and failed
// then tells whether its URLs went back to the buffer.
type pub struct {
	done   chan struct{}
	failed bool
}

// startLocked registers a publish of a batch that left bufs.
func (s *Splitter) startLocked() uint64 {
	s.nextPub++
	s.pubs[s.nextPub] = &pub{done: make(chan struct{})}
	return s.nextPub
}

// Local implements crawlkit.HostSplitter. Cost: one hash of host (and,
// with membership, a lock).
func (s *Splitter) Local(host string) bool {
	if s.local != nil {
		return s.local(host)
	}
	return s.ring.HostOwner(host) == s.self
}

// Enter implements crawlkit.HostGate: with membership, a node contacts
// only the hosts of the shards it owns, and a shard it gives up waits
// for the leave of every lease that entered. Without, every host of the
// Ring's is always open.
func (s *Splitter) Enter(url string) (leave func(), ok bool) {
	if s.gate != nil {
		return s.gate(url)
	}
	return func() {}, true
}

// Send implements crawlkit.HostSplitter. When a destination's buffer is
// full the calling goroutine publishes it (a JetStream round trip), which
// slows a crawler that produces faster than the transport carries.
func (s *Splitter) Send(ctx context.Context, urls []frontier.URL) error {
	type batch struct {
		node string
		urls []frontier.URL
		id   uint64
	}
	var full []batch
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return &Error{Op: "send", Subject: s.self, Err: ErrClosed}
	}
	now := time.Now()
	if !s.lastSend.IsZero() {
		// A gap longer than BatchDelay counts as BatchDelay: one long
		// pause should not keep the idle rule slow for long after.
		gap := min(now.Sub(s.lastSend), s.delay)
		s.meanGap += (gap - s.meanGap) / 8
	}
	s.lastSend = now
	for _, u := range urls {
		owner := s.ring.HostOwner(frontier.HostKey(u.URL))
		if len(s.bufs[owner]) == 0 {
			s.since[owner] = now
		}
		s.bufs[owner] = append(s.bufs[owner], u)
		s.buffered++
		if len(s.bufs[owner]) >= s.size {
			full = append(full, batch{owner, s.bufs[owner], s.startLocked()})
			delete(s.bufs, owner)
			delete(s.since, owner)
		}
	}
	s.armLocked()
	if len(full) > 0 {
		s.flushing.Add(1)
	}
	s.mu.Unlock()
	if len(full) > 0 {
		defer s.flushing.Done()
		for _, b := range full {
			s.publish(ctx, b.node, b.urls, b.id)
		}
	}
	return nil
}

// idleLocked is how long without a Send counts as a pause in the
// traffic: four mean gaps, within [2 ms, BatchDelay].
func (s *Splitter) idleLocked() time.Duration {
	return min(max(4*s.meanGap, 2*time.Millisecond), s.delay)
}

// nextLocked returns when the next buffer is due: at the pause after the
// last Send, or BatchDelay after the oldest buffered URL.
func (s *Splitter) nextLocked() time.Time {
	next := s.lastSend.Add(s.idleLocked())
	for _, t := range s.since {
		if d := t.Add(s.delay); d.Before(next) {
			next = d
		}
	}
	if next.Before(s.retryAt) {
		next = s.retryAt
	}
	return next
}

// armLocked starts the flush timer if URLs wait and it is not running.
func (s *Splitter) armLocked() {
	if s.timer != nil || len(s.bufs) == 0 || s.closed {
		return
	}
	s.flushing.Add(1)
	s.timer = time.AfterFunc(time.Until(s.nextLocked()), s.tick)
}

// tick publishes the buffers that are due (all of them after a pause in
// the traffic) and arms the timer for the others.
func (s *Splitter) tick() {
	defer s.flushing.Done()
	now := time.Now()
	s.mu.Lock()
	s.timer = nil
	due := map[string][]frontier.URL{}
	ids := map[string]uint64{}
	paused := !now.Before(s.lastSend.Add(s.idleLocked()))
	for node, b := range s.bufs {
		if now.Before(s.retryAt) {
			break
		}
		if paused || !now.Before(s.since[node].Add(s.delay)) {
			due[node], ids[node] = b, s.startLocked()
			delete(s.bufs, node)
			delete(s.since, node)
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for node, b := range due {
		s.publish(ctx, node, b, ids[node])
	}
	s.mu.Lock()
	s.armLocked()
	s.mu.Unlock()
}

// publish sends one batch, registered as publish id; on failure the URLs
// go back to the buffer for the next flush.
func (s *Splitter) publish(ctx context.Context, node string, batch []frontier.URL, id uint64) {
	data := AppendURLs(nil, batch)
	var err error
	if s.hold.Load() {
		err = errHolding
	} else {
		err = s.t.Publish(ctx, node, data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pubs[id]; p != nil {
		p.failed = err != nil
		close(p.done)
		delete(s.pubs, id)
	}
	if err != nil {
		s.log.Warn("cluster: publish failed, retrying", "node", node, "urls", len(batch), "err", err)
		if len(s.bufs[node]) == 0 {
			s.since[node] = time.Now()
		}
		s.bufs[node] = append(s.bufs[node], batch...)
		s.retryAt = time.Now().Add(s.delay)
		s.armLocked()
		return
	}
	s.buffered -= len(batch)
	s.messages.Add(1)
	s.urls.Add(uint64(len(batch)))
	s.bytes.Add(uint64(len(data)))
}

// errHolding is the publish error of a Splitter told to hold its batches
// (tests of what a node that dies with URLs buffered loses).
var errHolding = errors.New("cluster: splitter holding its batches")

// Flush publishes every buffered URL now and waits for the publishes a
// Send or the flush timer started before it: when it returns nil, every
// URL Send accepted before the call is stored by its owner. A failed
// publish leaves its URLs buffered (and the flush timer armed), and Flush
// then returns an error wrapping ErrNotStored; so does the end of ctx.
func (s *Splitter) Flush(ctx context.Context) error {
	s.mu.Lock()
	bufs := s.bufs
	s.bufs = map[string][]frontier.URL{}
	clear(s.since)
	var wait []*pub
	for _, p := range s.pubs {
		wait = append(wait, p)
	}
	ids := make(map[string]uint64, len(bufs))
	for node := range bufs {
		ids[node] = s.startLocked()
		wait = append(wait, s.pubs[ids[node]])
	}
	s.mu.Unlock()
	for node, batch := range bufs {
		s.publish(ctx, node, batch, ids[node])
	}
	failed := 0
	for _, p := range wait {
		select {
		case <-p.done:
		case <-ctx.Done():
			return &Error{Op: "flush", Subject: s.self, Err: fmt.Errorf("%w: %w", ErrNotStored, ctx.Err())}
		}
		if p.failed {
			failed++
		}
	}
	if failed > 0 {
		return &Error{Op: "flush", Subject: s.self, Err: fmt.Errorf("%w: %d of %d publishes failed", ErrNotStored, failed, len(wait))}
	}
	return nil
}

// flushStored is Flush, tried again every BatchDelay until it succeeds,
// for at most within: the commits that wait on it report done only once
// their URLs are stored by their owners.
func (s *Splitter) flushStored(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		err := s.Flush(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return err
		}
	}
}

// Buffered returns the number of URLs accepted by Send and not yet stored
// by the transport.
func (s *Splitter) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buffered
}

// Idle reports whether the whole cluster was quiet over the last two
// status rounds (see Node); crawlkit.Crawler.Run asks it before ending on
// an empty frontier.
func (s *Splitter) Idle() bool { return s.idle.Load() }

// SplitterStats counts what a Splitter published.
type SplitterStats struct {
	Messages, URLs, Bytes uint64
}

// Stats returns the counts of published messages, URLs and bytes.
func (s *Splitter) Stats() SplitterStats {
	return SplitterStats{Messages: s.messages.Load(), URLs: s.urls.Load(), Bytes: s.bytes.Load()}
}

// close flushes what is buffered (bounded by ctx) and refuses further
// Sends; URLs that could not be published are reported as lost.
func (s *Splitter) close(ctx context.Context) int {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0
	}
	s.mu.Unlock()
	_ = s.Flush(ctx) // what stays buffered is counted below
	s.mu.Lock()
	s.closed = true
	if s.timer != nil && s.timer.Stop() {
		s.flushing.Done()
		s.timer = nil
	}
	lost := 0
	for _, b := range s.bufs {
		lost += len(b)
	}
	s.mu.Unlock()
	s.flushing.Wait()
	return lost
}
