package index_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// counting wraps a Searcher and counts its searches.
type counting struct {
	index.Searcher
	n atomic.Int64
}

func (c *counting) Search(ctx context.Context, q index.Query, g *index.Stats) (*index.Result, error) {
	c.n.Add(1)
	return c.Searcher.Search(ctx, q, g)
}

func TestBrokerTiers(t *testing.T) {
	docs, _ := collection(t)
	high := index.NewShard(nil)
	low := index.NewShard(nil)
	ref := index.NewReference(nil)
	// The first 100 documents are the "high quality" tier.
	mustAdd(t, high.Add, docs[:100])
	mustAdd(t, low.Add, docs[100:])
	mustAdd(t, ref.Add, docs)
	hc, lc := &counting{Searcher: high}, &counting{Searcher: low}
	b, err := index.NewBroker(&index.BrokerOptions{Shards: []index.Searcher{hc}, Low: []index.Searcher{lc}, MinHits: 3, Refresh: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	tests := []struct {
		name    string
		text    string
		op      index.Op
		wantLow bool
	}{
		{"frequent term: high tier suffices", indextest.Word(0), index.Or, false},
		{"rare term: falls through to low tier", "nonexistentterm", index.Or, true},
	}
	global, err := b.Stats(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc.n.Store(0)
			q := index.ParseQuery(nil, tt.text, tt.op, 10)
			res, err := b.Search(ctx, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := lc.n.Load() > 0; got != tt.wantLow {
				t.Errorf("low tier searched = %v, want %v (%d high hits)", got, tt.wantLow, len(res.Hits))
			}
			// Tier scores use the statistics of the whole collection.
			want, _ := ref.Search(ctx, q, global)
			if !tt.wantLow {
				for _, h := range res.Hits {
					for _, w := range want.Hits {
						if w.URL == h.URL && w.Score != h.Score {
							t.Errorf("%s: tier score %v, collection score %v", h.URL, h.Score, w.Score)
						}
					}
				}
			}
		})
	}
	// A query matching only the low tier returns its hits.
	lowOnly := ""
	for _, d := range docs[100:] {
		terms := index.ParseQuery(nil, d.Text, index.Or, 10).Terms
		for _, term := range terms {
			if r, _ := high.Search(ctx, index.Query{Terms: []string{term}}, nil); len(r.Hits) == 0 {
				lowOnly = term
				break
			}
		}
		if lowOnly != "" {
			break
		}
	}
	q := index.Query{Terms: []string{lowOnly}}
	got, _ := b.Search(ctx, q, nil)
	want, _ := ref.Search(ctx, q, global)
	if len(got.Hits) == 0 || len(got.Hits) != len(want.Hits) || got.Hits[0] != want.Hits[0] {
		t.Errorf("low-tier-only term %q: got %v, want %v", lowOnly, got.Hits, want.Hits)
	}
}

func TestBrokerBackgroundRefresh(t *testing.T) {
	s := index.NewShard(nil)
	s.Add(index.Document{URL: "u1", Text: "alpha"})
	errs := make(chan error, 10)
	b, err := index.NewBroker(&index.BrokerOptions{
		Shards:         []index.Searcher{s},
		Refresh:        5 * time.Millisecond,
		OnRefreshError: func(err error) { errs <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	q := index.Query{Terms: []string{"alpha"}}
	first, err := b.Search(ctx, q, nil)
	if err != nil || len(first.Hits) != 1 {
		t.Fatalf("first search: %v %v", first, err)
	}
	// A second document changes N and df; the background refresh must pick
	// it up without an explicit Refresh.
	s.Add(index.Document{URL: "u2", Text: "alpha beta gamma"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := b.Search(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 2 && res.Hits[0].Score != first.Hits[0].Score {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("background refresh never updated the statistics")
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Close()
	b.Close() // idempotent
	if _, err := b.Search(ctx, q, nil); !errors.Is(err, index.ErrClosed) {
		t.Errorf("search after Close: %v, want ErrClosed", err)
	}
	select {
	case err := <-errs:
		t.Errorf("unexpected refresh error: %v", err)
	default:
	}
}

// failing is a Searcher whose node is down.
type failing struct{}

var errDown = errors.New("node down")

func (failing) Search(context.Context, index.Query, *index.Stats) (*index.Result, error) {
	return nil, errDown
}
func (failing) Stats(context.Context, []string) (*index.Stats, error) { return nil, errDown }

func TestBrokerErrors(t *testing.T) {
	for _, opts := range []*index.BrokerOptions{nil, {}} {
		var ie *index.Error
		if _, err := index.NewBroker(opts); !errors.As(err, &ie) {
			t.Errorf("NewBroker(%v) without shards = %v, want an *index.Error", opts, err)
		}
	}
	s := index.NewShard(nil)
	got := make(chan error, 1)
	b, err := index.NewBroker(&index.BrokerOptions{
		Shards:         []index.Searcher{s, failing{}},
		Refresh:        time.Hour,
		OnRefreshError: func(err error) { got <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := <-got; !errors.Is(err, errDown) {
		t.Errorf("background refresh error %v, want errDown", err)
	}
	_, err = b.Search(ctx, index.Query{Terms: []string{"x"}}, &index.Stats{Docs: 1})
	var ie *index.Error
	if !errors.Is(err, errDown) || !errors.As(err, &ie) || ie.Subject != "shard 1" {
		t.Errorf("search with a failing shard: %v", err)
	}
}

func TestPartitioners(t *testing.T) {
	tests := []struct {
		a, b     string
		sameHost bool
	}{
		{"http://a.example/x", "http://A.example:80/y", true},
		{"http://a.example/x", "http://b.example/x", false},
	}
	for _, tt := range tests {
		if got := index.ByHost(tt.a, 1000) == index.ByHost(tt.b, 1000); got != tt.sameHost {
			t.Errorf("ByHost(%q) == ByHost(%q): %v, want %v", tt.a, tt.b, got, tt.sameHost)
		}
	}
	counts := make([]int, 4)
	for _, d := range indextest.Corpus(indextest.Config{Seed: 1, Docs: 4000, MeanLen: 1}) {
		counts[index.ByURL(d.URL, 4)]++
		if p := index.ByHost(d.URL, 4); p < 0 || p >= 4 {
			t.Fatalf("ByHost out of range: %d", p)
		}
	}
	for _, c := range counts {
		if c < 900 || c > 1100 {
			t.Errorf("ByURL is uneven: %v", counts)
		}
	}
	if index.ByURL("x", 1) != 0 || index.ByHost("::bad", 3) >= 3 {
		t.Error("degenerate partitions")
	}
}

func TestRouter(t *testing.T) {
	docs, qs := collection(t)
	for _, part := range []index.Partitioner{nil, index.ByHost} {
		r := index.NewRouter(4, part, nil)
		mustAdd(t, r.Add, docs[:300])
		ref := index.NewReference(nil)
		mustAdd(t, ref.Add, docs[:300])
		// Re-adding and deleting reach the shard holding the document.
		if replaced, err := r.Add(docs[5]); err != nil || !replaced {
			t.Fatalf("re-add: %v %v", replaced, err)
		}
		if !r.Delete(docs[6].URL) || r.Delete(docs[6].URL) {
			t.Fatal("Delete did not find the document exactly once")
		}
		ref.Delete(docs[6].URL)
		total := 0
		for i, s := range r.Shards {
			total += s.Len()
			want := index.ByURL
			if part != nil {
				want = part
			}
			for _, d := range docs[:300] {
				if got := s.Has(d.URL); got != (want(d.URL, 4) == i && d.URL != docs[6].URL) {
					t.Fatalf("shard %d has %s: %v", i, d.URL, got)
				}
			}
		}
		if total != 299 {
			t.Errorf("shards hold %d documents, want 299", total)
		}
		b, err := index.NewBroker(&index.BrokerOptions{Shards: r.Searchers(), Refresh: -1})
		if err != nil {
			t.Fatal(err)
		}
		indextest.Compare(t, ref, b, qs[:40], nil)
		b.Close()
		if _, err := r.Add(index.Document{}); !errors.Is(err, index.ErrNoURL) {
			t.Errorf("Add without URL: %v", err)
		}
	}
}
