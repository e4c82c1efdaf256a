package indextest

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
)

// TestPostingSource is the conformance suite every index.PostingSource
// must pass. build must return a source holding the postings of docs as a
// one-shard index.TermIndex would: document i of docs has the global id
// i, and its terms are those the zero index.Analyzer finds in its title
// and text, each with its number of occurrences. build is called once per
// subtest, so that each starts from a source nobody has read yet.
//
// The suite checks, against postings it computes itself:
//   - one list per requested term, in the order asked, with Term set,
//     also for repeated terms, unknown terms and the empty string;
//   - the ids (Docs) and term frequencies (Freqs, one per id, in id
//     order) of every term of the collection;
//   - nil Docs and no Freqs for a term the source does not hold;
//   - no list and no error for an empty or nil term list;
//   - the same answer twice, and under concurrent calls on a fresh
//     source;
//   - an error for an already canceled or expired context, after which
//     the source still answers.
//
// It does not modify the returned bitmaps: a local source may return its
// own (see index.PostingList).
func TestPostingSource(t *testing.T, build func(t *testing.T, docs []index.Document) index.PostingSource) {
	t.Helper()
	cfg := Config{Seed: 41, Docs: 300, Vocab: 2000, MeanLen: 30}
	docs := Corpus(cfg)
	want := expectedPostings(docs)
	vocab := slices.Sorted(maps.Keys(want))
	ctx := context.Background()

	t.Run("Lists", func(t *testing.T) {
		src := build(t, docs)
		terms := append(slices.Clone(vocab), "absent", "zzz-not-a-word")
		got, err := src.Postings(ctx, terms)
		if err != nil {
			t.Fatal(err)
		}
		checkLists(t, terms, got, want)
	})
	t.Run("Absent", func(t *testing.T) {
		src := build(t, docs)
		terms := []string{"absent", "", "Ka", Word(3) + Word(3) + "x"}
		got, err := src.Postings(ctx, terms)
		if err != nil {
			t.Fatal(err)
		}
		checkLists(t, terms, got, want)
	})
	t.Run("Order", func(t *testing.T) {
		src := build(t, docs)
		terms := []string{Word(3), "absent", Word(0), Word(3), "", Word(200), Word(0)}
		got, err := src.Postings(ctx, terms)
		if err != nil {
			t.Fatal(err)
		}
		checkLists(t, terms, got, want)
	})
	t.Run("Empty", func(t *testing.T) {
		src := build(t, docs)
		for _, terms := range [][]string{nil, {}} {
			got, err := src.Postings(ctx, terms)
			if err != nil || len(got) != 0 {
				t.Errorf("Postings(%#v) = %d lists, %v; want none and no error", terms, len(got), err)
			}
		}
	})
	t.Run("Repeatable", func(t *testing.T) {
		src := build(t, docs)
		terms := vocab[:min(len(vocab), 200)]
		for range 2 {
			got, err := src.Postings(ctx, terms)
			if err != nil {
				t.Fatal(err)
			}
			checkLists(t, terms, got, want)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		// A fresh source: its first readers race to prepare its lists.
		src := build(t, docs)
		const workers = 8
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 5))
				for range 10 {
					terms := make([]string, 1+r.IntN(12))
					for i := range terms {
						if r.IntN(8) == 0 {
							terms[i] = "absent"
						} else {
							terms[i] = vocab[r.IntN(len(vocab))]
						}
					}
					got, err := src.Postings(ctx, terms)
					if err != nil {
						t.Error(err)
						return
					}
					if !checkLists(t, terms, got, want) {
						return
					}
				}
			})
		}
		wg.Wait()
	})
	t.Run("Canceled", func(t *testing.T) {
		src := build(t, docs)
		terms := []string{Word(0), Word(5)}
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel2()
		for name, c := range map[string]context.Context{"canceled": canceled, "expired": expired} {
			if got, err := src.Postings(c, terms); err == nil {
				t.Errorf("Postings with a %s context = %d lists and no error", name, len(got))
			}
		}
		got, err := src.Postings(ctx, terms)
		if err != nil {
			t.Fatalf("Postings after a canceled call: %v", err)
		}
		checkLists(t, terms, got, want)
	})
}

// posting is one document of a term's expected posting list.
type posting struct{ id, tf uint32 }

// expectedPostings computes the posting lists of docs (document i has id
// i) with the zero Analyzer over title and text.
func expectedPostings(docs []index.Document) map[string][]posting {
	var an index.Analyzer
	out := map[string][]posting{}
	var terms []string
	for i, d := range docs {
		terms = an.DocTerms(an.DocTerms(terms[:0], d.Title, d.Lang), d.Text, d.Lang)
		tf := map[string]uint32{}
		for _, term := range terms {
			tf[term]++
		}
		for term, n := range tf {
			out[term] = append(out[term], posting{uint32(i), n})
		}
	}
	return out
}

// checkLists reports through t every way got differs from the expected
// lists of terms, and whether it found none.
func checkLists(t testing.TB, terms []string, got []index.PostingList, want map[string][]posting) bool {
	t.Helper()
	if len(got) != len(terms) {
		t.Errorf("Postings(%d terms) returned %d lists, want one per term", len(terms), len(got))
		return false
	}
	bad := 0
	for i, l := range got {
		if bad >= 5 {
			t.Errorf("... and more differences")
			return false
		}
		term := terms[i]
		if l.Term != term {
			t.Errorf("list %d is for term %q, want %q", i, l.Term, term)
			bad++
			continue
		}
		exp := want[term]
		if len(exp) == 0 {
			if l.Docs != nil || len(l.Freqs) != 0 {
				t.Errorf("term %q is not in the collection: got Docs %v and %d Freqs, want nil Docs", term, l.Docs, len(l.Freqs))
				bad++
			}
			continue
		}
		if l.Docs == nil {
			t.Errorf("term %q: nil Docs, want %d documents", term, len(exp))
			bad++
			continue
		}
		ids := l.Docs.ToArray()
		if len(ids) != len(exp) || len(l.Freqs) != len(exp) {
			t.Errorf("term %q: %d ids and %d frequencies, want %d of each", term, len(ids), len(l.Freqs), len(exp))
			bad++
			continue
		}
		for j, p := range exp {
			if ids[j] != p.id || l.Freqs[j] != p.tf {
				t.Errorf("term %q posting %d: document %d with frequency %d, want %d with %d", term, j, ids[j], l.Freqs[j], p.id, p.tf)
				bad++
				break
			}
		}
	}
	return bad == 0
}
