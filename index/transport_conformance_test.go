package index_test

import (
	"context"
	"testing"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// termShard returns the one shard of a term index holding docs (document
// i has id i), as the PostingSource suite asks.
func termShard(t *testing.T, docs []index.Document) *index.TermShard {
	ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 1})
	mustAdd(t, ti.Add, docs)
	return ti.Shard(0)
}

// Every PostingSource in the package passes the indextest suite: the
// local shard, and a Remote reaching it through the loopback Handler (the
// wire encoding of posting lists) with and without a Meter between them.
func TestPostingSourceConformance(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(t *testing.T, docs []index.Document) index.PostingSource
	}{
		{"TermShard", func(t *testing.T, docs []index.Document) index.PostingSource { return termShard(t, docs) }},
		{"Remote", func(t *testing.T, docs []index.Document) index.PostingSource {
			return index.NewRemote(&index.Handler{Postings: termShard(t, docs)})
		}},
		{"Remote over Meter", func(t *testing.T, docs []index.Document) index.PostingSource {
			return index.NewRemote(&index.Meter{T: &index.Handler{Postings: termShard(t, docs)}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { indextest.TestPostingSource(t, tc.build) })
	}
}

// Every Transport in the package passes the indextest suite: the
// loopback Handler, a TransportFunc, and a Meter over the loopback.
func TestTransportConformance(t *testing.T) {
	down := func(*testing.T) index.Transport {
		return index.TransportFunc(func(context.Context, []byte) ([]byte, error) { return nil, errDown })
	}
	for _, tc := range []struct {
		name string
		h    indextest.TransportHarness
	}{
		{"Handler", indextest.TransportHarness{
			New:         func(_ *testing.T, node *index.Handler) index.Transport { return node },
			Synchronous: true,
		}},
		{"TransportFunc", indextest.TransportHarness{
			New: func(_ *testing.T, node *index.Handler) index.Transport {
				return index.TransportFunc(node.RoundTrip)
			},
			Unreachable: down,
			Synchronous: true,
		}},
		{"Meter", indextest.TransportHarness{
			New:         func(_ *testing.T, node *index.Handler) index.Transport { return &index.Meter{T: node} },
			Unreachable: func(t *testing.T) index.Transport { return &index.Meter{T: down(t)} },
			Synchronous: true,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { indextest.TestTransport(t, tc.h) })
	}
}

// TestMeterCountsTrips: a Meter counts every round trip through it, the
// failed ones too, with the bytes of requests and replies.
func TestMeterCountsTrips(t *testing.T) {
	node := &index.Handler{Postings: index.NewTermShard()}
	m := &index.Meter{T: node}
	var sent, received int64
	for _, req := range [][]byte{{3, 1, 1, 1, 1, 'a'}, {9, 9}, {}} {
		resp, err := m.RoundTrip(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		sent += int64(len(req))
		received += int64(len(resp))
	}
	failing := &index.Meter{T: index.TransportFunc(func(context.Context, []byte) ([]byte, error) { return nil, errDown })}
	failing.RoundTrip(ctx, []byte{1, 2, 3})
	if c, s, r := m.Counts(); c != 3 || s != sent || r != received {
		t.Errorf("Counts = %d calls, %d/%d bytes; want 3, %d/%d", c, s, r, sent, received)
	}
	if c, s, r := failing.Counts(); c != 1 || s != 3 || r != 0 {
		t.Errorf("failed trip counted as %d calls, %d/%d bytes; want 1, 3/0", c, s, r)
	}
}
