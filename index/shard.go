package index

import (
	"context"
	"sync"
)

// Document is what the index stores about a page: its URL (identity), its
// title (stored and indexed) and its text (indexed).
type Document struct {
	URL   string
	Title string
	Text  string
	// Lang is the document's language (a BCP 47 tag, "" if unknown): it
	// picks the Analyzer's stop words (Analyzer.StopByLang).
	Lang string
}

// ShardOptions configures a Shard. The zero value is ready to use.
type ShardOptions struct {
	// Analyzer turns text into terms; nil means &Analyzer{} (no stop words).
	// Queries must be analysed the same way.
	Analyzer *Analyzer
	// BM25 holds the scoring parameters; the zero value is Lucene's.
	BM25 BM25
}

// Shard is an in-memory inverted index over a set of documents: a term
// dictionary mapping each term to a roaring bitmap of local document ids with
// term frequencies beside it, document lengths and stored fields.
//
// Re-adding a URL replaces its document: the old id goes into a deletions
// bitmap and stays in the postings until Compact. A Shard is safe for
// concurrent use: Add, Delete and Compact take a write lock, Search and Stats
// a read lock (the first read after writes briefly takes the write lock to
// seal postings buffered by Add into the bitmaps). Memory: 1 byte per
// posting for its frequency plus the roaring bitmap (≈ 2 bytes per posting
// in array containers, fewer in run or bitmap containers), ~300 bytes per
// distinct term, and ~40 bytes plus the stored strings per document; about
// 1.1 KB per 150-word page on the 20,000-page benchmark.
type Shard struct {
	an *Analyzer
	p  BM25

	mu sync.RWMutex
	dictionary
	docTable
	count termCounter // Add's scratch
}

var _ Searcher = (*Shard)(nil)

// NewShard returns an empty shard. opts may be nil: every field takes its
// default. The options are copied, so the caller may change or reuse them
// afterwards (the Analyzer they point to is shared, not copied).
func NewShard(opts *ShardOptions) *Shard {
	var o ShardOptions
	if opts != nil {
		o = *opts
	}
	an := o.Analyzer
	if an == nil {
		an = &Analyzer{}
	}
	return &Shard{
		an:         an,
		p:          o.BM25.withDefaults(),
		dictionary: newDictionary(),
		docTable:   newDocTable(),
	}
}

// Analyzer returns the shard's analyzer, for parsing queries.
func (s *Shard) Analyzer() *Analyzer { return s.an }

// Add indexes d, replacing any earlier document with the same URL. It
// reports whether a document was replaced. Cost: O(len(title)+len(text))
// plus one bitmap append per distinct term.
func (s *Shard) Add(d Document) (replaced bool, err error) {
	replaced, _, err = s.addCounted(d)
	return replaced, err
}

// addCounted is Add that also returns the number of postings added (the
// distinct terms of d), for a caller that estimates the shard's memory.
func (s *Shard) addCounted(d Document) (replaced bool, postings int, err error) {
	if d.URL == "" {
		return false, 0, &Error{Op: "add", Err: ErrNoURL}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full() {
		return false, 0, &Error{Op: "add", Subject: d.URL, Err: ErrFull}
	}
	replaced = s.delete(d.URL)
	id := s.nextID()
	dl := s.count.count(s.an, d)
	for t, n := range s.count.tf {
		s.addPosting(t, id, n, dl)
	}
	postings = len(s.count.tf)
	s.count.release()
	s.add(d.URL, d.Title, dl)
	return replaced, postings, nil
}

// addTF is addCounted for a document analysed beforehand: dl terms,
// tf their frequencies.
func (s *Shard) addTF(url, title string, dl uint32, tf map[string]uint32) (replaced bool, postings int, err error) {
	if url == "" {
		return false, 0, &Error{Op: "add", Err: ErrNoURL}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full() {
		return false, 0, &Error{Op: "add", Subject: url, Err: ErrFull}
	}
	replaced = s.delete(url)
	id := s.nextID()
	for t, n := range tf {
		s.addPosting(t, id, n, dl)
	}
	s.add(url, title, dl)
	return replaced, len(tf), nil
}

// seal moves the postings buffered by Add into the bitmaps, where they take
// less memory, for a writer that seals periodically (readers seal anyway
// before reading). The buffers keep their capacity, which the next period
// reuses instead of growing them again from nothing.
func (s *Shard) seal() {
	s.mu.Lock()
	for _, pl := range s.dirty {
		pl.docs.AddMany(pl.pending)
		pl.pending = pl.pending[:0]
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	s.mu.Unlock()
}

// Delete removes the document with the given URL and reports whether there
// was one. Its postings stay (masked) until Compact.
func (s *Shard) Delete(url string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delete(url)
}

// Has reports whether a live document has the given URL. Cost: one map
// lookup.
func (s *Shard) Has(url string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.byURL[url]
	return ok
}

// Len returns the number of live documents.
func (s *Shard) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(s.live)
}

// Deleted returns the number of deleted documents whose postings Compact
// would reclaim.
func (s *Shard) Deleted() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(s.deleted.GetCardinality())
}

// Terms returns the number of terms in the dictionary (including terms
// that only deleted documents contain, until Compact).
func (s *Shard) Terms() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.dict)
}

// Compact rewrites the shard without its deleted documents: live documents
// are renumbered densely, postings of deleted documents and terms left
// without postings are dropped. Cost: O(postings); the shard is locked for
// writing meanwhile.
func (s *Shard) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	remap := s.compact()
	if remap == nil {
		return
	}
	s.dirty = sealAll(s.dirty)
	for t, pl := range s.dict {
		npl := rewrite(pl, remap, s.docs)
		if npl == nil {
			delete(s.dict, t)
			continue
		}
		s.dict[t] = npl
	}
}

// rewrite returns pl with ids mapped through remap (^0 drops a posting), or
// nil when nothing is left. remap must be increasing on kept ids.
func rewrite(pl *postingList, remap []uint32, docs []docEntry) *postingList {
	npl := newPostingList()
	it := pl.docs.Iterator()
	for i := 0; it.HasNext(); i++ {
		id := remap[it.Next()]
		if id == ^uint32(0) {
			continue
		}
		npl.add(id, pl.freq(i), docs[id].len)
	}
	if npl.count() == 0 {
		return nil
	}
	npl.seal()
	npl.docs.RunOptimize()
	return npl
}

// Stats reports the shard's live statistics for terms (nil means every
// term). Cost: O(containers) per term when there are deletions.
func (s *Shard) Stats(ctx context.Context, terms []string) (*Stats, error) {
	s.rlockSealed()
	defer s.mu.RUnlock()
	st := &Stats{Docs: s.live, Length: s.liveLen}
	if terms == nil {
		st.DF = make(map[string]int64, len(s.dict))
		for t, pl := range s.dict {
			if n := pl.liveDF(s.deleted); n > 0 {
				st.DF[t] = n
			}
		}
		return st, nil
	}
	st.DF = make(map[string]int64, len(terms))
	for _, t := range terms {
		if pl := s.dict[t]; pl != nil {
			if n := pl.liveDF(s.deleted); n > 0 {
				st.DF[t] = n
			}
		}
	}
	return st, nil
}

// Search returns the top q.K live documents for q, scored with global (nil
// means the shard's own statistics). OR queries are evaluated with WAND
// dynamic pruning, AND queries by intersection; Result.Postings counts the
// postings scored.
func (s *Shard) Search(ctx context.Context, q Query, global *Stats) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "search", Err: err}
	}
	q = q.Normalize()
	s.rlockSealed()
	defer s.mu.RUnlock()
	if global == nil {
		var err error
		if global, err = s.statsLocked(q.Terms); err != nil {
			return nil, err
		}
	}
	hits, n := s.searchLocked(q, global)
	return &Result{Hits: hits, Postings: n}, nil
}

// rlockSealed read-locks the shard with every posting list sealed.
func (s *Shard) rlockSealed() {
	for {
		s.mu.RLock()
		if len(s.dirty) == 0 {
			return
		}
		s.mu.RUnlock()
		s.mu.Lock()
		s.dirty = sealAll(s.dirty)
		s.mu.Unlock()
	}
}

func (s *Shard) statsLocked(terms []string) (*Stats, error) {
	st := &Stats{Docs: s.live, Length: s.liveLen, DF: make(map[string]int64, len(terms))}
	for _, t := range terms {
		if pl := s.dict[t]; pl != nil {
			st.DF[t] = pl.liveDF(s.deleted)
		}
	}
	return st, nil
}

func (s *Shard) searchLocked(q Query, global *Stats) ([]Hit, int64) {
	e := engine{p: s.p, avgdl: global.avgLen(), docs: s.docs, deleted: s.deleted}
	return e.run(prepare(q.Terms, s.dict, s.p, global), len(q.Terms), q.Op, q.K)
}

// prepare looks up the posting lists of the (canonical) terms and computes
// their idf and upper bounds from the statistics.
func prepare(terms []string, dict map[string]*postingList, p BM25, st *Stats) []qterm {
	avgdl := st.avgLen()
	qt := make([]qterm, len(terms))
	for i, t := range terms {
		qt[i] = qterm{idx: i, pl: dict[t], idf: IDF(st.Docs, st.DF[t])}
		if qt[i].pl != nil {
			qt[i].ub = qt[i].pl.upperBound(p, qt[i].idf, avgdl)
		}
	}
	return qt
}
