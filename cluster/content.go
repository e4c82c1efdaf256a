package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
)

// Content is a "content seen?" test partitioned by fingerprint (IIR
// §20.2.4): the exact fingerprint (dedup.TextFingerprint) of a document
// decides the node that keeps it, and lookups for other nodes are batched
// (LookupBatch fingerprints or LookupDelay, whichever first) into one
// request whose answer is a bitmap of the seen ones plus their first
// URLs. It implements dedup.ContentSeen for crawlkit.Config.ContentSeen,
// and dedup.Durable for the node's partition, which a node with
// Options.ContentLog keeps in that file.
//
// No lookup waits on an absent owner. Each owner has a circuit breaker: a
// batch that fails (no responder: the owner's connection is gone) or is
// not answered within LookupTimeout opens the owner's circuit, and from
// then on lookups of its fingerprints answer at once from a hold table
// on this node: a fingerprint held already is a duplicate of the held
// URL, any other is new and is held. A background reconciler probes the
// owner (first after 100 ms, then backing off to 2 s) by sending it the
// held fingerprints; the first answer closes the circuit, and each
// fingerprint the owner answers for leaves the table, the owner now
// knowing it. A document fetched on this node while its owner was absent
// is therefore a duplicate of one fetched elsewhere in that time only if
// both were new to their nodes: such pairs are not recognised (both are
// kept; Stats counts them as MissedDuplicates when reconciliation finds
// them). Fingerprints are grouped by their owner when they are sent, so a
// partition that moved to another node while held is reconciled with its
// new owner.
//
// Only exact duplicates are found: MinHash near-duplicates cannot be
// partitioned by value. A fingerprint owned by this node costs a map
// lookup; another node's costs up to LookupDelay plus a round trip,
// shared by the batch, or a map lookup while its circuit is open; a
// worker waits at most LookupDelay + LookupTimeout, and lends its place
// to another crawler worker meanwhile. Safe for concurrent use.
type Content struct {
	ring    *Ring
	self    string
	t       Transport
	size    int
	delay   time.Duration
	timeout time.Duration
	holdMax int
	log     *slog.Logger

	store fpStore

	mu       sync.Mutex
	batches  map[string]*lookup
	circuits map[string]*circuit // owners whose circuit is open
	held     map[uint64]string   // fingerprint → first URL here, while unreconciled
	wake     chan struct{}       // starts the reconciler's round early
	stop     chan struct{}
	closed   bool
	wg       sync.WaitGroup // batches being sent
	recon    sync.WaitGroup // the reconciler

	batchesSent, remote, failedOpen, reconciled, missed, dropped atomic.Uint64
}

var _ dedup.Durable = (*Content)(nil)

// circuit is an open circuit breaker of one owner.
type circuit struct {
	since   time.Time
	next    time.Time // next probe
	backoff time.Duration
}

// Probe schedule of an open circuit.
const (
	probeFirst = 100 * time.Millisecond
	probeMax   = 2 * time.Second
	// reconcileBatch bounds the fingerprints of one reconciling request.
	reconcileBatch = 1024
)

// fpStore is a node's partition: fingerprint → first URL.
type fpStore struct {
	dedup.ExactContent
	// onNew, if set, is told of every fingerprint recorded for the first
	// time (a member journals it with its shard). Set before use.
	onNew func(fp uint64, url string)
}

// testAndAdd records fp at url unless present; it returns the URL fp was
// first seen at (url itself for a retried lookup of the same document).
func (s *fpStore) testAndAdd(fp uint64, url string) (string, bool, error) {
	first, known, err := s.Record(fp, url)
	if known && first != url {
		return first, true, nil
	}
	if !known && s.onNew != nil {
		s.onNew(fp, url)
	}
	return "", false, err
}

// adopt records the fingerprints of a partition this node takes over
// (journaled already: onNew is not told).
func (c *Content) adopt(fps map[uint64]string) error {
	for fp, u := range fps {
		if _, _, err := c.store.Record(fp, u); err != nil {
			return err
		}
	}
	return nil
}

// lookup is one batch of lookups for one owner.
type lookup struct {
	items []seenItem
	done  chan struct{}
	seen  []bool
	urls  []string
	err   error
	timer *time.Timer
}

func newContent(ring *Ring, self string, t Transport, size int, delay, timeout time.Duration, holdMax int, log *slog.Logger) *Content {
	return &Content{ring: ring, self: self, t: t, size: size, delay: delay, timeout: timeout, holdMax: holdMax, log: log,
		batches: map[string]*lookup{}, circuits: map[string]*circuit{}, held: map[uint64]string{},
		wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

// ContentStats counts what a Content did with the lookups of fingerprints
// other nodes own.
type ContentStats struct {
	// Remote is the number of such lookups, Batches the requests that
	// carried them.
	Remote, Batches uint64
	// FailedOpen is the number answered from the hold table because the
	// owner's circuit was open or its batch failed.
	FailedOpen uint64
	// Held is the number of fingerprints in the hold table now, waiting
	// for their owner; Dropped those not held because the table was
	// full (Options.LookupHold).
	Held, Dropped uint64
	// Reconciled is the number of held fingerprints sent to their owner
	// after all; MissedDuplicates those of them the owner already had
	// from another URL: duplicates answered as new while it was absent.
	Reconciled, MissedDuplicates uint64
	// Open names the owners whose circuit is open.
	Open []string
}

// Stats returns the counts of remote lookups and of the circuit breakers.
func (c *Content) Stats() ContentStats {
	c.mu.Lock()
	held := uint64(len(c.held))
	var open []string
	for o := range c.circuits {
		open = append(open, o)
	}
	c.mu.Unlock()
	return ContentStats{Remote: c.remote.Load(), Batches: c.batchesSent.Load(), FailedOpen: c.failedOpen.Load(),
		Held: held, Dropped: c.dropped.Load(), Reconciled: c.reconciled.Load(), MissedDuplicates: c.missed.Load(), Open: open}
}

// Seen implements dedup.ContentSeen.
func (c *Content) Seen(ctx context.Context, doc dedup.Doc) (dedup.Match, error) {
	if err := ctx.Err(); err != nil {
		// A caller that gave up records nothing (dedup.ContentSeen).
		return dedup.Match{}, &Error{Op: "content seen", Subject: doc.URL, Err: err}
	}
	fp := dedup.TextFingerprint(doc.Text)
	m := dedup.Match{Fingerprint: fp}
	owner := c.ring.FingerprintOwner(fp)
	if owner == c.self {
		u, seen, err := c.store.testAndAdd(fp, doc.URL)
		if seen {
			m.Seen, m.URL, m.Of, m.Similarity = true, u, fp, 1
		}
		return m, err
	}
	c.remote.Add(1)
	c.mu.Lock()
	if first, ok := c.held[fp]; ok || c.circuits[owner] != nil || c.closed {
		// Held here (the owner does not know it yet), or the owner is
		// absent: answer from the hold table at once.
		m = c.holdLocked(m, fp, doc.URL, first, ok)
		c.mu.Unlock()
		return m, nil
	}
	b := c.batches[owner]
	if b == nil {
		b = &lookup{done: make(chan struct{})}
		c.batches[owner] = b
		c.wg.Add(1)
		b.timer = time.AfterFunc(c.delay, func() { c.send(owner, b) })
	}
	i := len(b.items)
	b.items = append(b.items, seenItem{fp: fp, url: doc.URL})
	full := len(b.items) >= c.size
	if full {
		delete(c.batches, owner) // later lookups start a new batch
	}
	c.mu.Unlock()
	if full && b.timer.Stop() {
		c.send(owner, b)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return m, &Error{Op: "content seen", Subject: owner, Err: ctx.Err()}
	}
	if b.err != nil {
		// The owner is absent or slow (its circuit is open now): fail
		// open through the hold table, as later lookups will.
		c.mu.Lock()
		first, ok := c.held[fp]
		m = c.holdLocked(m, fp, doc.URL, first, ok)
		c.mu.Unlock()
		return m, nil
	}
	if b.seen[i] {
		m.Seen, m.URL, m.Of, m.Similarity = true, b.urls[i], fp, 1
	}
	return m, nil
}

// holdLocked answers a lookup from the hold table: a duplicate of first
// if fp is held (ok) at another URL, else new, and held.
func (c *Content) holdLocked(m dedup.Match, fp uint64, url, first string, ok bool) dedup.Match {
	c.failedOpen.Add(1)
	switch {
	case ok && first != url:
		m.Seen, m.URL, m.Of, m.Similarity = true, first, fp, 1
	case ok:
	case len(c.held) >= c.holdMax:
		c.dropped.Add(1)
	default:
		// No wake: the owner's circuit is open (its probe is scheduled)
		// or its batch just failed (which opened it).
		c.held[fp] = url
	}
	return m
}

// wakeLocked starts the reconciler, or shortens its wait.
func (c *Content) wakeLocked() {
	if c.closed {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// startReconciler runs the reconciler until close.
func (c *Content) startReconciler() {
	c.recon.Add(1)
	go func() {
		defer c.recon.Done()
		c.reconcile()
	}()
}

// reconcile probes the owners whose circuit is open and sends the held
// fingerprints to their owners, until close.
func (c *Content) reconcile() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		c.mu.Lock()
		wait := c.reconcileDueLocked(time.Now())
		c.mu.Unlock()
		if wait == 0 {
			c.reconcileRound()
			continue
		}
		t.Reset(wait)
		select {
		case <-c.stop:
			return
		case <-c.wake:
		case <-t.C:
		}
	}
}

// reconcileDueLocked returns 0 if some owner is due for a reconciling
// request (held fingerprints whose owner's circuit is closed, or an open
// circuit whose probe is due), else how long until the next probe (an
// hour when nothing waits).
func (c *Content) reconcileDueLocked(now time.Time) time.Duration {
	wait := time.Hour
	if len(c.held) > 0 {
		// Owners change with the membership: look again now and then.
		wait = probeMax
	}
	for _, ci := range c.circuits {
		if d := ci.next.Sub(now); d <= 0 {
			return 0
		} else if d < wait {
			wait = d
		}
	}
	for fp := range c.held {
		if c.circuits[c.ring.FingerprintOwner(fp)] == nil {
			return 0
		}
	}
	return wait
}

// reconcileRound sends one request to every owner due: up to
// reconcileBatch of its held fingerprints, or none (a probe).
func (c *Content) reconcileRound() {
	now := time.Now()
	c.mu.Lock()
	due := map[string][]seenItem{}
	for o, ci := range c.circuits {
		if !ci.next.After(now) {
			due[o] = nil
		}
	}
	for fp, u := range c.held {
		o := c.ring.FingerprintOwner(fp)
		if o == c.self {
			// The partition moved here: this node answers for it now.
			delete(c.held, fp)
			if _, _, err := c.store.testAndAdd(fp, u); err != nil {
				c.log.Error("cluster: content log", "err", err)
			}
			continue
		}
		items, ok := due[o]
		if !ok && c.circuits[o] == nil {
			ok = true
		}
		if ok && len(items) < reconcileBatch {
			due[o] = append(items, seenItem{fp: fp, url: u})
		}
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for o, items := range due {
		wg.Go(func() {
			seen, _, err := c.ask(o, items)
			c.mu.Lock()
			defer c.mu.Unlock()
			if err != nil {
				c.openLocked(o, err)
				return
			}
			if ci := c.circuits[o]; ci != nil {
				delete(c.circuits, o)
				c.log.Info("cluster: content owner answers again; circuit closed", "node", c.self, "owner", o,
					"after", time.Since(ci.since).Round(time.Millisecond))
			}
			for i, it := range items {
				if c.held[it.fp] == it.url {
					delete(c.held, it.fp)
				}
				c.reconciled.Add(1)
				if seen[i] {
					c.missed.Add(1)
				}
			}
		})
	}
	wg.Wait()
}

// openLocked opens owner's circuit after a failed request, or pushes its
// next probe back.
func (c *Content) openLocked(owner string, err error) {
	ci := c.circuits[owner]
	if ci == nil {
		ci = &circuit{since: time.Now(), backoff: probeFirst}
		c.circuits[owner] = ci
		c.log.Warn("cluster: content owner absent; circuit open, its lookups answer from this node until it is back",
			"node", c.self, "owner", owner, "err", err)
	} else {
		ci.backoff = min(2*ci.backoff, probeMax)
	}
	ci.next = time.Now().Add(ci.backoff)
	c.wakeLocked()
}

// ask sends one lookup request to owner, bounded by the lookup timeout.
func (c *Content) ask(owner string, items []seenItem) ([]bool, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	c.batchesSent.Add(1)
	resp, err := c.t.Request(ctx, "content."+owner, appendSeen(nil, items))
	if err != nil {
		return nil, nil, err
	}
	seen, urls, err := decodeSeenAnswer(resp)
	if err == nil && len(seen) != len(items) {
		err = &Error{Op: "content seen", Subject: owner, Err: ErrCorrupt}
	}
	return seen, urls, err
}

// send takes batch b off the table and asks its owner; a failure opens
// the owner's circuit.
func (c *Content) send(owner string, b *lookup) {
	defer c.wg.Done()
	c.mu.Lock()
	if c.batches[owner] == b {
		delete(c.batches, owner)
	}
	items := b.items
	c.mu.Unlock()
	b.seen, b.urls, b.err = c.ask(owner, items)
	if b.err != nil {
		c.mu.Lock()
		c.openLocked(owner, b.err)
		c.mu.Unlock()
	}
	close(b.done)
}

// serve answers another node's lookups against this node's partition.
func (c *Content) serve(_ context.Context, req []byte) ([]byte, error) {
	if len(req) > 0 && req[0] == kindForget {
		fp, err := decodeForget(req)
		if err != nil {
			return nil, err
		}
		return nil, c.store.Forget(context.Background(), fp)
	}
	items, err := decodeSeen(req)
	if err != nil {
		return nil, err
	}
	seen, urls := make([]bool, len(items)), make([]string, len(items))
	var errs []error
	for i, it := range items {
		var err error
		if urls[i], seen[i], err = c.store.testAndAdd(it.fp, it.url); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		// The fingerprints are recorded; only the log failed. Answer,
		// and report it here.
		c.log.Error("cluster: content log", "err", errors.Join(errs...))
	}
	return appendSeenAnswer(nil, seen, urls), nil
}

// Forget implements dedup.ContentSeen: it removes fp from its owner's
// partition (one request, not batched) and from the hold table. An owner
// whose circuit is open fails it at once with ErrUnavailable.
func (c *Content) Forget(ctx context.Context, fp uint64) error {
	owner := c.ring.FingerprintOwner(fp)
	if owner == c.self {
		return c.store.Forget(ctx, fp)
	}
	c.mu.Lock()
	_, held := c.held[fp]
	delete(c.held, fp)
	open := c.circuits[owner] != nil
	c.mu.Unlock()
	if open {
		if held {
			return nil // the owner never learnt it
		}
		return &Error{Op: "forget", Subject: owner, Err: ErrUnavailable}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.t.Request(ctx, "content."+owner, appendForget(nil, fp))
	return err
}

// Len returns the number of fingerprints this node's partition holds.
func (c *Content) Len() int { return c.store.Len() }

// LogTo implements dedup.Durable for this node's partition: the crawler
// keeps it in its checkpoint directory, so a node restarted on it answers
// for the fingerprints it held.
func (c *Content) LogTo(w io.Writer) { c.store.LogTo(w) }

// Replay implements dedup.Durable for this node's partition.
func (c *Content) Replay(r io.Reader) (int64, error) { return c.store.Replay(r) }

// Rewrite implements dedup.Durable for this node's partition.
func (c *Content) Rewrite(w io.Writer) error { return c.store.Rewrite(w) }

// close sends the batches not yet sent, waits for the lookups under way,
// makes one last attempt to hand the held fingerprints to their owners
// (bounded by the lookup timeout) and stops the reconciler. Lookups
// after close answer from the hold table.
func (c *Content) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	var pending []*lookup
	var owners []string
	for o, b := range c.batches {
		if b.timer.Stop() {
			pending = append(pending, b)
			owners = append(owners, o)
		}
	}
	c.mu.Unlock()
	for i, b := range pending {
		c.send(owners[i], b)
	}
	c.wg.Wait()
	c.mu.Lock()
	c.closed = true
	close(c.stop)
	for _, ci := range c.circuits {
		ci.next = time.Time{} // probe every absent owner once more
	}
	c.mu.Unlock()
	c.recon.Wait()
	c.reconcileRound()
	if n := c.Stats().Held; n > 0 {
		c.log.Warn("cluster: content fingerprints not handed to their absent owners", "node", c.self, "held", n)
	}
}
