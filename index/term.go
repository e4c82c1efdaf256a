package index

import (
	"context"
	"fmt"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"
)

// PostingList is one term's postings as they travel between nodes of a
// term-partitioned index: global document ids and, beside them, term
// frequencies (Freqs[i] belongs to the i-th smallest id). Docs is nil when
// the node has no postings for Term. Docs of a list returned by a local
// TermShard is the shard's own bitmap: it must not be modified, and stays
// valid only until the shard is next written (TermIndex guarantees that
// during a query); Freqs is a copy.
type PostingList struct {
	Term  string
	Docs  *roaring.Bitmap
	Freqs []uint32
}

// PostingSource returns the posting lists of terms (one per term, in order).
// Implementations: *TermShard and *Remote. Safe for concurrent use.
type PostingSource interface {
	Postings(ctx context.Context, terms []string) ([]PostingList, error)
}

// TermShard is one node of a term-partitioned index ("global index
// organization"): it owns a subset of the vocabulary with the complete
// posting lists of those terms, over global document ids. It is written
// through its TermIndex. Safe for concurrent use.
type TermShard struct {
	mu sync.RWMutex
	dictionary
}

var _ PostingSource = (*TermShard)(nil)

// NewTermShard returns an empty term shard.
func NewTermShard() *TermShard { return &TermShard{dictionary: newDictionary()} }

// Postings returns the shard's posting lists for terms without copying.
func (ts *TermShard) Postings(ctx context.Context, terms []string) ([]PostingList, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "postings", Err: err}
	}
	for {
		ts.mu.RLock()
		if len(ts.dirty) == 0 {
			break
		}
		ts.mu.RUnlock()
		ts.mu.Lock()
		ts.dirty = sealAll(ts.dirty)
		ts.mu.Unlock()
	}
	defer ts.mu.RUnlock()
	out := make([]PostingList, len(terms))
	for i, t := range terms {
		out[i].Term = t
		if pl := ts.dict[t]; pl != nil {
			out[i].Docs, out[i].Freqs = pl.docs, pl.freqs32()
		}
	}
	return out, nil
}

// Terms returns the number of terms the shard owns.
func (ts *TermShard) Terms() int {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	return len(ts.dict)
}

// TermIndexOptions configures a TermIndex.
type TermIndexOptions struct {
	// Shards is the number of term shards; 0 means 4.
	Shards int
	// Analyzer and BM25 are as in ShardOptions.
	Analyzer *Analyzer
	BM25     BM25
	// Source, if set, wraps the way the coordinator reaches shard i at
	// query time, e.g. NewRemote(&Meter{T: &Handler{Postings: s}}) to put
	// a transport between them. nil means direct calls.
	Source func(i int, s *TermShard) PostingSource
}

// TermIndex is a term-partitioned index with its coordinator: terms are
// assigned to shards by hash, while the coordinator keeps the document
// table (stored fields, lengths, deletions). A query fetches the posting
// lists of its terms from their owners — whole lists, which is the cost the
// book warns about — and intersects or scores them at the coordinator with
// the same WAND/AND engine and statistics as a Shard, so results equal an
// unsharded index. Safe for concurrent use; Add and Compact lock out
// queries.
type TermIndex struct {
	an      *Analyzer
	p       BM25
	shards  []*TermShard
	sources []PostingSource

	mu sync.RWMutex
	docTable
	count termCounter // Add's scratch
}

var _ Searcher = (*TermIndex)(nil)

// NewTermIndex returns an empty term-partitioned index. opts may be nil:
// every field takes its default. The options are copied, so the caller may
// change or reuse them afterwards.
func NewTermIndex(opts *TermIndexOptions) *TermIndex {
	var o TermIndexOptions
	if opts != nil {
		o = *opts
	}
	n := o.Shards
	if n <= 0 {
		n = 4
	}
	an := o.Analyzer
	if an == nil {
		an = &Analyzer{}
	}
	ti := &TermIndex{an: an, p: o.BM25.withDefaults(), docTable: newDocTable()}
	for i := range n {
		s := NewTermShard()
		ti.shards = append(ti.shards, s)
		var src PostingSource = s
		if o.Source != nil {
			src = o.Source(i, s)
		}
		ti.sources = append(ti.sources, src)
	}
	return ti
}

// Shard returns term shard i (0 ≤ i < number of shards).
func (ti *TermIndex) Shard(i int) *TermShard { return ti.shards[i] }

// Owner returns the shard that owns term.
func (ti *TermIndex) Owner(term string) int {
	return int(xxhash.Sum64String(term) % uint64(len(ti.shards)))
}

// Add indexes d, replacing an earlier document with the same URL, and sends
// each of its terms' postings to the term's owner.
func (ti *TermIndex) Add(d Document) (replaced bool, err error) {
	if d.URL == "" {
		return false, &Error{Op: "add", Err: ErrNoURL}
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.full() {
		return false, &Error{Op: "add", Subject: d.URL, Err: ErrFull}
	}
	replaced = ti.delete(d.URL)
	id := ti.nextID()
	dl := ti.count.count(ti.an, d)
	for _, s := range ti.shards {
		s.mu.Lock()
	}
	for t, n := range ti.count.tf {
		ti.shards[ti.Owner(t)].addPosting(t, id, n, dl)
	}
	for _, s := range ti.shards {
		s.mu.Unlock()
	}
	ti.count.release()
	ti.add(d.URL, d.Title, dl)
	return replaced, nil
}

// Compact drops deleted documents from the document table and from every
// shard's postings, renumbering ids densely. Cost: O(all postings).
func (ti *TermIndex) Compact() {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	remap := ti.compact()
	if remap == nil {
		return
	}
	for _, s := range ti.shards {
		s.mu.Lock()
		s.dirty = sealAll(s.dirty)
		for t, pl := range s.dict {
			if npl := rewrite(pl, remap, ti.docs); npl != nil {
				s.dict[t] = npl
			} else {
				delete(s.dict, t)
			}
		}
		s.mu.Unlock()
	}
}

// fetch gets the posting lists of the canonical terms from their owners,
// one request per owner, in parallel.
func (ti *TermIndex) fetch(ctx context.Context, terms []string) (map[string]*postingList, error) {
	byOwner := make(map[int][]string)
	for _, t := range terms {
		o := ti.Owner(t)
		byOwner[o] = append(byOwner[o], t)
	}
	type reply struct {
		lists []PostingList
		err   error
		owner int
	}
	replies := make(chan reply, len(byOwner))
	var wg sync.WaitGroup
	for o, ts := range byOwner {
		wg.Go(func() {
			l, err := ti.sources[o].Postings(ctx, ts)
			replies <- reply{l, err, o}
		})
	}
	wg.Wait()
	close(replies)
	out := make(map[string]*postingList, len(terms))
	for r := range replies {
		if r.err != nil {
			return nil, &Error{Op: "postings", Subject: fmt.Sprintf("term shard %d", r.owner), Err: r.err}
		}
		for _, l := range r.lists {
			if l.Docs == nil || l.Docs.IsEmpty() {
				continue
			}
			if int(l.Docs.GetCardinality()) != len(l.Freqs) || uint64(l.Docs.Maximum()) >= uint64(len(ti.docs)) {
				return nil, &Error{Op: "postings", Subject: l.Term, Err: fmt.Errorf("%w: posting list does not match the document table", ErrCorrupt)}
			}
			pl := &postingList{docs: l.Docs, freqs: make([]uint8, 0, len(l.Freqs))}
			it := l.Docs.Iterator()
			for i := 0; it.HasNext(); i++ {
				if l.Freqs[i] == 0 {
					return nil, &Error{Op: "postings", Subject: l.Term, Err: fmt.Errorf("%w: zero term frequency", ErrCorrupt)}
				}
				pl.appendFreq(l.Freqs[i])
				pl.note(l.Freqs[i], ti.docs[it.Next()].len)
			}
			out[l.Term] = pl
		}
	}
	return out, nil
}

// Stats reports the collection statistics for terms (nil means every term,
// which asks every shard for its whole vocabulary).
func (ti *TermIndex) Stats(ctx context.Context, terms []string) (*Stats, error) {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	if terms == nil {
		for _, s := range ti.shards {
			s.mu.RLock()
			for t := range s.dict {
				terms = append(terms, t)
			}
			s.mu.RUnlock()
		}
	}
	dict, err := ti.fetch(ctx, terms)
	if err != nil {
		return nil, err
	}
	return ti.statsLocked(terms, dict), nil
}

func (ti *TermIndex) statsLocked(terms []string, dict map[string]*postingList) *Stats {
	st := &Stats{Docs: ti.live, Length: ti.liveLen, DF: make(map[string]int64, len(terms))}
	for _, t := range terms {
		if pl := dict[t]; pl != nil {
			if n := pl.liveDF(ti.deleted); n > 0 {
				st.DF[t] = n
			}
		}
	}
	return st
}

// Search fetches the query terms' posting lists from their owners and
// scores them at the coordinator (global nil means exact statistics
// computed from the fetched lists and the document table).
func (ti *TermIndex) Search(ctx context.Context, q Query, global *Stats) (*Result, error) {
	q = q.Normalize()
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	dict, err := ti.fetch(ctx, q.Terms)
	if err != nil {
		return nil, err
	}
	if global == nil {
		global = ti.statsLocked(q.Terms, dict)
	}
	e := engine{p: ti.p, avgdl: global.avgLen(), docs: ti.docs, deleted: ti.deleted}
	hits, n := e.run(prepare(q.Terms, dict, ti.p, global), len(q.Terms), q.Op, q.K)
	return &Result{Hits: hits, Postings: n}, nil
}
