package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// conformanceNodes are the node names of the clusters the conformance
// suites run on: three, so that most fingerprints and documents belong to
// a node other than the one asked.
var conformanceNodes = []string{"n0", "n1", "n2"}

// natsTransports returns one NATS transport per node name, connected to
// one embedded server on loopback and sharing a stream of their own.
func natsTransports(t *testing.T, names []string) []Transport {
	t.Helper()
	srv := startTestServer(t)
	o := natsOptions()
	o.Memory = true
	var out []Transport
	for range names {
		tr := dialTest(t, srv.ClientURL(), o)
		t.Cleanup(func() { tr.Close() })
		out = append(out, tr)
	}
	return out
}

// memTransports returns one shared Mem transport for every node name.
func memTransports(t *testing.T, names []string) []Transport {
	tr := NewMem()
	t.Cleanup(func() { tr.Close() })
	out := make([]Transport, len(names))
	for i := range out {
		out[i] = tr
	}
	return out
}

// startNodes starts one node per name, node i on transports[i], with
// mod applied to each node's options; they are closed when t ends.
func startNodes(t *testing.T, names []string, transports []Transport, mod func(i int, o *Options)) []*Node {
	t.Helper()
	var nodes []*Node
	for i, name := range names {
		o := Options{Name: name, Nodes: names, Transport: transports[i], Logger: quietLogger(), Shards: 64,
			LookupDelay: time.Millisecond, StatusInterval: time.Hour}
		if mod != nil {
			mod(i, &o)
		}
		nd, err := NewNode(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nd.Close() })
		nodes = append(nodes, nd)
	}
	return nodes
}

// TestContentConformance runs the dedup.ContentSeen suite on a node's
// partitioned Content: each subtest gets a fresh three-node cluster and
// asks node n0, so that two thirds of the fingerprints are looked up on
// other nodes through the transport. Content finds exact duplicates only.
func TestContentConformance(t *testing.T) {
	for _, tc := range []struct {
		name       string
		transports func(*testing.T, []string) []Transport
	}{
		{"Mem", memTransports},
		{"NATS", natsTransports},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deduptest.TestContentSeen(t, deduptest.ContentCaps{}, func(t *testing.T) dedup.ContentSeen {
				nodes := startNodes(t, conformanceNodes, tc.transports(t, conformanceNodes), nil)
				return nodes[0].ContentSeen()
			})
		})
	}
}

// TestContentSeenCancelled checks what the ContentSeen contract asks of a
// call whose context is already canceled: an error wrapping
// context.Canceled and nothing recorded, for a fingerprint the node owns
// and for one another node owns.
func TestContentSeenCancelled(t *testing.T) {
	nodes := startNodes(t, conformanceNodes, memTransports(t, conformanceNodes), nil)
	c := nodes[0].ContentSeen()
	texts := map[string]string{} // "local" or "remote" → a text of that kind
	for i := 0; len(texts) < 2; i++ {
		text := fmt.Sprintf("text number %d", i)
		kind := "remote"
		if c.ring.FingerprintOwner(dedup.TextFingerprint([]byte(text))) == "n0" {
			kind = "local"
		}
		if _, ok := texts[kind]; !ok {
			texts[kind] = text
		}
	}
	for _, kind := range []string{"local", "remote"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Seen(ctx, dedup.Doc{URL: "http://a.test/", Text: []byte(texts[kind])})
		m, err2 := c.Seen(context.Background(), dedup.Doc{URL: "http://b.test/", Text: []byte(texts[kind])})
		if err2 != nil {
			t.Fatal(err2)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s fingerprint: a canceled Seen returned %v, want an error wrapping context.Canceled", kind, err)
		}
		if m.Seen {
			t.Errorf("%s fingerprint: a canceled Seen recorded the document", kind)
		}
	}
}

// TestNodeSearcherConformance runs the index.Searcher suite on the
// Searcher of a running cluster (Node.Searcher): the documents are
// partitioned by URL over the index shards of three nodes (Options.Index),
// on the in-memory transport and on NATS, and node n0's Searcher answers.
func TestNodeSearcherConformance(t *testing.T) {
	for _, tc := range []struct {
		name       string
		transports func(*testing.T, []string) []Transport
	}{
		{"Mem", memTransports},
		{"NATS", natsTransports},
	} {
		t.Run(tc.name, func(t *testing.T) {
			indextest.TestSearcher(t, func(t *testing.T, docs []index.Document) index.Searcher {
				shards := make([]*index.Shard, len(conformanceNodes))
				for i := range shards {
					shards[i] = index.NewShard(nil)
				}
				for _, d := range docs {
					if _, err := shards[index.ByURL(d.URL, len(shards))].Add(d); err != nil {
						t.Fatal(err)
					}
				}
				for i, s := range shards {
					if s.Len() == 0 {
						t.Fatalf("shard %d is empty: the partition does not exercise the merge", i)
					}
				}
				nodes := startNodes(t, conformanceNodes, tc.transports(t, conformanceNodes), func(i int, o *Options) {
					o.Index = shards[i]
				})
				return nodes[0].Searcher()
			})
		})
	}
}

// TestNodeSearcherConformanceOneNode: a cluster of one node answers as
// its shard does.
func TestNodeSearcherConformanceOneNode(t *testing.T) {
	indextest.TestSearcher(t, func(t *testing.T, docs []index.Document) index.Searcher {
		s := index.NewShard(nil)
		for _, d := range docs {
			if _, err := s.Add(d); err != nil {
				t.Fatal(fmt.Errorf("add %s: %w", d.URL, err))
			}
		}
		names := []string{"solo"}
		return startNodes(t, names, memTransports(t, names), func(_ int, o *Options) { o.Index = s })[0].Searcher()
	})
}
