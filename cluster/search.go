package cluster

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/index"
)

// IndexTransport returns the index.Transport that reaches node's index
// shard over t (request-reply on the subject "index.NODE"), for
// index.NewRemote.
func IndexTransport(t Transport, node string) index.Transport {
	subject := "index." + node
	return index.TransportFunc(func(ctx context.Context, req []byte) ([]byte, error) {
		return t.Request(ctx, subject, req)
	})
}

// ServeIndex answers index requests (search, statistics, postings) for
// node's shard s over t until the returned Closer is closed.
func ServeIndex(t Transport, node string, s index.Searcher) (io.Closer, error) {
	h := &index.Handler{Searcher: s}
	return t.Serve("index."+node, h.RoundTrip)
}

// Searcher is the broker of a document-partitioned index whose shards are
// the nodes of a cluster (IIR §20.3): it gathers global statistics from
// the shards, scatters the query with them and merges the top k, each
// shard under a deadline. Search (index.Searcher) fails if any shard
// fails, as index.Broker does; SearchPartial answers with the shards that
// did answer in time and names the others. Safe for concurrent use;
// costs two round trips per shard in parallel per query.
type Searcher struct {
	nodes   []string
	remotes []*index.Remote
	timeout time.Duration
}

var _ index.Searcher = (*Searcher)(nil)

// NewSearcher returns a Searcher over the index shards of nodes served
// on t; timeout bounds each shard's answer (0 means 5 s).
func NewSearcher(t Transport, nodes []string, timeout time.Duration) *Searcher {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	s := &Searcher{nodes: append([]string(nil), nodes...), timeout: timeout}
	for _, n := range nodes {
		s.remotes = append(s.remotes, index.NewRemote(IndexTransport(t, n)))
	}
	return s
}

// SearchResult is the answer of SearchPartial.
type SearchResult struct {
	*index.Result
	// Answered are the nodes whose shards contributed.
	Answered []string
	// Missing maps each node that did not answer (in time) to its error.
	Missing map[string]error
}

// Partial reports whether some shard is missing from the result.
func (r *SearchResult) Partial() bool { return len(r.Missing) > 0 }

// SearchPartial searches every shard with the global statistics of the
// shards that answered the statistics round, and merges the answers of
// those that answered the search too. It fails only if no shard answers.
func (s *Searcher) SearchPartial(ctx context.Context, q index.Query) (*SearchResult, error) {
	q = q.Normalize()
	res := &SearchResult{Result: &index.Result{}, Missing: map[string]error{}}
	stats := make([]*index.Stats, len(s.remotes))
	errs := make([]error, len(s.remotes))
	s.each(ctx, func(ctx context.Context, i int) {
		stats[i], errs[i] = s.remotes[i].Stats(ctx, q.Terms)
	}, nil)
	global := &index.Stats{DF: map[string]int64{}}
	live := make([]bool, len(s.remotes))
	for i := range stats {
		if errs[i] != nil {
			res.Missing[s.nodes[i]] = errs[i]
			continue
		}
		global.Add(stats[i])
		live[i] = true
	}
	results := make([]*index.Result, len(s.remotes))
	s.each(ctx, func(ctx context.Context, i int) {
		results[i], errs[i] = s.remotes[i].Search(ctx, q, global)
	}, live)
	var lists [][]index.Hit
	for i := range results {
		if !live[i] {
			continue
		}
		if errs[i] != nil {
			res.Missing[s.nodes[i]] = errs[i]
			continue
		}
		res.Answered = append(res.Answered, s.nodes[i])
		lists = append(lists, results[i].Hits)
		res.Postings += results[i].Postings
	}
	if len(res.Answered) == 0 {
		return nil, &Error{Op: "search", Err: errors.Join(errs...)}
	}
	res.Hits = index.MergeHits(q.K, lists...)
	return res, nil
}

// each runs f for every shard (those with live[i], if live is set) in
// parallel, each under the shard deadline.
func (s *Searcher) each(ctx context.Context, f func(ctx context.Context, i int), live []bool) {
	var wg sync.WaitGroup
	for i := range s.remotes {
		if live != nil && !live[i] {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, s.timeout)
			defer cancel()
			f(ctx, i)
		})
	}
	wg.Wait()
}

// Search implements index.Searcher: global (nil: gathered from the shards)
// statistics, all shards required.
func (s *Searcher) Search(ctx context.Context, q index.Query, global *index.Stats) (*index.Result, error) {
	if global == nil {
		r, err := s.SearchPartial(ctx, q)
		if err != nil {
			return nil, err
		}
		if r.Partial() {
			return nil, s.missingErr(r.Missing)
		}
		return r.Result, nil
	}
	q = q.Normalize()
	results := make([]*index.Result, len(s.remotes))
	errs := make([]error, len(s.remotes))
	s.each(ctx, func(ctx context.Context, i int) { results[i], errs[i] = s.remotes[i].Search(ctx, q, global) }, nil)
	out := &index.Result{}
	var lists [][]index.Hit
	for i, r := range results {
		if errs[i] != nil {
			return nil, &Error{Op: "search", Subject: s.nodes[i], Err: errs[i]}
		}
		lists = append(lists, r.Hits)
		out.Postings += r.Postings
	}
	out.Hits = index.MergeHits(q.K, lists...)
	return out, nil
}

func (s *Searcher) missingErr(m map[string]error) error {
	for _, n := range s.nodes {
		if err, ok := m[n]; ok {
			return &Error{Op: "search", Subject: n, Err: err}
		}
	}
	return nil
}

// Stats implements index.Searcher: the sum of every shard's statistics.
func (s *Searcher) Stats(ctx context.Context, terms []string) (*index.Stats, error) {
	stats := make([]*index.Stats, len(s.remotes))
	errs := make([]error, len(s.remotes))
	s.each(ctx, func(ctx context.Context, i int) { stats[i], errs[i] = s.remotes[i].Stats(ctx, terms) }, nil)
	out := &index.Stats{DF: map[string]int64{}}
	for i := range stats {
		if errs[i] != nil {
			return nil, &Error{Op: "stats", Subject: s.nodes[i], Err: errs[i]}
		}
		out.Add(stats[i])
	}
	return out, nil
}
