package index_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var ctx = context.Background()

func TestAnalyzer(t *testing.T) {
	tests := []struct {
		name string
		a    *index.Analyzer
		in   string
		want []string
	}{
		{"empty", nil, "", nil},
		{"words", nil, "Hello, World!", []string{"hello", "world"}},
		{"apostrophe", nil, "can't won’t", []string{"can't", "won’t"}},
		{"numbers", nil, "pi is 3.14, n=1,000.", []string{"pi", "is", "3.14", "n", "1,000"}},
		{"trailing dot", nil, "e.g. end.", []string{"e.g", "end"}},
		{"mixed", nil, "Go1.26 x86_64", []string{"go1.26", "x86_64"}},
		{"url", nil, "http://a.example/b", []string{"http", "a.example", "b"}},
		{"accents", nil, "Crème BRÛLÉE naïve", []string{"crème", "brûlée", "naïve"}},
		{"combining", nil, "cafe\u0301 ok", []string{"cafe\u0301", "ok"}},
		{"greek", nil, "ΟΔΥΣΣΕΥΣ", []string{"οδυσσευσ"}},
		{"ideographs", nil, "東京タワー", []string{"東", "京", "タワー"}},
		{"stop words", &index.Analyzer{Stop: index.EnglishStopWords}, "The Art of the Deal", []string{"art", "deal"}},
		{"long token", &index.Analyzer{MaxTermLen: 4}, "tiny enormous", []string{"tiny"}},
		{"invalid utf8", nil, "a\xffb", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.Terms(nil, tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBM25Score(t *testing.T) {
	// N=10, total length 100 (avgdl 10), df 2, tf 3, |d| 5: by hand,
	// ln(1+8.5/2.5) · 3·2.2 / (3 + 1.2·(0.25+0.75·0.5)) = 2.6076...
	got := index.BM25{}.Score(10, 100, 2, 3, 5)
	if want := 2.6076239920266193; math.Abs(got-want) > 1e-12 {
		t.Errorf("Score = %.15f, want %.15f", got, want)
	}
	if got := index.IDF(10, 10); got <= 0 {
		t.Errorf("IDF(10,10) = %v, want > 0 (Lucene's idf never goes negative)", got)
	}
}

// collection builds the test collection and its queries once.
func collection(tb testing.TB) ([]index.Document, []index.Query) {
	tb.Helper()
	cfg := indextest.Config{Seed: 7, Docs: 1000, Vocab: 4000, MeanLen: 60}
	docs := indextest.Corpus(cfg)
	var qs []index.Query
	seen := map[string]bool{}
	for _, s := range indextest.QueryLog(cfg, 200) {
		if seen[s] {
			continue
		}
		seen[s] = true
		qs = append(qs, index.ParseQuery(nil, s, index.Or, 10), index.ParseQuery(nil, s, index.And, 10))
	}
	// Frequent terms make WAND work hardest.
	for _, s := range []string{indextest.Word(0) + " " + indextest.Word(3), indextest.Word(1), indextest.Word(2) + " " + indextest.Word(40) + " " + indextest.Word(400)} {
		qs = append(qs, index.ParseQuery(nil, s, index.Or, 10), index.ParseQuery(nil, s, index.And, 10), index.ParseQuery(nil, s, index.Or, 1))
	}
	return docs, qs
}

func mustAdd(tb testing.TB, add func(index.Document) (bool, error), docs []index.Document) {
	tb.Helper()
	for _, d := range docs {
		if _, err := add(d); err != nil {
			tb.Fatal(err)
		}
	}
}

// docBroker partitions docs over n shards with part and returns a broker
// over them; wrap may put each shard behind something (e.g. a transport).
func docBroker(tb testing.TB, docs []index.Document, n int, part index.Partitioner, wrap func(*index.Shard) index.Searcher) (*index.Broker, []*index.Shard) {
	tb.Helper()
	shards := make([]*index.Shard, n)
	searchers := make([]index.Searcher, n)
	for i := range shards {
		shards[i] = index.NewShard(nil)
		searchers[i] = shards[i]
		if wrap != nil {
			searchers[i] = wrap(shards[i])
		}
	}
	for _, d := range docs {
		if _, err := shards[part(d.URL, n)].Add(d); err != nil {
			tb.Fatal(err)
		}
	}
	b, err := index.NewBroker(&index.BrokerOptions{Shards: searchers, Refresh: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	if err := b.Refresh(ctx); err != nil {
		tb.Fatal(err)
	}
	return b, shards
}

// memo caches a slow Searcher's answers by query.
type memo struct {
	s index.Searcher
	m map[string]*index.Result
}

func (m *memo) Search(ctx context.Context, q index.Query, g *index.Stats) (*index.Result, error) {
	key := fmt.Sprint(q.Normalize(), g)
	if r, ok := m.m[key]; ok {
		return r, nil
	}
	r, err := m.s.Search(ctx, q, g)
	if err == nil {
		m.m[key] = r
	}
	return r, err
}

func (m *memo) Stats(ctx context.Context, terms []string) (*index.Stats, error) {
	return m.s.Stats(ctx, terms)
}

func loopback(s *index.Shard) index.Searcher {
	return index.NewRemote(&index.Handler{Searcher: s})
}

// TestRanking is the issue's acceptance test: four shards, partitioned by
// URL, by host and by term, with and without a transport, return exactly
// the top 10 of one unsharded index and of the brute-force reference.
func TestRanking(t *testing.T) {
	docs, qs := collection(t)
	r := index.NewReference(nil)
	mustAdd(t, r.Add, docs)
	ref := &memo{s: r, m: map[string]*index.Result{}}
	one := index.NewShard(nil)
	mustAdd(t, one.Add, docs)

	byURL, _ := docBroker(t, docs, 4, index.ByURL, nil)
	byHost, hostShards := docBroker(t, docs, 4, index.ByHost, nil)
	remote, _ := docBroker(t, docs, 4, index.ByURL, loopback)
	terms := index.NewTermIndex(&index.TermIndexOptions{Shards: 4})
	mustAdd(t, terms.Add, docs)
	termsRemote := index.NewTermIndex(&index.TermIndexOptions{Shards: 4, Source: func(i int, s *index.TermShard) index.PostingSource {
		return index.NewRemote(&index.Handler{Postings: s})
	}})
	mustAdd(t, termsRemote.Add, docs)

	// The host partition must really be uneven, or it tests nothing new.
	sizes := []int{}
	for _, s := range hostShards {
		sizes = append(sizes, s.Len())
	}
	if slices.Max(sizes) < 2*slices.Min(sizes) {
		t.Logf("host partition sizes %v are fairly even", sizes)
	}

	for _, tc := range []struct {
		name string
		s    index.Searcher
	}{
		{"shard", one},
		{"docs by URL", byURL},
		{"docs by host", byHost},
		{"docs by URL, remote", remote},
		{"terms", terms},
		{"terms, remote", termsRemote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			indextest.Compare(t, ref, tc.s, qs, nil)
		})
	}
	// Hits are not vacuous.
	res, err := ref.Search(ctx, qs[0], nil)
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("reference found nothing for %v: %v", qs[0], err)
	}
}

// TestPruning shows that WAND scores far fewer postings than exhaustive
// evaluation (every posting of the query terms, the sum of their document
// frequencies); TestRanking shows it returns the same top k.
func TestPruning(t *testing.T) {
	cfg := indextest.Config{Seed: 3, Docs: 6000, Vocab: 20000, MeanLen: 60}
	s := index.NewShard(nil)
	mustAdd(t, s.Add, indextest.Corpus(cfg))
	var pruned, all int64
	for _, text := range indextest.QueryLog(cfg, 300) {
		q := index.ParseQuery(nil, text, index.Or, 10)
		if len(q.Terms) < 2 {
			continue
		}
		res, err := s.Search(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Stats(ctx, q.Terms)
		for _, n := range st.DF {
			all += n
		}
		pruned += res.Postings
	}
	t.Logf("WAND scored %d of %d postings (%.1f%%)", pruned, all, 100*float64(pruned)/float64(all))
	if all == 0 || pruned*2 > all {
		t.Errorf("WAND scored %d of %d postings; want under half", pruned, all)
	}
}

func TestReplaceDeleteCompact(t *testing.T) {
	docs, qs := collection(t)
	docs, qs = docs[:600], qs[:60]
	ref := index.NewReference(nil)
	s := index.NewShard(nil)
	ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 3})
	mustAdd(t, ref.Add, docs)
	mustAdd(t, s.Add, docs)
	mustAdd(t, ti.Add, docs)
	// Re-crawl: every third page changes, taking another page's text.
	for i := 0; i < len(docs); i += 3 {
		d := docs[i]
		d.Text = docs[(i+1)%len(docs)].Text + " fresh"
		for _, add := range []func(index.Document) (bool, error){ref.Add, s.Add, ti.Add} {
			if replaced, err := add(d); err != nil || !replaced {
				t.Fatalf("re-add %s: replaced=%v err=%v", d.URL, replaced, err)
			}
		}
	}
	for i := 1; i < len(docs); i += 7 {
		if !s.Delete(docs[i].URL) || !ref.Delete(docs[i].URL) {
			t.Fatalf("delete %s failed", docs[i].URL)
		}
	}
	if s.Len() != 600-86 || s.Deleted() != 200+86 {
		t.Fatalf("Len=%d Deleted=%d, want %d and %d", s.Len(), s.Deleted(), 600-86, 286)
	}
	qs = append(qs, index.ParseQuery(nil, "fresh", index.Or, 50))
	indextest.Compare(t, ref, s, qs, nil)
	before, sizeBefore := s.Terms(), len(encode(t, s))
	s.Compact()
	if s.Deleted() != 0 || s.Len() != 514 {
		t.Errorf("after Compact: Deleted=%d Len=%d", s.Deleted(), s.Len())
	}
	if s.Terms() > before {
		t.Errorf("Compact grew the dictionary: %d > %d", s.Terms(), before)
	}
	// 286 of 800 stored documents were dead: about a third of the space.
	if sizeAfter := len(encode(t, s)); sizeAfter > sizeBefore*3/4 {
		t.Errorf("Compact reclaimed too little: %d bytes, was %d", sizeAfter, sizeBefore)
	}
	indextest.Compare(t, ref, s, qs, nil)

	// The term-partitioned index had only replacements.
	ref2 := index.NewReference(nil)
	mustAdd(t, ref2.Add, docs)
	for i := 0; i < len(docs); i += 3 {
		d := docs[i]
		d.Text = docs[(i+1)%len(docs)].Text + " fresh"
		ref2.Add(d)
	}
	indextest.Compare(t, ref2, ti, qs, nil)
	ti.Compact()
	indextest.Compare(t, ref2, ti, qs, nil)

	if _, err := s.Add(index.Document{}); !errors.Is(err, index.ErrNoURL) {
		t.Errorf("Add without URL: %v, want ErrNoURL", err)
	}
}

func TestGlobalStatsMakeScoresPartitionIndependent(t *testing.T) {
	docs, qs := collection(t)
	b, shards := docBroker(t, docs[:800], 4, index.ByHost, nil)
	q := qs[0]
	// Without global statistics each shard would score with its own idf.
	local, err := shards[0].Search(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	global, err := b.Search(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	gs := map[string]float64{}
	for _, h := range global.Hits {
		gs[h.URL] = h.Score
	}
	st, _ := b.Stats(ctx, q.Terms)
	withGlobal, _ := shards[0].Search(ctx, q, st)
	for i, h := range withGlobal.Hits {
		if s, ok := gs[h.URL]; ok && s != h.Score {
			t.Errorf("hit %s: shard with global stats %v, broker %v", h.URL, h.Score, s)
		}
		if i < len(local.Hits) && local.Hits[i].URL == h.URL && local.Hits[i].Score == h.Score && len(q.Terms) > 0 {
			t.Logf("local and global score coincide for %s", h.URL)
		}
	}
}

func TestEmptyAndMissing(t *testing.T) {
	s := index.NewShard(nil)
	for _, q := range []index.Query{{}, {Terms: []string{"nothing"}}, {Terms: []string{"nothing"}, Op: index.And}} {
		res, err := s.Search(ctx, q, nil)
		if err != nil || len(res.Hits) != 0 {
			t.Errorf("empty shard %v: %v, %v", q, res, err)
		}
	}
	s.Add(index.Document{URL: "u1", Text: "alpha beta"})
	res, _ := s.Search(ctx, index.ParseQuery(nil, "alpha gamma", index.And, 10), nil)
	if len(res.Hits) != 0 {
		t.Errorf("AND with a missing term matched %v", res.Hits)
	}
	res, _ = s.Search(ctx, index.ParseQuery(nil, "alpha gamma", index.Or, 10), nil)
	if len(res.Hits) != 1 || res.Hits[0].URL != "u1" {
		t.Errorf("OR with a missing term: %v", res.Hits)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Search(cctx, index.Query{Terms: []string{"alpha"}}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled search: %v", err)
	}
}

func ExampleShard() {
	s := index.NewShard(&index.ShardOptions{Analyzer: &index.Analyzer{Stop: index.EnglishStopWords}})
	s.Add(index.Document{URL: "https://a.example/", Title: "Web crawling", Text: "A crawler fetches pages and follows links."})
	s.Add(index.Document{URL: "https://b.example/", Title: "Indexing", Text: "An inverted index maps terms to pages."})
	s.Add(index.Document{URL: "https://c.example/", Title: "Crawling politely", Text: "Polite crawlers wait between fetches from a host."})

	q := index.ParseQuery(s.Analyzer(), "crawling pages", index.Or, 10)
	res, _ := s.Search(context.Background(), q, nil)
	for _, h := range res.Hits {
		fmt.Printf("%.4f %s %s\n", h.Score, h.URL, h.Title)
	}
	// Output:
	// 0.9578 https://a.example/ Web crawling
	// 0.5078 https://b.example/ Indexing
	// 0.4300 https://c.example/ Crawling politely
}

// TestHighFrequency covers term frequencies beyond one byte (kept apart
// from the one-byte frequencies) through scoring, persistence, the wire and
// compaction.
func TestHighFrequency(t *testing.T) {
	var docs []index.Document
	for i, n := range []int{1, 254, 255, 256, 1000, 70000} {
		docs = append(docs, index.Document{
			URL:  fmt.Sprintf("http://spam.example/%d", i),
			Text: strings.Repeat("spam ", n) + strings.Repeat("ham ", i+1),
		})
	}
	ref := index.NewReference(nil)
	s := index.NewShard(nil)
	ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 2, Source: func(i int, ts *index.TermShard) index.PostingSource {
		return index.NewRemote(&index.Handler{Postings: ts})
	}})
	for _, add := range []func(index.Document) (bool, error){ref.Add, s.Add, ti.Add} {
		mustAdd(t, add, docs)
	}
	qs := []index.Query{
		index.ParseQuery(nil, "spam", index.Or, 10),
		index.ParseQuery(nil, "spam ham", index.And, 3),
	}
	loaded := index.NewShard(nil)
	if _, err := loaded.ReadFrom(bytes.NewReader(encode(t, s))); err != nil {
		t.Fatal(err)
	}
	for _, sr := range []index.Searcher{s, ti, loaded, index.NewRemote(&index.Handler{Searcher: s})} {
		indextest.Compare(t, ref, sr, qs, nil)
	}
	s.Delete(docs[2].URL)
	ref.Delete(docs[2].URL)
	s.Compact()
	indextest.Compare(t, ref, s, qs, nil)
}
