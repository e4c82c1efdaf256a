package cluster

import (
	"context"
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
// URLs or BatchDelay after its first URL. A publish that fails is kept
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
	buffered int // URLs in bufs and in publishes not yet stored
	timer    *time.Timer
	closed   bool
	flushing sync.WaitGroup

	idle     atomic.Bool
	messages atomic.Uint64
	urls     atomic.Uint64
	bytes    atomic.Uint64
}

func newSplitter(ring *Ring, self string, t Transport, size int, delay time.Duration, log *slog.Logger) *Splitter {
	return &Splitter{ring: ring, self: self, t: t, size: size, delay: delay, log: log, bufs: map[string][]frontier.URL{}}
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
	}
	var full []batch
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return &Error{Op: "send", Subject: s.self, Err: ErrClosed}
	}
	for _, u := range urls {
		owner := s.ring.HostOwner(frontier.HostKey(u.URL))
		s.bufs[owner] = append(s.bufs[owner], u)
		s.buffered++
		if len(s.bufs[owner]) >= s.size {
			full = append(full, batch{owner, s.bufs[owner]})
			delete(s.bufs, owner)
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
			s.publish(ctx, b.node, b.urls)
		}
	}
	return nil
}

// armLocked starts the flush timer if URLs wait and it is not running.
func (s *Splitter) armLocked() {
	if s.timer == nil && len(s.bufs) > 0 && !s.closed {
		s.flushing.Add(1)
		s.timer = time.AfterFunc(s.delay, func() {
			defer s.flushing.Done()
			s.mu.Lock()
			s.timer = nil
			s.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s.Flush(ctx)
		})
	}
}

// publish sends one batch; on failure the URLs go back to the buffer for
// the next flush.
func (s *Splitter) publish(ctx context.Context, node string, batch []frontier.URL) {
	data := AppendURLs(nil, batch)
	err := s.t.Publish(ctx, node, data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.log.Warn("cluster: publish failed, retrying", "node", node, "urls", len(batch), "err", err)
		s.bufs[node] = append(s.bufs[node], batch...)
		s.armLocked()
		return
	}
	s.buffered -= len(batch)
	s.messages.Add(1)
	s.urls.Add(uint64(len(batch)))
	s.bytes.Add(uint64(len(data)))
}

// Flush publishes every buffered URL now. A failed publish leaves its
// URLs buffered (and the flush timer armed).
func (s *Splitter) Flush(ctx context.Context) {
	s.mu.Lock()
	bufs := s.bufs
	s.bufs = map[string][]frontier.URL{}
	s.mu.Unlock()
	for node, batch := range bufs {
		s.publish(ctx, node, batch)
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
	s.Flush(ctx)
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
