package cluster

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A member's commits are written to its log as group records: the log
// writer gathers the Txns staged meanwhile (CommitDelay), merges their
// parts by shard and writes them in one publish, which is atomic, so a
// page's links in other shards are never stored without the page's
// record or the other way round. Each publish expects the last sequence
// of the node's revoke subject to be the one the node knows: a node that
// claimed one of its shards has revoked it there, the publish fails, the
// writer reads the revokes, drops those shards (their new URLs go to the
// new owner, as for any commit to a shard not owned) and writes the rest.
//
// Every FoldEvery the writer folds each shard's entries into the shard's
// journal (one record, fenced as any journal write, naming the last log
// entry it holds) and purges the log of the entries every shard folded.
// A shard lost meanwhile keeps its entries in the log until the node
// that claimed it has written its journal past them (a claim that
// replayed log entries snapshots the shard at once).

// stagedTxn is one Txn's parts waiting for the log writer.
type stagedTxn struct {
	parts map[int]*shardRecord
	done  chan error
}

// unfolded are a shard's log entries not folded yet, merged.
type unfolded struct {
	rec         *shardRecord
	first, last uint64 // log sequences of the first and last entry
}

// logSubject is this incarnation's log.
func (s *shards) logSubject() string {
	return s.prefix + ".log." + s.n.opts.Name + "." + strconv.FormatUint(s.n.members.Inc(), 10)
}

// ownSubject is the subject of the revoke records of node.
func (s *shards) ownSubject(node string) string { return s.prefix + ".own." + node }

// stage queues t's parts for the log writer and returns the wait for
// their record.
func (s *shards) stage(parts map[int]*shardRecord) func(context.Context) error {
	st := &stagedTxn{parts: parts, done: make(chan error, 1)}
	s.qmu.Lock()
	s.queue = append(s.queue, st)
	s.qmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return func(ctx context.Context) error {
		select {
		case err := <-st.done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// openLog reads the last sequence of this node's revoke subject: the
// revokes written before this incarnation joined are not its own.
func (s *shards) openLog(ctx context.Context) error {
	m, err := s.stream.GetLastMsgForSubject(ctx, s.ownSubject(s.n.opts.Name))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil
	case err != nil:
		return &Error{Op: "open log", Subject: s.ownSubject(s.n.opts.Name), Err: err}
	}
	s.writeM.Lock()
	s.ownSeq = m.Sequence
	s.writeM.Unlock()
	return nil
}

// writeLoop is the log writer; it runs until ctx ends.
func (s *shards) writeLoop(ctx context.Context) {
	fold := time.NewTicker(s.n.opts.FoldEvery)
	defer fold.Stop()
	fps := time.NewTicker(fpFlushEvery)
	defer fps.Stop()
	for {
		select {
		case <-ctx.Done():
			s.failQueued(&Error{Op: "journal", Subject: s.logSubject(), Err: ErrClosed})
			return
		case <-s.wake:
			if d := s.n.opts.CommitDelay; d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
			s.writeQueued(ctx)
		case <-fps.C:
			s.mu.Lock()
			n := s.fpN
			s.mu.Unlock()
			if n > 0 {
				s.writeQueued(ctx) // an empty group carries them
			}
		case <-fold.C:
			s.writeM.Lock()
			s.fold(ctx, nil)
			s.writeM.Unlock()
			s.sweepLogs(ctx)
		}
	}
}

// failQueued answers every queued Txn with err.
func (s *shards) failQueued(err error) {
	s.qmu.Lock()
	q := s.queue
	s.queue = nil
	s.qmu.Unlock()
	for _, st := range q {
		st.done <- err
	}
}

// writeQueued writes the Txns queued so far as one group record.
func (s *shards) writeQueued(ctx context.Context) {
	s.qmu.Lock()
	q := s.queue
	s.queue = nil
	s.qmu.Unlock()
	lost, flush, err := s.writeGroup(ctx, q)
	if err == nil && len(lost) > 0 {
		err = s.n.splitter.Send(ctx, lost)
		flush = true
	}
	if err == nil && flush {
		// Stored by their owners before the commits return, as the
		// log would have kept them; if they cannot be, the commits
		// fail rather than report pages done whose links a kill
		// would lose.
		err = s.n.splitter.flushStored(ctx, s.n.opts.RequestTimeout)
	}
	for _, st := range q {
		st.done <- err
	}
}

// writeGroup merges the parts of q by shard and writes them, with the
// fingerprints waiting, as one group record. The new URLs of parts whose
// shard this node does not own are returned for the host splitter; flush
// reports an outbox among them (its URLs wait in the splitter with no
// stored copy).
func (s *shards) writeGroup(ctx context.Context, q []*stagedTxn) (lost []frontier.URL, flush bool, err error) {
	s.writeM.Lock()
	defer s.writeM.Unlock()
	merged := map[int]*shardRecord{}
	s.mu.Lock()
	for _, st := range q {
		for i, p := range st.parts {
			if !s.st[i].owned && s.st[i].lastSeq == 0 {
				// Not this node's shard (any more): its new URLs go to
				// the owner; the rest of its part is the owner's to
				// decide.
				for _, a := range p.txn.Add {
					lost = append(lost, a.URL)
				}
				flush = flush || len(p.out) > 0
				continue
			}
			mergePart(merged, i, p)
		}
	}
	for i, b := range s.fpBuf {
		if s.st[i].owned && !s.st[i].releasing {
			m := merged[i]
			if m == nil {
				m = &shardRecord{kind: recData}
				merged[i] = m
			}
			m.fps = append(m.fps, b...)
		}
	}
	s.fpBuf, s.fpN = nil, 0
	s.mu.Unlock()
	for len(merged) > 0 {
		seq, err := s.publishGroup(ctx, merged)
		if err == nil {
			for i, r := range merged {
				u := s.unfolded[i]
				if u == nil {
					s.unfolded[i] = &unfolded{rec: r, first: seq, last: seq}
					continue
				}
				mergeInto(u.rec, r)
				u.last = seq
			}
			s.logSeq = seq
			s.logRecords.Add(1)
			return lost, flush, nil
		}
		if !errors.Is(err, errFenced) {
			return lost, flush, err
		}
		// Revoked shards: their parts go as for a shard not owned.
		revoked, err := s.readRevokes(ctx)
		if err != nil {
			return lost, flush, err
		}
		for _, i := range revoked {
			if p := merged[i]; p != nil {
				for _, a := range p.txn.Add {
					lost = append(lost, a.URL)
				}
				flush = flush || len(p.out) > 0
				delete(merged, i)
			}
		}
	}
	return lost, flush, nil
}

// mergePart appends p's changes to shard i's record in merged.
func mergePart(merged map[int]*shardRecord, i int, p *shardRecord) {
	m := merged[i]
	if m == nil {
		m = &shardRecord{kind: recData}
		merged[i] = m
	}
	mergeInto(m, p)
}

// mergeInto appends p's changes to m: applied in order, they change a
// shard as p's after m's.
func mergeInto(m, p *shardRecord) {
	m.txn.Add = append(m.txn.Add, p.txn.Add...)
	m.txn.Put = append(m.txn.Put, p.txn.Put...)
	m.txn.Done = append(m.txn.Done, p.txn.Done...)
	m.txn.Keys = append(m.txn.Keys, p.txn.Keys...)
	m.fps = append(m.fps, p.fps...)
	m.out = append(m.out, p.out...)
}

// publishGroup writes one group record of merged, expecting the revoke
// subject's last sequence to be s.ownSeq; a failed expectation is
// errFenced. Called with writeM held.
func (s *shards) publishGroup(ctx context.Context, merged map[int]*shardRecord) (uint64, error) {
	if s.n.crashed.Load() {
		return 0, &Error{Op: "journal", Subject: s.logSubject(), Err: ErrClosed}
	}
	g := &groupRecord{owner: s.n.opts.Name, inc: s.n.members.Inc()}
	for _, i := range slices.Sorted(maps.Keys(merged)) {
		g.entries = append(g.entries, groupEntry{i, merged[i]})
	}
	data, err := appendGroupRecord(nil, g)
	if err != nil {
		return 0, err
	}
	msg := nats.NewMsg(s.logSubject())
	msg.Data = data
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(s.ownSeq, 10))
	msg.Header.Set(expectedLastSubjSeqSubjHeader, s.ownSubject(s.n.opts.Name))
	return s.publish(ctx, msg)
}

// expectedLastSubjSeqSubjHeader names the subject whose last sequence
// Nats-Expected-Last-Subject-Sequence is checked against (NATS 2.11).
const expectedLastSubjSeqSubjHeader = "Nats-Expected-Last-Subject-Sequence-Subject"

// readRevokes reads the revoke records of this node written since
// s.ownSeq, drops the shards they revoke from this incarnation and
// returns them. Called with writeM held.
func (s *shards) readRevokes(ctx context.Context) ([]int, error) {
	subj := s.ownSubject(s.n.opts.Name)
	var revoked []int
	for {
		m, err := s.stream.GetMsg(ctx, s.ownSeq+1, jetstream.WithGetMsgSubject(subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return revoked, nil
		}
		if err != nil {
			return revoked, err
		}
		s.ownSeq = m.Sequence
		r, err := decodeRevokeRecord(m.Data)
		if err != nil {
			s.n.log.Error("cluster: unreadable revoke record", "node", s.n.opts.Name, "seq", m.Sequence, "err", err)
			continue
		}
		if r.target != s.n.members.Inc() || r.shard < 0 || r.shard >= len(s.st) {
			continue
		}
		s.mu.Lock()
		s.st[r.shard] = shardSlot{}
		s.mu.Unlock()
		s.lose(r.shard)
		s.n.log.Warn("cluster: shard taken over by another node", "node", s.n.opts.Name, "shard", r.shard, "by", r.owner)
		revoked = append(revoked, r.shard)
	}
}

// lose moves shard i's unfolded entries to lostLog: they are its new
// owner's now, and the log keeps them until that owner's journal is past
// them. Called with writeM held.
func (s *shards) lose(i int) {
	u := s.unfolded[i]
	if u == nil {
		return
	}
	delete(s.unfolded, i)
	if l := s.lostLog[i]; l != nil {
		u.first = min(u.first, l.first)
	}
	u.rec = nil
	s.lostLog[i] = u
}

// fold writes the unfolded log entries of the shards in only (all when
// nil) to their journals and purges the log of what no shard needs.
// Called with writeM held.
func (s *shards) fold(ctx context.Context, only []int) {
	list := only
	if list == nil {
		list = slices.Collect(maps.Keys(s.unfolded))
	}
	list = slices.DeleteFunc(slices.Clone(list), func(i int) bool { return s.unfolded[i] == nil })
	errs := make([]error, len(list))
	parallel(len(list), func(k int) {
		u := s.unfolded[list[k]]
		r := *u.rec
		r.kind, r.folded = recData, u.last
		errs[k] = s.write(ctx, list[k], &r, s.slotSeq(list[k]))
	})
	for k, i := range list {
		switch err := errs[k]; {
		case err == nil:
			delete(s.unfolded, i)
			s.wrote(i)
		case errors.Is(err, errFenced):
			s.lose(i)
			s.mu.Lock()
			s.st[i] = shardSlot{}
			s.mu.Unlock()
		default:
			s.n.log.Warn("cluster: folding the log", "node", s.n.opts.Name, "shard", i, "err", err)
		}
	}
	if only == nil {
		s.purgeLog(ctx)
	}
}

// purgeLog purges the log below the first entry a shard still needs.
// Called with writeM held.
func (s *shards) purgeLog(ctx context.Context) {
	for i, l := range s.lostLog {
		if s.superseded(ctx, i, l.last) {
			delete(s.lostLog, i)
		}
	}
	below := s.logSeq + 1
	for _, u := range s.unfolded {
		below = min(below, u.first)
	}
	for _, l := range s.lostLog {
		below = min(below, l.first)
	}
	if below <= s.purged {
		return
	}
	if err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(s.logSubject()), jetstream.WithPurgeSequence(below)); err != nil {
		s.n.log.Warn("cluster: purging the log", "node", s.n.opts.Name, "err", err)
		return
	}
	s.purged = below
}

// superseded reports whether shard i's journal is past the log entries
// for it up to seq: its last record came after them and is a fold (its
// owner's, which holds them, or a new owner's, whose claim replayed them
// and wrote a snapshot first), a release or a snapshot's last chunk. A
// claim is not (its snapshot follows it), nor a snapshot's other chunks.
func (s *shards) superseded(ctx context.Context, i int, seq uint64) bool {
	m, err := s.stream.GetLastMsgForSubject(ctx, s.subject(i))
	if err != nil || m.Sequence < seq {
		return false
	}
	r, err := decodeShardRecord(m.Data)
	if err != nil {
		return false
	}
	return r.kind == recData || r.kind == recRelease || r.kind == recSnapshot && r.flags&snapFinal != 0
}

// sweepLogs purges the logs other nodes left (a node that died, or this
// node's earlier incarnations) of the entries every shard's journal is
// past. A log written to within 3 FoldEvery and a Lease is its writer's
// to purge.
func (s *shards) sweepLogs(ctx context.Context) {
	info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(s.prefix+".log.>"))
	if err != nil {
		return
	}
	mine := s.logSubject()
	for subj, n := range info.State.Subjects {
		if subj == mine || n == 0 {
			continue
		}
		last, err := s.stream.GetLastMsgForSubject(ctx, subj)
		if err != nil || time.Since(last.Time) < 3*s.n.opts.FoldEvery+s.n.opts.Lease {
			continue
		}
		first := map[int]uint64{}
		lastSeq := map[int]uint64{}
		for seq := uint64(1); seq <= last.Sequence; seq++ {
			m, err := s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
			if err != nil {
				break
			}
			seq = m.Sequence
			g, err := decodeGroupRecord(m.Data)
			if err != nil {
				continue // unreadable: a replay fails on it either way
			}
			for _, e := range g.entries {
				if _, ok := first[e.shard]; !ok {
					first[e.shard] = seq
				}
				lastSeq[e.shard] = seq
			}
		}
		below := last.Sequence + 1 // all of it
		for i, seq := range lastSeq {
			if !s.superseded(ctx, i, seq) {
				below = min(below, first[i])
			}
		}
		opts := []jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject(subj)}
		if below <= last.Sequence {
			opts = append(opts, jetstream.WithPurgeSequence(below))
		}
		if err := s.stream.Purge(ctx, opts...); err != nil {
			s.n.log.Warn("cluster: purging a log left behind", "node", s.n.opts.Name, "log", subj, "err", err)
		}
	}
}
