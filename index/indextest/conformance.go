package indextest

import (
	"context"
	"maps"
	"testing"

	"github.com/crawlkit/crawlkit/index"
)

// TestSearcher is the conformance suite every index.Searcher must pass.
// build must return a Searcher holding exactly docs (analysed with the
// zero index.Analyzer and default BM25) whose statistics are up to date.
// The suite checks, against the brute-force index.Reference:
//   - Stats for given terms and for every term (nil);
//   - rankings (URLs in order, scores within 1e-9) for OR and AND queries of
//     one to three terms, k = 1, 10 and 100, with the Searcher's own
//     statistics and with foreign global statistics;
//   - queries with unknown terms, empty queries and duplicated terms.
func TestSearcher(t *testing.T, build func(t *testing.T, docs []index.Document) index.Searcher) {
	t.Helper()
	cfg := Config{Seed: 77, Docs: 300, Vocab: 2000, MeanLen: 30}
	docs := Corpus(cfg)
	ref := index.NewReference(nil)
	for _, d := range docs {
		if _, err := ref.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	s := build(t, docs)
	ctx := context.Background()

	t.Run("stats", func(t *testing.T) {
		terms := []string{Word(0), Word(7), Word(150), "absent"}
		for _, ts := range [][]string{terms, nil} {
			want, _ := ref.Stats(ctx, ts)
			got, err := s.Stats(ctx, ts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Docs != want.Docs || got.Length != want.Length {
				t.Errorf("Stats(%d terms): N=%d length=%d, want %d and %d", len(ts), got.Docs, got.Length, want.Docs, want.Length)
			}
			dropZero := func(m map[string]int64) map[string]int64 {
				c := maps.Clone(m)
				maps.DeleteFunc(c, func(_ string, n int64) bool { return n == 0 })
				return c
			}
			if !maps.Equal(dropZero(got.DF), dropZero(want.DF)) {
				t.Errorf("Stats(%d terms): document frequencies differ (%d vs %d terms)", len(ts), len(got.DF), len(want.DF))
			}
		}
	})

	var qs []index.Query
	log := QueryLog(cfg, 60)
	for i, text := range log {
		k := []int{1, 10, 100}[i%3]
		for _, op := range []index.Op{index.Or, index.And} {
			qs = append(qs, index.ParseQuery(nil, text, op, k))
		}
	}
	t.Run("rankings", func(t *testing.T) {
		Compare(t, ref, s, qs, nil)
	})
	t.Run("foreign statistics", func(t *testing.T) {
		// As a broker would send: statistics of a larger collection.
		g, _ := ref.Stats(ctx, nil)
		g.Docs *= 3
		g.Length *= 2
		for term := range g.DF {
			g.DF[term] += 5
		}
		Compare(t, ref, s, qs[:40], g)
	})
	t.Run("edge queries", func(t *testing.T) {
		edge := []index.Query{
			{},
			{Terms: []string{"absent"}},
			{Terms: []string{"absent", Word(3)}, Op: index.And},
			{Terms: []string{"absent", Word(3)}, Op: index.Or},
			{Terms: []string{Word(3), Word(3), Word(12)}, K: 5},
			{Terms: []string{Word(12), Word(3)}, Op: index.And, K: -1},
		}
		Compare(t, ref, s, edge, nil)
	})
}
