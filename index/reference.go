package index

import (
	"context"
	"strings"
	"sync"
)

// Reference is a brute-force Searcher: it keeps each document's term
// frequencies and scores every document for every query. It is the exact
// baseline the Shard's pruning and the distributed searches are tested
// against, and a fallback for tiny collections. Search costs O(documents ×
// query terms). Safe for concurrent use.
type Reference struct {
	an *Analyzer
	p  BM25

	mu   sync.RWMutex
	docs map[string]*refDoc
}

type refDoc struct {
	title string
	tf    map[string]uint32
	len   uint32
}

var _ Searcher = (*Reference)(nil)

// NewReference returns an empty Reference using the analyzer and BM25
// parameters of opts, like NewShard. opts may be nil: every field takes its
// default. The options are copied, so the caller may change or reuse them
// afterwards.
func NewReference(opts *ShardOptions) *Reference {
	var o ShardOptions
	if opts != nil {
		o = *opts
	}
	an := o.Analyzer
	if an == nil {
		an = &Analyzer{}
	}
	return &Reference{an: an, p: o.BM25.withDefaults(), docs: make(map[string]*refDoc)}
}

// Add indexes d, replacing any document with the same URL.
func (r *Reference) Add(d Document) (replaced bool, err error) {
	if d.URL == "" {
		return false, &Error{Op: "add", Err: ErrNoURL}
	}
	terms := r.an.DocTerms(r.an.DocTerms(nil, d.Title, d.Lang), d.Text, d.Lang)
	doc := &refDoc{title: d.Title, tf: make(map[string]uint32), len: uint32(len(terms))}
	for _, t := range terms {
		doc.tf[strings.Clone(t)]++
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, replaced = r.docs[d.URL]
	r.docs[strings.Clone(d.URL)] = doc
	return replaced, nil
}

// Delete removes the document with the given URL.
func (r *Reference) Delete(url string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.docs[url]
	delete(r.docs, url)
	return ok
}

// Stats reports the collection statistics for terms (nil: every term).
func (r *Reference) Stats(ctx context.Context, terms []string) (*Stats, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := &Stats{Docs: int64(len(r.docs)), DF: make(map[string]int64)}
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[t] = true
	}
	for _, d := range r.docs {
		st.Length += int64(d.len)
		for t := range d.tf {
			if terms == nil || want[t] {
				st.DF[t]++
			}
		}
	}
	return st, nil
}

// Search scores every document for q with global (nil: own statistics).
// Result.Postings counts every posting of the query terms.
func (r *Reference) Search(ctx context.Context, q Query, global *Stats) (*Result, error) {
	q = q.Normalize()
	if global == nil {
		var err error
		if global, err = r.Stats(ctx, q.Terms); err != nil {
			return nil, err
		}
	}
	avgdl := global.avgLen()
	idf := make([]float64, len(q.Terms))
	for i, t := range q.Terms {
		idf[i] = IDF(global.Docs, global.DF[t])
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	res := &Result{}
	var hits []Hit
	for url, d := range r.docs {
		norm := r.p.norm(d.len, avgdl)
		score, matched := 0.0, 0
		for i, t := range q.Terms { // canonical order, as every Searcher sums
			tf := d.tf[t]
			if tf == 0 {
				continue
			}
			matched++
			score += r.p.termScore(idf[i], tf, norm)
		}
		res.Postings += int64(matched)
		if matched == 0 || (q.Op == And && matched < len(q.Terms)) {
			continue
		}
		hits = append(hits, Hit{URL: url, Title: d.title, Score: score})
	}
	res.Hits = MergeHits(q.K, hits)
	return res, nil
}
