package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// openMembership prepares the membership bucket and the shard journals of
// a node with Options.Lease.
func (n *Node) openMembership(ctx context.Context) error {
	t, ok := n.raw.(*NATS)
	if !ok {
		return &Error{Op: "new node", Subject: n.opts.Name, Err: errors.New("membership (Lease) needs the NATS transport")}
	}
	m, err := openMembership(ctx, n, t, "")
	if err != nil {
		return err
	}
	n.members = m
	sh, err := openShards(ctx, n, t)
	if err != nil {
		return err
	}
	sh.crawler = n.crawler.Load
	n.shards = sh
	n.splitter.local = sh.local
	n.splitter.gate = sh.enter
	return nil
}

// configFingerprint is the fingerprint of the settings every member must
// share: the shard count and the politeness settings (two nodes with
// different ones would treat one host differently across a handoff).
func configFingerprint(shards int, cfg *crawlkit.Config) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "shards=%d min=%v max=%v k=%v agent=%q host=%d", shards, cfg.MinDelay, cfg.MaxDelay,
		cfg.DelayFactor, cfg.Agent, cfg.MaxPagesPerHost)
	return fmt.Sprintf("%016x", h.Sum64())
}

// startMember is Start for a node with membership: join (the cluster
// refuses a different configuration with ErrConfigMismatch), run the
// membership and shard loops, consume the inbox, and wait (at most
// 2×Lease + HandoffGap) until the shards the view gives this node are
// claimed, so that the crawl's seeds of those hosts are queued here.
// Called with n.mu held.
func (n *Node) startMember(ctx context.Context, c *crawlkit.Crawler) error {
	if n.config == "" {
		return &Error{Op: "start", Subject: n.opts.Name, Err: errors.New("membership needs Configure before Start")}
	}
	n.members.config = n.config
	jctx, cancel := context.WithTimeout(ctx, n.opts.RequestTimeout)
	err := n.members.join(jctx)
	cancel()
	if err != nil {
		return err
	}
	cons, err := n.raw.Consume(n.opts.Name, func(hctx context.Context, data []byte) error {
		return n.receive(ctx, hctx, c, data)
	})
	if err != nil {
		return err
	}
	n.consumer = cons
	lctx, lcancel := context.WithCancel(context.Background())
	n.cancel = lcancel
	if err := n.shards.openLog(ctx); err != nil {
		return err
	}
	n.wg.Add(3)
	go func() {
		defer n.wg.Done()
		n.members.run(lctx)
	}()
	go func() {
		defer n.wg.Done()
		n.shards.run(lctx)
	}()
	go func() {
		defer n.wg.Done()
		n.shards.writeLoop(lctx)
	}()
	deadline := time.Now().Add(2*n.opts.Lease + n.opts.HandoffGap)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if n.shards.ready() && n.shards.moving() == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.log.Warn("cluster: started before every shard was claimed", "node", n.opts.Name, "moving", n.shards.moving())
	return nil
}

// errHeld asks for a batch to be delivered again later: it holds URLs of
// a shard given to this node and not claimed yet.
var errHeld = errors.New("cluster: shard not claimed yet")

// receive takes one inbox batch of a node with membership: URLs of owned
// shards go to the crawler, those of shards now given to other nodes are
// forwarded to them, and a batch with URLs of a shard this node is about
// to claim comes again later.
func (n *Node) receive(runCtx, hctx context.Context, c *crawlkit.Crawler, data []byte) error {
	urls, err := DecodeURLs(data)
	if err != nil {
		n.dropped.Add(1)
		n.log.Error("cluster: dropping undecodable batch", "node", n.opts.Name, "err", err)
		return nil
	}
	if err := runCtx.Err(); err != nil {
		return err
	}
	var add, fwd []frontier.URL
	for _, u := range urls {
		host := frontier.HostKey(u.URL)
		switch {
		case n.shards.local(host):
			add = append(add, u)
		case n.ring.HostOwner(host) == n.opts.Name:
			return errHeld
		default:
			fwd = append(fwd, u)
		}
	}
	if err := n.forward(hctx, fwd); err != nil {
		return err
	}
	if len(add) > 0 {
		if err := c.Add(hctx, add...); err != nil {
			return err
		}
	}
	if err := runCtx.Err(); err != nil {
		return err
	}
	n.received.Add(1)
	return nil
}

// forward publishes urls to their owners' inboxes and returns once the
// stream stored them (unlike Splitter.Send, which buffers), so that the
// batch they came in may be acknowledged.
func (n *Node) forward(ctx context.Context, urls []frontier.URL) error {
	by := map[string][]frontier.URL{}
	for _, u := range urls {
		o := n.ring.HostOwner(frontier.HostKey(u.URL))
		by[o] = append(by[o], u)
	}
	for node, list := range by {
		if err := n.meter.Publish(ctx, node, AppendURLs(nil, list)); err != nil {
			return err
		}
	}
	return nil
}

// drain forwards the inbox of a node that is gone to the owners of its
// URLs, until ctx ends (the coordinator ends it when the inbox is empty
// or the node is back).
func (n *Node) drain(ctx context.Context, node string) {
	n.log.Info("cluster: forwarding the inbox of a node that is gone", "node", n.opts.Name, "gone", node)
	cons, err := n.raw.Consume(node, func(hctx context.Context, data []byte) error {
		urls, err := DecodeURLs(data)
		if err != nil {
			return nil
		}
		return n.forward(hctx, urls)
	})
	if err != nil {
		n.log.Warn("cluster: draining an inbox", "node", n.opts.Name, "gone", node, "err", err)
		return
	}
	<-ctx.Done()
	cons.Close()
}

// memberStatus is this node's record: its status (work is busy, and so
// is a shard on the move) and its received batches.
func (n *Node) memberStatus() memberRecord {
	st := n.localStatus()
	busy := st.Busy
	if n.shards != nil && n.started {
		busy += uint64(n.shards.moving())
	}
	return memberRecord{Busy: busy, Recv: st.Received, Leaving: n.leaving.Load()}
}

// handOver is a graceful leave: the node tells the coordinator it leaves
// (which drops it from the view at its next round), releases its shards at
// once, so that the others claim them after HandoffGap instead of a
// Lease, and deletes its record.
func (n *Node) handOver() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*n.opts.RequestTimeout)
	defer cancel()
	if err := n.splitter.Flush(ctx); err != nil {
		// Still buffered: the journals' outboxes hold them for the
		// members that take the shards over.
		n.log.Warn("cluster: leaving with URLs not stored", "err", err)
	}
	n.members.leave(ctx)
	var all []int
	n.shards.mu.Lock()
	for i := range n.shards.st {
		if n.shards.st[i].owned {
			all = append(all, i)
		}
	}
	n.shards.mu.Unlock()
	if len(all) > 0 {
		n.shards.release(ctx, all)
	}
	n.members.resign(ctx)
	n.members.remove(ctx)
}

// Members returns the live members as this node last saw the view (nil
// without membership).
func (n *Node) Members() []string {
	if n.members == nil {
		return nil
	}
	v, _ := n.members.current()
	return v.Members
}

// OwnedShards returns the number of virtual shards this node owns now
// (with membership; without, those the static Ring gives it).
func (n *Node) OwnedShards() int {
	if n.shards != nil {
		return n.shards.owned()
	}
	c := 0
	for i := range n.ring.Shards() {
		if n.ring.ShardOwner(i) == n.opts.Name {
			c++
		}
	}
	return c
}

// ControlWrites returns the key-value writes of this node's membership
// (heartbeats and, as coordinator, view updates).
func (n *Node) ControlWrites() uint64 {
	if n.members == nil {
		return 0
	}
	return n.members.puts.Load()
}
