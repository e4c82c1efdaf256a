package index

import (
	"context"
	"slices"
	"strings"
)

// Op combines the terms of a query.
type Op uint8

const (
	// Or matches documents containing any query term (the zero value).
	Or Op = iota
	// And matches documents containing every query term.
	And
)

// String returns "or" or "and".
func (o Op) String() string {
	if o == And {
		return "and"
	}
	return "or"
}

// DefaultK is the number of hits a Query with K = 0 asks for.
const DefaultK = 10

// MaxQueryTerms bounds the distinct terms of a query; Normalize drops the
// rest, so a hostile query cannot make scoring quadratic.
const MaxQueryTerms = 64

// Query is an analysed query: terms (as produced by an Analyzer), how to
// combine them, and how many hits to return.
type Query struct {
	Terms []string
	Op    Op
	K     int // 0 means DefaultK
}

// ParseQuery analyses text with a (nil means the zero Analyzer) and returns
// the normalised Query.
func ParseQuery(a *Analyzer, text string, op Op, k int) Query {
	q := Query{Terms: a.QueryTerms(nil, text), Op: op, K: k}
	return q.Normalize()
}

// Normalize returns q with its terms sorted, deduplicated and copied, and K
// defaulted: the canonical order in which scores are summed. Every Searcher
// normalises the queries it receives, so callers need not.
func (q Query) Normalize() Query {
	t := slices.Clone(q.Terms)
	slices.Sort(t)
	t = slices.Compact(t)
	if len(t) > MaxQueryTerms {
		t = t[:MaxQueryTerms]
	}
	for i := range t {
		t[i] = strings.Clone(t[i])
	}
	q.Terms = t
	if q.K <= 0 {
		q.K = DefaultK
	}
	return q
}

// Hit is one search result.
type Hit struct {
	URL   string
	Title string
	Score float64
}

// Result is the answer to a query: at most K hits, best first (ties broken
// by ascending URL, so the order is total and independent of partitioning).
type Result struct {
	Hits []Hit
	// Postings is the number of postings whose BM25 contribution was
	// computed: with dynamic pruning it is smaller than the total length of
	// the query terms' posting lists. It shows the cost of the query.
	Postings int64
}

// Searcher answers queries over a collection. Search scores with the given
// collection statistics (nil means the Searcher's own); Stats reports the
// local statistics for terms (nil terms means every term, for a background
// refresh).
//
// Implementations: *Shard (the inverted index), *Reference (brute force),
// *Remote (a Searcher behind a Transport) and *Broker (a document-partitioned
// collection of Searchers). Implementations must be safe for concurrent use.
type Searcher interface {
	Search(ctx context.Context, q Query, global *Stats) (*Result, error)
	Stats(ctx context.Context, terms []string) (*Stats, error)
}

// better reports whether hit a ranks before hit b.
func better(aScore float64, aURL string, bScore float64, bURL string) bool {
	if aScore != bScore {
		return aScore > bScore
	}
	return aURL < bURL
}

// MergeHits merges ranked hit lists into the best k, in rank order. It is
// how a broker combines the top k of each shard: a document in the global
// top k is in the top k of its own shard, so the merge is exact.
func MergeHits(k int, lists ...[]Hit) []Hit {
	var all []Hit
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if better(a.Score, a.URL, b.Score, b.URL) {
			return -1
		}
		if better(b.Score, b.URL, a.Score, a.URL) {
			return 1
		}
		return 0
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}
