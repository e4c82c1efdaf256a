package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A shard's journal grows with every page its hosts commit, and a node
// that claims the shard replays all of it. The owner therefore compacts
// it: once it holds Options.CompactAfter records since its last snapshot,
// the owner rebuilds the shard's image from the journal, writes it as
// snapshot records (fenced like any write) and purges the records before
// them. A claim then replays the snapshot and what followed, so takeover
// time and stream size follow the shard's state, not its history. An
// owner that dies mid-compaction leaves a long journal, or one whose
// snapshot is written but whose older records are not purged: the node
// that claims the shard purges those and compacts a long one at once.

// snapshotChunk bounds the size of one snapshot record, well under the
// NATS maximum payload (1 MiB by default).
const snapshotChunk = 256 << 10

// wrote counts a data record written to shard i's journal and starts a
// compaction when the journal has grown enough. Called with writeM held.
func (s *shards) wrote(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st[i].records++
	s.compactDue(i)
}

// compactDue starts a compaction of shard i's journal when it is due.
// Called with s.mu held.
func (s *shards) compactDue(i int) {
	every := s.n.opts.CompactAfter
	if every <= 0 || s.st[i].records < every || s.st[i].compacting || !s.st[i].owned {
		return
	}
	s.st[i].compacting = true
	s.compactWG.Add(1)
	go func() {
		defer s.compactWG.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 4*s.n.opts.RequestTimeout)
		defer cancel()
		err := s.compact(ctx, i)
		s.mu.Lock()
		s.st[i].compacting = false
		s.mu.Unlock()
		if err != nil && !errors.Is(err, errFenced) && !s.n.crashed.Load() {
			s.n.log.Warn("cluster: compacting a shard journal", "node", s.n.opts.Name, "shard", i, "err", err)
		}
	}()
}

// compact replaces the records of shard i's journal with a snapshot of
// the shard's state. The journal is replayed without holding writeM, so
// commits go on meanwhile; the records they wrote are replayed under it,
// before the snapshot is written.
func (s *shards) compact(ctx context.Context, i int) error {
	last := s.slotSeq(i)
	if last == 0 {
		return nil
	}
	// The outboxes of the records before the snapshot may be dropped
	// once every URL handed to the host splitter before them is stored:
	// when, after they were written, nothing waits in the splitter. A
	// splitter never seen empty (a failing publish) has them carried
	// into the snapshot.
	_ = s.n.splitter.Flush(ctx) // a URL left buffered is seen below
	stored := false
	for wait := time.Now().Add(s.n.opts.RequestTimeout); time.Now().Before(wait) && ctx.Err() == nil; time.Sleep(time.Millisecond) {
		if s.n.splitter.Buffered() == 0 {
			stored = true
			break
		}
	}
	images, read, err := s.replay(ctx, map[int]uint64{i: last})
	if err != nil {
		return err
	}
	im := images[i]
	s.writeM.Lock()
	defer s.writeM.Unlock()
	s.mu.Lock()
	owned, cur := s.st[i].owned && !s.st[i].releasing, s.st[i].lastSeq
	s.mu.Unlock()
	if !owned || cur == 0 {
		return nil
	}
	base := len(im.out) // the outboxes up to last, stored if stored
	// What was written since the replay: the journal's records and the
	// logs' entries.
	more := map[int]uint64{}
	if cur > read {
		more[i] = cur
	}
	if _, err := s.replayInto(ctx, images, more, read+1); err != nil {
		return err
	}
	if stored {
		im.out = im.out[base:]
	}
	im.settle()
	return s.snapshotImage(ctx, i, im)
}

// snapshotImage writes im as shard i's snapshot and purges the journal
// before it. The shard's log entries not folded yet are in im: they
// leave the fold. Called with writeM held.
func (s *shards) snapshotImage(ctx context.Context, i int, im *shardImage) error {
	var first uint64
	for k, r := range im.snapshot(snapshotChunk, true) {
		if err := s.write(ctx, i, r, s.slotSeq(i)); err != nil {
			return err
		}
		if k == 0 {
			first = s.slotSeq(i)
		}
	}
	delete(s.unfolded, i)
	s.mu.Lock()
	s.st[i].records = 0
	s.mu.Unlock()
	s.compactions.Add(1)
	// The snapshot stands for everything before it; a purge that fails
	// leaves records a replay reads and then replaces.
	return s.stream.Purge(ctx, jetstream.WithPurgeSubject(s.subject(i)), jetstream.WithPurgeSequence(first))
}
