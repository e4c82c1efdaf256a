package index_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/crawlkit/crawlkit/index"
)

func TestRemoteMeterAndErrors(t *testing.T) {
	s := smallShard(t, 20)
	m := &index.Meter{T: &index.Handler{Searcher: s, Postings: index.NewTermShard()}}
	r := index.NewRemote(m)
	q := index.ParseQuery(nil, "ka lo mi", index.Or, 5)
	want, _ := s.Search(ctx, q, nil)
	got, err := r.Search(ctx, q, nil)
	if err != nil || len(got.Hits) != len(want.Hits) || got.Hits[0] != want.Hits[0] || got.Postings != want.Postings {
		t.Fatalf("remote search: %v %v, want %v", got, err, want)
	}
	st, err := r.Stats(ctx, nil)
	wst, _ := s.Stats(ctx, nil)
	if err != nil || st.Docs != wst.Docs || len(st.DF) != len(wst.DF) {
		t.Fatalf("remote stats: %v %v", st, err)
	}
	calls, sent, recv := m.Counts()
	if calls != 2 || sent == 0 || recv == 0 {
		t.Errorf("Meter counts %d calls %d/%d bytes", calls, sent, recv)
	}
	lists, err := r.Postings(ctx, []string{"nothing"})
	if err != nil || len(lists) != 1 || lists[0].Docs != nil {
		t.Errorf("remote postings for a missing term: %v %v", lists, err)
	}

	// Errors on the node travel back; transport failures are wrapped.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Search(cctx, q, nil); err == nil {
		t.Error("canceled remote search succeeded")
	}
	broken := index.NewRemote(index.TransportFunc(func(context.Context, []byte) ([]byte, error) {
		return nil, errDown
	}))
	if _, err := broken.Stats(ctx, nil); !errors.Is(err, errDown) {
		t.Errorf("transport failure: %v", err)
	}
	garbage := index.NewRemote(index.TransportFunc(func(context.Context, []byte) ([]byte, error) {
		return []byte{0, 5, 1}, nil
	}))
	if _, err := garbage.Search(ctx, q, nil); !errors.Is(err, index.ErrCorrupt) {
		t.Errorf("garbage reply: %v, want ErrCorrupt", err)
	}
	h := &index.Handler{}
	if resp, _ := h.RoundTrip(ctx, []byte{1, 1, 0, 0, 10, 0}); len(resp) == 0 || resp[0] != 1 {
		t.Errorf("handler without searcher answered %v", resp)
	}
}

// FuzzWire sends arbitrary requests to a Handler and arbitrary replies to a
// Remote: both must fail cleanly, never panic.
func FuzzWire(f *testing.F) {
	s := smallShard(f, 10)
	ts := index.NewTermIndex(&index.TermIndexOptions{Shards: 1})
	ts.Add(index.Document{URL: "u", Text: "ka lo"})
	h := &index.Handler{Searcher: s, Postings: ts.Shard(0)}
	var reqs [][]byte
	rec := index.TransportFunc(func(ctx context.Context, req []byte) ([]byte, error) {
		reqs = append(reqs, bytes.Clone(req))
		return h.RoundTrip(ctx, req)
	})
	r := index.NewRemote(rec)
	q := index.ParseQuery(nil, "ka lo", index.And, 3)
	r.Search(ctx, q, &index.Stats{Docs: 3, Length: 9, DF: map[string]int64{"ka": 1}})
	r.Stats(ctx, []string{"ka"})
	r.Postings(ctx, []string{"ka", "zz"})
	for _, req := range reqs {
		resp, _ := h.RoundTrip(ctx, req)
		f.Add(req, resp)
	}
	f.Fuzz(func(t *testing.T, req, resp []byte) {
		h.RoundTrip(ctx, req)
		fixed := index.NewRemote(index.TransportFunc(func(context.Context, []byte) ([]byte, error) { return resp, nil }))
		// A shard's answer, however corrupt, is refused or is a result:
		// at most K hits, best first, so that the broker's merge of the
		// shards' top k stays right.
		if r, err := fixed.Search(ctx, q, nil); err == nil {
			if len(r.Hits) > q.K {
				t.Fatalf("%d hits for K = %d", len(r.Hits), q.K)
			}
			for i := 1; i < len(r.Hits); i++ {
				a, b := r.Hits[i-1], r.Hits[i]
				if !(a.Score > b.Score || a.Score == b.Score && a.URL < b.URL) {
					t.Fatalf("hits out of order: %+v then %+v", a, b)
				}
			}
		}
		fixed.Stats(ctx, nil)
		if lists, err := fixed.Postings(ctx, []string{"a", "b"}); err == nil {
			for _, l := range lists {
				if l.Docs != nil && int(l.Docs.GetCardinality()) != len(l.Freqs) {
					t.Fatalf("decoded list with %d ids and %d freqs", l.Docs.GetCardinality(), len(l.Freqs))
				}
			}
		}
	})
}
