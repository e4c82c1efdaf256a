package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
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
// Only exact duplicates are found: MinHash near-duplicates cannot be
// partitioned by value. A fingerprint owned by this node costs a map
// lookup; another node's costs up to LookupDelay plus a round trip,
// shared by the batch. Safe for concurrent use.
type Content struct {
	ring    *Ring
	self    string
	t       Transport
	size    int
	delay   time.Duration
	timeout time.Duration
	log     *slog.Logger

	store fpStore

	mu      sync.Mutex
	batches map[string]*lookup
	wg      sync.WaitGroup
}

var _ dedup.Durable = (*Content)(nil)

// fpStore is a node's partition: fingerprint → first URL.
type fpStore struct{ dedup.ExactContent }

// testAndAdd records fp at url unless present; it returns the URL fp was
// first seen at (url itself for a retried lookup of the same document).
func (s *fpStore) testAndAdd(fp uint64, url string) (string, bool, error) {
	first, known, err := s.Record(fp, url)
	if known && first != url {
		return first, true, nil
	}
	return "", false, err
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

func newContent(ring *Ring, self string, t Transport, size int, delay, timeout time.Duration, log *slog.Logger) *Content {
	return &Content{ring: ring, self: self, t: t, size: size, delay: delay, timeout: timeout, log: log, batches: map[string]*lookup{}}
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
	c.mu.Lock()
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
		return m, b.err
	}
	if b.seen[i] {
		m.Seen, m.URL, m.Of, m.Similarity = true, b.urls[i], fp, 1
	}
	return m, nil
}

// send takes batch b off the table and asks its owner.
func (c *Content) send(owner string, b *lookup) {
	defer c.wg.Done()
	c.mu.Lock()
	if c.batches[owner] == b {
		delete(c.batches, owner)
	}
	items := b.items
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req := appendSeen(nil, items)
	resp, err := c.t.Request(ctx, "content."+owner, req)
	for err != nil && errors.Is(err, ErrNoResponder) {
		// The owner is restarting: its partition comes back with it.
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
			resp, err = c.t.Request(ctx, "content."+owner, req)
			continue
		}
		break
	}
	if err == nil {
		b.seen, b.urls, err = decodeSeenAnswer(resp)
		if err == nil && len(b.seen) != len(items) {
			err = &Error{Op: "content seen", Subject: owner, Err: ErrCorrupt}
		}
	}
	b.err = err
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
// partition (one request, not batched).
func (c *Content) Forget(ctx context.Context, fp uint64) error {
	owner := c.ring.FingerprintOwner(fp)
	if owner == c.self {
		return c.store.Forget(ctx, fp)
	}
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

// close waits for the lookups under way.
func (c *Content) close() {
	c.mu.Lock()
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
}
