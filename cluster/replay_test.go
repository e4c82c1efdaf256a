package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestReplayLogPurgedWhileRead: a claim replays the journals and node logs
// the stream held when its consumer was made; a live node may purge the
// head of its log meanwhile. The replay reads what is left at once. It
// used to ask for the purged records too and wait RequestTimeout for
// them, which made a takeover 7 s instead of 2.
func TestReplayLogPurgedWhileRead(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 20, ChangePeriods: []time.Duration{0}})
	defer web.Close()
	srv := startTestServer(t)
	tc := newTestCluster(t, web, 1, func(string) Options {
		return Options{NATSURL: srv.ClientURL(), NATS: natsOptions(), Shards: 16, Lease: 2 * time.Second,
			HandoffGap: 100 * time.Millisecond, RequestTimeout: 3 * time.Second}
	})
	tc.start("n0", "")
	n := tc.node("n0")
	for deadline := time.Now().Add(10 * time.Second); n.OwnedShards() < n.ring.Shards(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("n0 owns %d of %d shards", n.OwnedShards(), n.ring.Shards())
		}
	}
	s := n.shards
	ctx := context.Background()
	// A log of a node that is still alive: 300 records, purged once the
	// replay has counted them.
	ghost := s.prefix + ".log.ghost.1"
	for range 300 {
		msg := nats.NewMsg(ghost)
		msg.Data = []byte("x")
		if _, err := s.publish(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	replayConsumerCreated = func() {
		if err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(ghost)); err != nil {
			t.Error(err)
		}
	}
	defer func() { replayConsumerCreated = nil }()
	start := time.Now()
	if _, _, err := s.replay(ctx, map[int]uint64{0: s.slotSeq(0)}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the replay took %v: it waited for purged records", d)
	}
}
