package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/statetest"
)

// TestShardStateConformance runs the State suite on the ShardState of a
// lone member, which owns every shard: what the suite commits goes
// through its log and its journals.
func TestShardStateConformance(t *testing.T) {
	srv := startTestServer(t)
	statetest.Run(t, statetest.Harness{New: func(t *testing.T) crawlkit.State {
		o := memberOptions(srv.ClientURL(), natsOptions())("n0")
		o.Name, o.Nodes, o.Logger = "n0", []string{"n0"}, quietLogger()
		nd, err := NewNode(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nd.Close() })
		cfg := crawlkit.Config{Seeds: []string{"http://a.test/"}, Logger: quietLogger(), Resolver: loopbackResolver()}
		nd.Configure(&cfg)
		c, err := crawlkit.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := nd.Start(ctx, c); err != nil {
			t.Fatal(err)
		}
		if nd.OwnedShards() != nd.ring.Shards() {
			t.Fatalf("the lone member owns %d of %d shards", nd.OwnedShards(), nd.ring.Shards())
		}
		return cfg.State
	}})
}
