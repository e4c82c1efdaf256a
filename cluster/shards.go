package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawldb"
	"github.com/crawlkit/crawlkit/frontier"
)

// shards is a node's part in shard ownership: which virtual shards it
// owns (claimed in their journals), which hosts it may contact now
// (crawlkit.HostGate), and the State its crawler commits to, journaled
// per shard so that the next owner of a shard finds its queue, its
// URL-seen set and its host records.
//
// A node claims a shard the Ring (the view's members) gives it once
// nobody owns it: its journal's last record is a release, or was written
// by a node the view no longer lists, at least HandoffGap ago. It gives up
// a shard the Ring gives another node: it stops contacting its hosts,
// waits for the requests in flight to end and their outcomes to be
// journaled, and writes a release record. Every journal write expects the
// subject's last sequence to be the writer's own last one, so a node that
// lost a shard (it was declared dead and came back) cannot write to it
// again, and it stops contacting any host when its heartbeat has not been
// stored for 3/4 Lease, before anyone can have taken its shards.
type shards struct {
	n       *Node
	js      jetstream.JetStream
	stream  jetstream.Stream
	prefix  string
	gap     time.Duration
	state   *ShardState
	crawler func() *crawlkit.Crawler

	mu     sync.Mutex
	cond   *sync.Cond
	st     []shardSlot
	freeAt map[int]time.Time // when this node first saw each shard free
	writeM sync.Mutex        // serialises journal writes with releases

	compactWG   sync.WaitGroup // compactions under way
	compactions atomic.Uint64  // snapshots written
	resent      atomic.Uint64  // outbox URLs sent again at claims

	fpBuf map[int][]fpEntry // content fingerprints not journaled yet, by shard; under mu
	fpN   int               // the entries of fpBuf; under mu

	// The log writer (grouplog.go): Txns staged, and its wake-up.
	qmu   sync.Mutex
	queue []*stagedTxn
	wake  chan struct{}
	// Under writeM: the last sequence of this node's revoke subject it
	// knows, the shards' log entries not folded yet, those of shards
	// lost since, the log's last entry and the sequence it was purged
	// below.
	ownSeq     uint64
	unfolded   map[int]*unfolded
	lostLog    map[int]*unfolded
	logSeq     uint64
	purged     uint64
	logRecords atomic.Uint64 // group records written
}

type shardSlot struct {
	owned      bool
	releasing  bool
	compacting bool
	inflight   int
	lastSeq    uint64
	records    int // in the journal since its last snapshot
}

func openShards(ctx context.Context, n *Node, t *NATS) (*shards, error) {
	storage := jetstream.FileStorage
	if t.opts.Memory {
		storage = jetstream.MemoryStorage
	}
	name := t.opts.Stream + "_SHARDS"
	st, err := t.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:      name,
		Subjects:  []string{t.opts.Prefix + ".shard.*", t.opts.Prefix + ".log.>", t.opts.Prefix + ".own.*"},
		Retention: jetstream.LimitsPolicy,
		Storage:   storage,
		Replicas:  t.opts.Replicas,
	})
	if err != nil {
		return nil, &Error{Op: "create stream", Subject: name, Err: err}
	}
	s := &shards{n: n, js: t.js, stream: st, prefix: t.opts.Prefix, gap: n.opts.HandoffGap,
		st: make([]shardSlot, n.ring.Shards()), freeAt: map[int]time.Time{},
		wake: make(chan struct{}, 1), unfolded: map[int]*unfolded{}, lostLog: map[int]*unfolded{}}
	s.cond = sync.NewCond(&s.mu)
	s.state = &ShardState{s: s, inner: &crawlkit.MemState{}}
	if dir := n.opts.StateDir; dir != "" {
		// A local copy, rebuilt from the journals: what a previous run
		// left there is stale.
		if err := os.RemoveAll(dir); err != nil {
			return nil, &Error{Op: "state dir", Subject: dir, Err: err}
		}
		db, err := crawldb.Open(dir, &crawldb.Options{SyncInterval: -1})
		if err != nil {
			return nil, &Error{Op: "state dir", Subject: dir, Err: err}
		}
		s.state.inner = db
	}
	return s, nil
}

func (s *shards) subject(shard int) string { return s.prefix + ".shard." + strconv.Itoa(shard) }

// ready reports whether this node is in good standing.
func (s *shards) ready() bool { return !s.n.crashed.Load() && s.n.members.standing() }

// local implements Splitter.Local: this node owns host's shard and may
// contact it.
func (s *shards) local(host string) bool {
	sh := s.n.ring.HostShard(host)
	if !s.ready() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st[sh].owned && !s.st[sh].releasing
}

// enter implements crawlkit.HostGate.
func (s *shards) enter(rawURL string) (func(), bool) {
	sh := s.n.ring.HostShard(frontier.HostKey(rawURL))
	if !s.ready() {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.st[sh].owned || s.st[sh].releasing {
		return nil, false
	}
	// A URL no longer pending is a second copy in the frontier (its
	// shard left this node and came back with its queue): done already.
	q := &crawlkit.Lookup{Pending: []string{rawURL}}
	if err := s.state.inner.Lookup(context.Background(), q); err != nil || !q.Found[0] {
		return nil, false
	}
	s.st[sh].inflight++
	return func() {
		s.mu.Lock()
		s.st[sh].inflight--
		s.cond.Broadcast()
		s.mu.Unlock()
	}, true
}

// moving counts the shards in transition: owned and given to another
// node, or given to this one and not claimed yet. The cluster is not idle
// while any moves.
func (s *shards) moving() int {
	self := s.n.opts.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range s.st {
		if s.st[i].owned != (s.n.ring.ShardOwner(i) == self) {
			n++
		}
	}
	return n
}

// Owned returns the number of shards this node owns.
func (s *shards) owned() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range s.st {
		if s.st[i].owned {
			n++
		}
	}
	return n
}

// run moves shards towards the Ring's assignment until ctx ends.
func (s *shards) run(ctx context.Context) {
	tick := time.NewTicker(min(s.n.opts.StatusInterval, s.gap/2+time.Millisecond))
	defer tick.Stop()
	for {
		_, changed := s.n.members.current()
		s.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// step releases the shards given to others and claims those given to
// this node that are free.
func (s *shards) step(ctx context.Context) {
	self := s.n.opts.Name
	if !s.ready() {
		// Another node may take the shards over from now on: claim them
		// again, through their journals, once back in standing.
		// Its journal position is kept: a lease in flight may still
		// record its outcome, which fails if another node wrote since.
		s.mu.Lock()
		lost := 0
		for i := range s.st {
			if s.st[i].owned {
				s.st[i].owned = false
				lost++
			}
		}
		s.mu.Unlock()
		if lost > 0 {
			s.n.log.Warn("cluster: lost standing; dropping shards", "node", self, "shards", lost)
		}
		return
	}
	var release, claim []int
	s.mu.Lock()
	for i := range s.st {
		mine := s.n.ring.ShardOwner(i) == self
		switch {
		case s.st[i].owned && !mine:
			release = append(release, i)
		case !s.st[i].owned && !mine && s.st[i].lastSeq > 0 && !s.st[i].releasing:
			// Claimed by this node before it lost standing, and given
			// to another since: the journal still names this node, so
			// nobody else may claim it until it is released.
			release = append(release, i)
		case !s.st[i].owned && mine:
			claim = append(claim, i)
		}
	}
	s.mu.Unlock()
	if len(release) > 0 {
		s.release(ctx, release)
	}
	if len(claim) > 0 {
		s.claim(ctx, claim)
	}
}

// release gives shards up: no new contacts, requests in flight finished
// and committed, then a release record in each journal.
func (s *shards) release(ctx context.Context, list []int) {
	// The shards' fingerprints leave with them.
	s.writeQueued(ctx)
	s.mu.Lock()
	for _, i := range list {
		s.st[i].releasing = true
	}
	for {
		busy := false
		for _, i := range list {
			busy = busy || s.st[i].inflight > 0
		}
		if !busy || ctx.Err() != nil {
			break
		}
		s.cond.Wait()
	}
	s.mu.Unlock()
	s.writeM.Lock()
	defer s.writeM.Unlock()
	// Their log entries go to their journals first: the next owner
	// needs nothing of this node's log.
	s.fold(ctx, list)
	errs := make([]error, len(list))
	parallel(len(list), func(k int) {
		errs[k] = s.write(ctx, list[k], &shardRecord{kind: recRelease}, s.slotSeq(list[k]))
	})
	done := 0
	s.mu.Lock()
	for k, i := range list {
		if err := errs[k]; err == nil || errors.Is(err, errFenced) {
			s.st[i] = shardSlot{}
			done++
		} else {
			s.st[i].releasing = false // try again at the next step
		}
	}
	s.mu.Unlock()
	s.n.log.Info("cluster: released shards", "node", s.n.opts.Name, "shards", done)
}

var errFenced = errors.New("cluster: shard journal moved on: another node owns the shard")

// write appends r to shard i's journal, expecting last as the subject's
// last sequence; it returns the record's sequence. A failed expectation is
// errFenced.
func (s *shards) write(ctx context.Context, i int, r *shardRecord, last uint64) error {
	if s.n.crashed.Load() {
		return &Error{Op: "journal", Subject: s.subject(i), Err: ErrClosed}
	}
	r.owner, r.inc = s.n.opts.Name, s.n.members.Inc()
	data, err := appendShardRecord(nil, r)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(s.subject(i))
	msg.Data = data
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
	seq, err := s.publish(ctx, msg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.st[i].lastSeq = seq
	s.mu.Unlock()
	return nil
}

// publish stores msg in the stream, retrying while this node is in
// standing (20 times at most, backing off to 1.6 s), and returns its
// sequence. A failed expectation of its headers is errFenced.
func (s *shards) publish(ctx context.Context, msg *nats.Msg) (uint64, error) {
	for attempt := 0; ; attempt++ {
		wctx, cancel := context.WithTimeout(ctx, s.n.opts.RequestTimeout)
		ack, err := s.js.PublishMsg(wctx, msg)
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
			return 0, errFenced
		}
		if ctx.Err() != nil || !s.ready() || attempt >= 20 {
			return 0, &Error{Op: "journal", Subject: msg.Subject, Err: err}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond << min(attempt, 5)):
		}
	}
}

// claim takes the free shards of list: their journals are replayed, a
// claim record written, and their state handed to the crawler.
func (s *shards) claim(ctx context.Context, list []int) {
	v, _ := s.n.members.current()
	now := time.Now()
	type cand struct {
		shard int
		last  uint64
		// revoke is the node whose incarnation inc the journal names
		// as the owner: its log must take no more of the shard.
		revoke string
		inc    uint64
	}
	var cands []cand
	lastMsgs := make([]*jetstream.RawStreamMsg, len(list))
	errs := make([]error, len(list))
	parallel(len(list), func(k int) {
		lastMsgs[k], errs[k] = s.stream.GetLastMsgForSubject(ctx, s.subject(list[k]))
	})
	for k, i := range list {
		m, err := lastMsgs[k], errs[k]
		var last uint64
		var revoke string
		var inc uint64
		free := false
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			free = true
		case err != nil:
			continue
		default:
			last = m.Sequence
			r, derr := decodeShardRecord(m.Data)
			switch {
			case derr != nil:
				s.n.log.Error("cluster: unreadable journal record", "shard", i, "seq", last, "err", derr)
				continue
			case r.owner == s.n.opts.Name && r.inc == s.n.members.Inc() && r.kind != recRelease:
				free = true // its own, from before it lost standing
			case r.kind == recRelease || !contains(v.Members, r.owner) || r.owner == s.n.opts.Name:
				// Released, or written by a node the view no longer
				// lists (dead, or this node's previous life): free once
				// the politeness gap has passed since it was seen so.
				at, ok := s.freeAt[i]
				if !ok {
					s.freeAt[i] = now
					at = now
				}
				free = now.Sub(at) >= s.gap
			}
			if r.kind != recRelease && r.owner != s.n.opts.Name {
				revoke, inc = r.owner, r.inc
			}
		}
		if free {
			cands = append(cands, cand{i, last, revoke, inc})
		}
	}
	if len(cands) == 0 {
		return
	}
	// Revoked before the replay: the entries the old owner's log takes
	// until then are replayed, none after.
	rerrs := make([]error, len(cands))
	parallel(len(cands), func(k int) {
		c := cands[k]
		if c.revoke == "" {
			return
		}
		data := appendRevokeRecord(nil, &revokeRecord{owner: s.n.opts.Name, inc: s.n.members.Inc(), target: c.inc, shard: c.shard})
		wctx, cancel := context.WithTimeout(ctx, s.n.opts.RequestTimeout)
		_, rerrs[k] = s.js.Publish(wctx, s.ownSubject(c.revoke), data)
		cancel()
	})
	kept := cands[:0]
	for k, c := range cands {
		if rerrs[k] == nil {
			kept = append(kept, c)
		}
	}
	if cands = kept; len(cands) == 0 {
		return
	}
	last := map[int]uint64{}
	for _, c := range cands {
		if c.last > 0 {
			last[c.shard] = c.last
		}
	}
	images := map[int]*shardImage{}
	if len(last) > 0 {
		var err error
		if images, _, err = s.replay(ctx, last); err != nil {
			s.n.log.Warn("cluster: replaying journals", "node", s.n.opts.Name, "shards", len(last), "err", err)
			return
		}
		for _, im := range images {
			im.settle()
		}
	}
	claimed := 0
	var adopt []crawlkit.Pending
	s.writeM.Lock()
	werrs := make([]error, len(cands))
	parallel(len(cands), func(k int) {
		// A failure means someone wrote meanwhile: look again next time.
		werrs[k] = s.write(ctx, cands[k].shard, &shardRecord{kind: recClaim}, cands[k].last)
	})
	for k, c := range cands {
		if werrs[k] != nil {
			continue
		}
		im := images[c.shard]
		if im == nil {
			im = newShardImage()
		}
		pend, err := s.state.adopt(ctx, im)
		if err == nil && s.n.content != nil {
			err = s.n.content.adopt(im.fps)
		}
		if err == nil && len(im.out) > 0 {
			// The previous owner's links to other nodes may have died
			// in its splitter: send them again (their owners' URL-seen
			// sets drop those that arrived).
			if err = s.n.splitter.Send(ctx, im.out); err == nil {
				s.resent.Add(uint64(len(im.out)))
			}
		}
		if err != nil {
			// The claim record is written: give the shard up again.
			s.n.log.Error("cluster: adopting a shard", "shard", c.shard, "err", err)
			_ = s.write(ctx, c.shard, &shardRecord{kind: recRelease}, s.slotSeq(c.shard))
			s.mu.Lock()
			s.st[c.shard] = shardSlot{}
			s.mu.Unlock()
			continue
		}
		if im.logged > 0 {
			// The image holds entries of other nodes' logs: written
			// as a snapshot now, so that those logs may let them go.
			if err := s.snapshotImage(ctx, c.shard, im); err != nil && !s.n.crashed.Load() {
				s.n.log.Warn("cluster: snapshotting a claimed shard", "shard", c.shard, "err", err)
			}
		} else if im.stale > 0 {
			// Its last owner died between writing a snapshot and
			// purging the records before it: purge them now.
			if err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(s.subject(c.shard)), jetstream.WithPurgeSequence(im.stale)); err != nil {
				s.n.log.Warn("cluster: purging a journal before its snapshot", "shard", c.shard, "err", err)
			}
		}
		s.mu.Lock()
		s.st[c.shard].owned = true
		s.st[c.shard].records = im.records
		// A journal its last owner left long (it died while compacting,
		// or before) is compacted now, not at the next page.
		s.compactDue(c.shard)
		delete(s.freeAt, c.shard)
		s.mu.Unlock()
		adopt = append(adopt, pend...)
		claimed++
	}
	s.writeM.Unlock()
	if claimed > 0 {
		s.n.log.Info("cluster: claimed shards", "node", s.n.opts.Name, "shards", claimed, "pending", len(adopt))
	}
	if len(adopt) > 0 {
		if c := s.crawler(); c != nil {
			if err := c.AddPending(ctx, adopt); err != nil {
				s.n.log.Error("cluster: queueing adopted URLs", "node", s.n.opts.Name, "err", err)
			}
		}
	}
}

// slotSeq returns the last journal sequence this node wrote to shard i.
func (s *shards) slotSeq(i int) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st[i].lastSeq
}

// parallel runs f(0..n-1) on up to 16 goroutines: claims and releases
// of many shards are one round trip each.
func parallel(n int, f func(k int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for k := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(k)
		})
	}
	wg.Wait()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// replay reads the journals of the shards in last, each up to its
// sequence there, and their entries of the node logs into images, with
// one consumer (deleted after). The images hold log entries not settled
// yet (shardImage.settle).
func (s *shards) replay(ctx context.Context, last map[int]uint64) (map[int]*shardImage, uint64, error) {
	images := map[int]*shardImage{}
	for i := range last {
		images[i] = newShardImage()
	}
	read, err := s.replayInto(ctx, images, last, 0)
	return images, read, err
}

// replayConsumerCreated, when set (by tests), runs right after replayInto
// has created its consumer.
var replayConsumerCreated func()

// replayInto applies to images the records of their shards' journals up
// to last, and their entries of the node logs, from the stream sequence
// start (0: from the beginning). It returns the last stream sequence it
// read.
func (s *shards) replayInto(ctx context.Context, images map[int]*shardImage, last map[int]uint64, start uint64) (read uint64, err error) {
	subjects := make([]string, 0, len(last)+1)
	bySubject := map[string]int{}
	for i := range last {
		subj := s.subject(i)
		subjects = append(subjects, subj)
		bySubject[subj] = i
	}
	logs := s.prefix + ".log."
	subjects = append(subjects, logs+">")
	cc := jetstream.ConsumerConfig{
		FilterSubjects:    subjects,
		AckPolicy:         jetstream.AckNonePolicy,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: time.Minute,
	}
	if start > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := s.stream.CreateConsumer(ctx, cc)
	if err != nil {
		return read, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), s.n.opts.RequestTimeout)
		_ = s.stream.DeleteConsumer(dctx, cons.CachedInfo().Name)
		cancel()
	}()
	if replayConsumerCreated != nil {
		replayConsumerCreated()
	}
	left := len(last)
	// Read what the journals and logs held when the consumer was made, and
	// no more: a fetch of more than is stored waits its whole MaxWait.
	// Without waiting at all, since some of it may be gone by the time it
	// is read: a live node purges the head of its log as its shards fold
	// it, and a Fetch asking for the purged records waited RequestTimeout,
	// which made a takeover 7 s instead of 2.
	pending := cons.CachedInfo().NumPending
	for pending > 0 {
		batch, err := cons.FetchNoWait(int(min(pending, 256)))
		if err != nil {
			return read, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return read, err
			}
			read = max(read, md.Sequence.Stream)
			if strings.HasPrefix(m.Subject(), logs) {
				g, err := decodeGroupRecord(m.Data())
				if err != nil {
					return read, fmt.Errorf("log record %d: %w", md.Sequence.Stream, err)
				}
				for _, e := range g.entries {
					if im := images[e.shard]; im != nil {
						im.applyEntry(g.owner, g.inc, md.Sequence.Stream, e.part)
					}
				}
				continue
			}
			i, ok := bySubject[m.Subject()]
			if !ok || md.Sequence.Stream > last[i] {
				continue // written after the claim began: that claim fails
			}
			r, err := decodeShardRecord(m.Data())
			if err != nil {
				return read, fmt.Errorf("shard %d record %d: %w", i, md.Sequence.Stream, err)
			}
			images[i].apply(r, md.Sequence.Stream)
			if md.Sequence.Stream == last[i] {
				left--
			}
		}
		if err := batch.Error(); err != nil {
			return read, err
		}
		if got == 0 {
			break
		}
		pending -= min(pending, uint64(got))
	}
	if left > 0 {
		return read, fmt.Errorf("journal replay: %d shards short of their last record", left)
	}
	return read, nil
}

// ShardState is the crawlkit.State of a node with membership (Node.Configure
// sets it): the crawler's commits go to an in-memory state (a
// crawlkit.MemState: about 200 bytes per pending URL, 8 per URL seen) and,
// split by host shard, to the node's log, the commits staged within
// Options.CommitDelay in one record (it is a crawlkit.Stager), from which
// they are folded into the journals of the shards this node owns. A
// commit returns once its record is stored. A shard this node claims adds
// its journal's image to the in-memory state and its pending URLs to the
// crawler (crawlkit.Crawler.AddPending). URLs added to a shard this node lost in
// the meantime go to the shard's new owner through the host splitter.
//
// Progress counters (pages, time, the durable sinks' positions), URL
// rules and registrable-domain records stay with the node. The first two
// survive a restart when the crawler's Config had a State of its own when
// Node.Configure was called (a crawldb in the node's output directory):
// the node keeps them there, writing them before each commit's log
// record, and a restarted node's crawl starts from them, so
// Config.MaxPages and a time limit count across restarts and the sinks
// go on from their positions. That State holds nothing else; pending
// URLs it may hold from another crawl are ignored. Safe for concurrent
// use.
type ShardState struct {
	s     *shards
	inner crawlkit.State // a crawlkit.MemState, or a crawldb.DB with Options.StateDir
	// own, if not nil, keeps the node's progress and URL rules across
	// restarts: the State Config had before Configure.
	own crawlkit.State

	mu     sync.Mutex
	loaded bool
}

var _ crawlkit.State = (*ShardState)(nil)

// Load implements crawlkit.State: the pending URLs of the shards claimed
// so far. Shards claimed later are handed to the crawler with AddPending.
func (st *ShardState) Load(ctx context.Context, each func(crawlkit.Pending) error) ([]byte, error) {
	st.s.writeM.Lock() // no claim half-adopted meanwhile
	defer st.s.writeM.Unlock()
	st.mu.Lock()
	st.loaded = true
	st.mu.Unlock()
	progress, err := st.inner.Load(ctx, each)
	if err != nil || st.own == nil {
		return progress, err
	}
	// The journals hold the pending URLs; the node's own State, its
	// progress.
	return st.own.Load(ctx, func(crawlkit.Pending) error { return nil })
}

// Lookup implements crawlkit.State.
func (st *ShardState) Lookup(ctx context.Context, q *crawlkit.Lookup) error {
	return st.inner.Lookup(ctx, q)
}

// Rules implements crawlkit.RuleStorer: the URL rules the node's own
// State kept, or those committed since the start.
func (st *ShardState) Rules() ([]byte, error) {
	if rs, ok := st.own.(crawlkit.RuleStorer); ok {
		return rs.Rules()
	}
	if rs, ok := st.inner.(crawlkit.RuleStorer); ok {
		return rs.Rules()
	}
	return nil, nil
}

// Close implements crawlkit.State. The node's own State is its caller's
// to close.
func (st *ShardState) Close() error { return st.inner.Close() }

// diskShardState is a ShardState whose local copy is a crawl database
// (Options.StateDir): the crawler's frontier queues go to the same
// directory, so pending URLs take disk, not memory.
type diskShardState struct{ *ShardState }

// QueueStore implements crawlkit.QueueStorer.
func (d diskShardState) QueueStore() (frontier.Store, error) {
	return d.inner.(crawlkit.QueueStorer).QueueStore()
}

// is reports whether s is this ShardState, as crawlState gives it.
func (st *ShardState) is(s crawlkit.State) bool {
	d, ok := s.(diskShardState)
	return s == crawlkit.State(st) || ok && d.ShardState == st
}

// crawlState is the State Configure gives the crawler.
func (st *ShardState) crawlState() crawlkit.State {
	if _, ok := st.inner.(crawlkit.QueueStorer); ok {
		return diskShardState{st}
	}
	return st
}

// Commit implements crawlkit.State: Stage, then the wait.
func (st *ShardState) Commit(ctx context.Context, t *crawlkit.Txn) error {
	wait, err := st.Stage(ctx, t)
	if err != nil {
		return err
	}
	return wait(ctx)
}

// Stage implements crawlkit.Stager: t is split by host shard, applied in
// memory, and its parts queued for the node's log writer, which writes
// the parts of the Txns staged meanwhile as one record; wait returns once
// it is stored. The parts of shards this node does not own are not
// journaled: their new URLs go to the owner.
func (st *ShardState) Stage(ctx context.Context, t *crawlkit.Txn) (func(context.Context) error, error) {
	s := st.s
	if st.own != nil && (t.Progress != nil || t.Rules != nil) {
		// Before the log: a node killed between the two finds its
		// sinks' positions past the page's records and fetches the page
		// again, rather than the page done and its records cut off.
		if err := st.own.Commit(ctx, &crawlkit.Txn{Progress: t.Progress, Rules: t.Rules}); err != nil {
			return nil, err
		}
	}
	parts := map[int]*shardRecord{}
	part := func(i int) *shardRecord {
		r := parts[i]
		if r == nil {
			r = &shardRecord{kind: recData}
			parts[i] = r
		}
		return r
	}
	shard := func(rawURL string) int { return s.n.ring.HostShard(frontier.HostKey(rawURL)) }
	for _, p := range t.Add {
		r := part(shard(p.URL.URL))
		r.txn.Add = append(r.txn.Add, p)
	}
	for _, p := range t.Put {
		r := part(shard(p.URL.URL))
		r.txn.Put = append(r.txn.Put, p)
	}
	doneShard := -1 // the shard of the part recording a page done
	for _, u := range t.Done {
		doneShard = shard(u)
		r := part(doneShard)
		r.txn.Done = append(r.txn.Done, u)
	}
	for _, d := range t.Keys {
		host, ok := strings.CutPrefix(d.Key, "h:")
		if !ok {
			continue // registrable-domain records stay with the node
		}
		r := part(s.n.ring.HostShard(host))
		r.txn.Keys = append(r.txn.Keys, d)
	}
	var lost []frontier.URL
	dropped := map[string]bool{}
	flush := false // URLs for other nodes wait in the splitter with no stored copy
	s.mu.Lock()
	for i, r := range parts {
		if s.st[i].owned || s.st[i].lastSeq > 0 {
			continue // owned, or owned until this node lost standing
		}
		// Not this node's shard: its new URLs go to the owner; the rest
		// of its part is the owner's to decide.
		for _, p := range r.txn.Add {
			lost = append(lost, p.URL)
			dropped[p.URL.URL] = true
		}
		delete(parts, i)
	}
	s.mu.Unlock()
	if len(t.Sent) > 0 {
		// The links of the page that went to other nodes may still wait
		// in the host splitter: they ride in the page's record as its
		// outbox, and a new owner of the page's shard sends them again,
		// so a kill loses none.
		r := parts[doneShard] // nil if not this node's
		if r == nil {
			for _, p := range parts {
				r = p
				break
			}
		}
		if r != nil {
			r.out = append(r.out, t.Sent...)
		} else {
			flush = true
		}
	}
	if len(dropped) > 0 {
		keep := *t
		keep.Add = nil
		for _, p := range t.Add {
			if !dropped[p.URL.URL] {
				keep.Add = append(keep.Add, p)
			}
		}
		t = &keep
	}
	if err := st.inner.Commit(ctx, t); err != nil {
		return nil, err
	}
	if len(lost) > 0 {
		if err := s.n.splitter.Send(ctx, lost); err != nil {
			return nil, err
		}
		flush = true
	}
	if flush {
		// Stored by their owners before the commit returns, as the
		// journal would have kept them: a kill now loses none. If they
		// cannot be, the commit fails.
		if err := s.n.splitter.flushStored(ctx, s.n.opts.RequestTimeout); err != nil {
			return nil, err
		}
	}
	if len(parts) == 0 {
		return func(context.Context) error { return nil }, nil
	}
	return s.stage(parts), nil
}

// adopt adds a claimed shard's image to the in-memory state and returns
// its pending URLs for the crawler, or none if the crawler will load them.
// Called with writeM held.
func (st *ShardState) adopt(ctx context.Context, im *shardImage) ([]crawlkit.Pending, error) {
	t := &crawlkit.Txn{}
	var done []string
	for _, u := range im.seen {
		p, ok := im.pending[u]
		if !ok {
			p = crawlkit.Pending{URL: frontier.URL{URL: u}}
			done = append(done, u)
		}
		t.Add = append(t.Add, p)
	}
	t.Done = done
	if len(im.keys) > 0 {
		q := &crawlkit.Lookup{}
		for k := range im.keys {
			q.Keys = append(q.Keys, k)
		}
		if err := st.inner.Lookup(ctx, q); err != nil {
			return nil, err
		}
		for i, k := range q.Keys {
			want, have := im.keys[k], q.Records[i]
			d := crawlkit.KeyDelta{Key: k, Admitted: want.Admitted - have.Admitted, Pages: want.Pages - have.Pages,
				Alike: want.Alike - have.Alike, Next: want.Next, Gap: want.Gap}
			b := want.Backoff
			d.Backoff = &b
			t.Keys = append(t.Keys, d)
		}
	}
	if err := st.inner.Commit(ctx, t); err != nil {
		return nil, err
	}
	st.mu.Lock()
	loaded := st.loaded
	st.mu.Unlock()
	if !loaded {
		return nil, nil
	}
	out := make([]crawlkit.Pending, 0, len(im.pending))
	for _, p := range im.pending {
		out = append(out, p)
	}
	return out, nil
}

// fpFlushEvery is how long a content fingerprint may wait for a log record
// to ride in before one is written for it: what a member killed meanwhile
// takes with it are duplicates that go unrecognised, not pages.
const fpFlushEvery = time.Second

// fpBufMax bounds the fingerprints waiting to be journaled; past it the
// fingerprints of some other shard are dropped (duplicates unrecognised
// after a takeover).
const fpBufMax = 1 << 16

// noteFingerprint queues a content fingerprint this node recorded for its
// partition, to be journaled with its shard, so that the shard's next
// owner knows it (Content's fpStore.onNew).
func (s *shards) noteFingerprint(fp uint64, url string) {
	i := s.n.ring.FingerprintShard(fp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fpBuf == nil {
		s.fpBuf = map[int][]fpEntry{}
	}
	s.fpBuf[i] = append(s.fpBuf[i], fpEntry{fp, url})
	s.fpN++
	if s.fpN > fpBufMax {
		for j, b := range s.fpBuf {
			if j != i {
				s.fpN -= len(b)
				delete(s.fpBuf, j)
				break
			}
		}
	}
}
