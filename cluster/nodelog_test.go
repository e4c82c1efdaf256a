package cluster

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/nats-io/nats.go/jetstream"
)

func groupSamples() []*groupRecord {
	var parts []*shardRecord
	for _, r := range journalSamples() {
		if r.kind == recData && r.folded == 0 {
			parts = append(parts, r)
		}
	}
	return []*groupRecord{
		{owner: "n0", inc: 3},
		{owner: "n1", inc: 1 << 62, entries: []groupEntry{{0, parts[0]}, {255, parts[1]}, {1 << 20, parts[1]}}},
	}
}

// TestGroupRecords round-trips group and revoke records; every cut of one
// fails to decode, and a part naming another writer than its group is
// refused.
func TestGroupRecords(t *testing.T) {
	for _, g := range groupSamples() {
		data, err := appendGroupRecord(nil, g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeGroupRecord(data)
		if err != nil {
			t.Fatalf("group of %d entries: %v", len(g.entries), err)
		}
		if got.owner != g.owner || got.inc != g.inc || len(got.entries) != len(g.entries) {
			t.Fatalf("got %+v, want %+v", got, g)
		}
		for k, e := range got.entries {
			w := g.entries[k]
			if e.shard != w.shard || e.part.owner != g.owner || e.part.inc != g.inc ||
				len(e.part.txn.Add) != len(w.part.txn.Add) || len(e.part.fps) != len(w.part.fps) || len(e.part.out) != len(w.part.out) {
				t.Errorf("entry %d: got %+v, want %+v", k, e.part, w.part)
			}
		}
		for cut := range len(data) {
			if _, err := decodeGroupRecord(data[:cut]); err == nil {
				t.Errorf("group record cut at %d of %d bytes decoded", cut, len(data))
			}
		}
	}
	// An entry written by someone else.
	part, _ := appendShardRecord(nil, &shardRecord{kind: recData, owner: "n9", inc: 3})
	data := append([]byte{recGroup, 3, 2, 'n', '0', 1, 5, byte(len(part))}, part...)
	if _, err := decodeGroupRecord(data); err == nil {
		t.Error("a group record whose entry names another writer decoded")
	}
	r := &revokeRecord{owner: "n2", inc: 8, target: 1 << 40, shard: 17}
	enc := appendRevokeRecord(nil, r)
	got, err := decodeRevokeRecord(enc)
	if err != nil || *got != *r {
		t.Fatalf("revoke record: got %+v, %v; want %+v", got, err, r)
	}
	for cut := range len(enc) {
		if _, err := decodeRevokeRecord(enc[:cut]); err == nil {
			t.Errorf("revoke record cut at %d of %d bytes decoded", cut, len(enc))
		}
	}
}

// TestLogReplay replays a shard's journal interleaved with its entries of
// node logs, as a claim reads them in stream order: an entry counts once
// whether or not a fold holds it, in its place among the records, and
// only when its writer owned the shard.
func TestLogReplay(t *testing.T) {
	add := func(u string) *shardRecord {
		return &shardRecord{kind: recData, txn: crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: u}}},
			Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 1}}}}
	}
	done := func(u string) *shardRecord {
		return &shardRecord{kind: recData, txn: crawlkit.Txn{Done: []string{u}}}
	}
	// step is a journal record (rec) or a log entry (entry, by who).
	type step struct {
		rec   *shardRecord
		entry *shardRecord
		who   string // "n0.1": writer and incarnation
	}
	claim := func(who string) step {
		n, inc := split(who)
		return step{rec: &shardRecord{kind: recClaim, owner: n, inc: inc}}
	}
	fold := func(who string, upto uint64, parts ...*shardRecord) step {
		n, inc := split(who)
		r := &shardRecord{kind: recData, owner: n, inc: inc, folded: upto}
		for _, p := range parts {
			mergeInto(r, p)
		}
		return step{rec: r}
	}
	entry := func(who string, p *shardRecord) step { return step{entry: p, who: who} }
	tests := []struct {
		name     string
		steps    []step // stream sequence = index + 1
		pending  []string
		seen     int
		admitted int64
	}{
		{"entries after the claim", []step{claim("n0.1"), entry("n0.1", add("u1")), entry("n0.1", add("u2"))},
			[]string{"u1", "u2"}, 2, 2},
		{"a fold holds the entries before it", []step{claim("n0.1"), entry("n0.1", add("u1")), entry("n0.1", add("u2")),
			fold("n0.1", 3, add("u1"), add("u2"))}, []string{"u1", "u2"}, 2, 2},
		{"entries after the fold it holds apply after it", []step{claim("n0.1"), entry("n0.1", add("u1")),
			entry("n0.1", done("u1")), fold("n0.1", 2, add("u1"))}, nil, 1, 1},
		{"a writer that does not own the shard", []step{claim("n0.1"), entry("n1.1", add("u1")), entry("n0.2", add("u2")),
			entry("n0.1", add("u3"))}, []string{"u3"}, 1, 1},
		{"the old owner's entries before a claim count, after it not", []step{claim("n0.1"), entry("n0.1", add("u1")),
			claim("n1.1"), entry("n0.1", add("u2")), entry("n1.1", add("u3"))}, []string{"u1", "u3"}, 2, 2},
		{"a release drops the entries after it", []step{claim("n0.1"), entry("n0.1", add("u1")),
			{rec: &shardRecord{kind: recRelease, owner: "n0", inc: 1}}, entry("n0.1", add("u2"))}, []string{"u1"}, 1, 1},
		{"a snapshot stands for the entries before it", []step{claim("n0.1"), entry("n0.1", add("u1")),
			{rec: &shardRecord{kind: recSnapshot, owner: "n0", inc: 1, flags: snapFirst | snapFinal,
				txn: crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: "u1"}}}, Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 1}}}}},
			entry("n0.1", add("u2"))}, []string{"u1", "u2"}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := newShardImage()
			for k, st := range tt.steps {
				seq := uint64(k + 1)
				if st.rec != nil {
					im.apply(st.rec, seq)
					continue
				}
				n, inc := split(st.who)
				im.applyEntry(n, inc, seq, st.entry)
			}
			im.settle()
			var pending []string
			for u := range im.pending {
				pending = append(pending, u)
			}
			slices.Sort(pending)
			if !slices.Equal(pending, tt.pending) || len(im.seen) != tt.seen || im.keys["h:a.test"].Admitted != tt.admitted {
				t.Errorf("pending %v, %d seen, %d admitted; want %v, %d, %d",
					pending, len(im.seen), im.keys["h:a.test"].Admitted, tt.pending, tt.seen, tt.admitted)
			}
		})
	}
}

// split parses "name.inc".
func split(who string) (string, uint64) {
	for i := range who {
		if who[i] == '.' {
			inc, _ := strconv.ParseUint(who[i+1:], 10, 64)
			return who[:i], inc
		}
	}
	return who, 0
}

// TestMembersRevokeFences: once a claimer has revoked a shard of a
// member, the member's log takes none of the shard's changes: its next
// group record fails, the member reads the revoke, drops the shard and
// sends the shard's new URLs to its owner; its other shards' changes are
// written.
func TestMembersRevokeFences(t *testing.T) {
	_, _, tc := memberSetup(t, nil)
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 2)
	nd := tc.node("n0")
	s := nd.shards
	var hosts []string
	var shards []int
	for i := 0; len(hosts) < 2; i++ {
		h := "revoked" + strconv.Itoa(i) + ".sim.test"
		sh := nd.ring.HostShard(h)
		s.mu.Lock()
		owned := s.st[sh].owned
		s.mu.Unlock()
		if owned && !slices.Contains(shards, sh) {
			hosts, shards = append(hosts, h), append(shards, sh)
		}
	}
	ctx := context.Background()
	data := appendRevokeRecord(nil, &revokeRecord{owner: "n9", inc: 1, target: nd.members.Inc(), shard: shards[0]})
	ack, err := s.js.Publish(ctx, s.ownSubject("n0"), data)
	if err != nil {
		t.Fatal(err)
	}
	sent := nd.Splitter().Stats().URLs
	txn := &crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://" + hosts[0] + "/a"}},
		{URL: frontier.URL{URL: "http://" + hosts[1] + "/b"}}}}
	if err := s.state.Commit(ctx, txn); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	owned := [2]bool{s.st[shards[0]].owned, s.st[shards[1]].owned}
	s.mu.Unlock()
	if owned != [2]bool{false, true} {
		t.Errorf("after the revoke of shard %d: owned %v, want the revoked one dropped only", shards[0], owned)
	}
	if got := nd.Splitter().Stats().URLs - sent; got < 1 {
		t.Errorf("%d URLs sent to other members, want the revoked shard's", got)
	}
	// No entry for the revoked shard after the revoke; the other's is
	// written.
	found := map[int]bool{}
	for seq := ack.Sequence + 1; ; seq++ {
		m, err := s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(s.logSubject()))
		if err != nil {
			break
		}
		seq = m.Sequence
		g, err := decodeGroupRecord(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range g.entries {
			for _, a := range e.part.txn.Add {
				if a.URL.URL == txn.Add[0].URL.URL || a.URL.URL == txn.Add[1].URL.URL {
					found[e.shard] = true
				}
			}
		}
	}
	if found[shards[0]] || !found[shards[1]] {
		t.Errorf("log entries after the revoke: %v; want shard %d's only", found, shards[1])
	}
}

// FuzzDecodeGroupRecord: a log record read back from the stream must
// never panic the reader, and what it accepts encodes back to a record
// that decodes the same.
func FuzzDecodeGroupRecord(f *testing.F) {
	for _, g := range groupSamples() {
		data, err := appendGroupRecord(nil, g)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(appendRevokeRecord(nil, &revokeRecord{owner: "n1", inc: 2, target: 3, shard: 4}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := decodeRevokeRecord(data); err == nil {
			if back, err := decodeRevokeRecord(appendRevokeRecord(nil, r)); err != nil || *back != *r {
				t.Fatalf("revoke record %+v re-encoded decodes to %+v, %v", r, back, err)
			}
		}
		g, err := decodeGroupRecord(data)
		if err != nil {
			return
		}
		again, err := appendGroupRecord(nil, g)
		if err != nil {
			t.Fatalf("decoded group record does not encode: %v", err)
		}
		back, err := decodeGroupRecord(again)
		if err != nil || len(back.entries) != len(g.entries) || back.owner != g.owner || back.inc != g.inc {
			t.Fatalf("group record re-encoded decodes to %+v, %v", back, err)
		}
	})
}

// TestMembersLogsPurged: a member's log holds only what its shards have
// not folded, and the log of a member that died is purged once every
// shard it touched is past it (its claimers snapshot those shards).
func TestMembersLogsPurged(t *testing.T) {
	// n2 never folds: all it committed is in its log when it dies.
	web, ref, tc := memberSetup(t, func(name string, o *Options) {
		o.FoldEvery = 100 * time.Millisecond
		if name == "n2" {
			o.FoldEvery = time.Hour
		}
	})
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 5)
	dead := tc.node("n2").shards.logSubject()
	s := tc.node("n0").shards
	ctx := context.Background()
	counts := func() map[string]uint64 {
		info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(s.prefix+".log.>"))
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Subjects
	}
	before := counts()
	t.Logf("logs before the crash: %v", before)
	if before[dead] == 0 {
		t.Fatal("the member to crash has an empty log")
	}
	crashAndCheck(t, tc, web, ref, "n2")
	// Swept within 3 FoldEvery and a Lease of its last write, then a
	// fold.
	var left map[string]uint64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		left = counts()
		total := uint64(0)
		for _, n := range left {
			total += n
		}
		if total == 0 {
			return
		}
	}
	t.Errorf("log records left: %v (dead member's log %s)", left, dead)
}
