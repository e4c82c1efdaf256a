package index

import (
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// docEntry is the stored part of a document: its fields and its length.
type docEntry struct {
	url, title string
	len        uint32
}

// qterm is a query term prepared for scoring.
type qterm struct {
	idx int // position in the canonical (sorted) term order
	pl  *postingList
	idf float64
	ub  float64
}

// engine runs top-k retrieval over posting lists whose ids index docs, or,
// when seg is set, the documents of an on-disk segment read through it.
// The Shard, the term-partitioned coordinator and the segments of a Dir
// share it, so all score with the very same arithmetic.
type engine struct {
	p       BM25
	avgdl   float64
	docs    []docEntry
	seg     *segDocs
	deleted *roaring.Bitmap
	// floor, if floored, is a score below which no document can be among
	// the hits: the k-th score already found in other parts of a Dir.
	floor   float64
	floored bool
}

// docLen returns the length of document doc.
func (e *engine) docLen(doc uint32) uint32 {
	if e.seg == nil {
		return e.docs[doc].len
	}
	return e.seg.length(doc)
}

// cand is a scored document in the top-k heap.
type cand struct {
	doc   uint32
	score float64
}

// topk is a bounded heap whose root is the worst kept candidate. Its
// documents are docs, or seg's when seg is set.
type topk struct {
	k     int
	h     []cand
	docs  []docEntry
	seg   *segDocs
	floor float64 // see engine.floor; -Inf for none
}

// worse reports whether a ranks after b. URLs, which a segment reads from
// disk, are looked at only to break a tie.
func (t *topk) worse(a, b cand) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return t.url(b.doc) < t.url(a.doc)
}

func (t *topk) url(doc uint32) string {
	if t.seg == nil {
		return t.docs[doc].url
	}
	return t.seg.url(doc)
}

func (t *topk) full() bool { return len(t.h) >= t.k }

// threshold is the score a document must reach (ties then go by URL), or
// -Inf while any will do.
func (t *topk) threshold() float64 {
	if !t.full() {
		return t.floor
	}
	return max(t.h[0].score, t.floor)
}

func (t *topk) offer(c cand) {
	if c.score < t.floor {
		return
	}
	if !t.full() {
		t.h = append(t.h, c)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !t.worse(t.h[0], c) {
		return
	}
	t.h[0] = c
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && t.worse(t.h[l], t.h[m]) {
			m = l
		}
		if r < len(t.h) && t.worse(t.h[r], t.h[m]) {
			m = r
		}
		if m == i {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

func (t *topk) hits() []Hit {
	slices.SortFunc(t.h, func(a, b cand) int {
		if t.worse(b, a) {
			return -1
		}
		if t.worse(a, b) {
			return 1
		}
		return 0
	})
	hits := make([]Hit, len(t.h))
	for i, c := range t.h {
		if t.seg != nil {
			url, title := t.seg.fields(c.doc)
			hits[i] = Hit{URL: url, Title: title, Score: c.score}
			continue
		}
		d := &t.docs[c.doc]
		hits[i] = Hit{URL: d.url, Title: d.title, Score: c.score}
	}
	return hits
}

// run returns the top k documents for terms combined by op, and the number
// of postings scored. OR queries use WAND (Broder et al. 2003): cursors are
// kept in id order and a document is scored only when the upper bounds of
// the terms that may contain it reach the current k-th score. AND queries
// intersect by leapfrogging from the rarest term. Scores always sum the
// terms' contributions in canonical (ascending term) order.
func (e *engine) run(terms []qterm, nTerms int, op Op, k int) ([]Hit, int64) {
	top := &topk{k: k, docs: e.docs, seg: e.seg, floor: math.Inf(-1)}
	if e.floored {
		top.floor = e.floor
	}
	curs := make([]cursor, len(terms))
	active := make([]*cursor, 0, len(terms))
	for i := range terms {
		if terms[i].pl == nil || terms[i].pl.count() == 0 {
			if op == And {
				return nil, 0
			}
			continue
		}
		curs[i].reset(terms[i].pl, &terms[i])
		if !curs[i].done {
			active = append(active, &curs[i])
		}
	}
	if len(active) == 0 {
		return nil, 0
	}
	contrib := make([]float64, nTerms)
	present := make([]bool, nTerms)
	var scored int64
	score := func(doc uint32, at []*cursor) float64 {
		norm := e.p.norm(e.docLen(doc), e.avgdl)
		for _, c := range at {
			contrib[c.t.idx] = e.p.termScore(c.t.idf, c.tf(), norm)
			present[c.t.idx] = true
		}
		scored += int64(len(at))
		s := 0.0
		for i := range present {
			if present[i] {
				s += contrib[i]
				present[i] = false
			}
		}
		return s
	}
	if op == And {
		e.and(active, top, score)
	} else {
		e.wand(active, top, score)
	}
	return top.hits(), scored
}

func sortByDoc(a []*cursor) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].doc < a[j-1].doc; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func dropDone(a []*cursor) []*cursor {
	return slices.DeleteFunc(a, func(c *cursor) bool { return c.done })
}

func (e *engine) isDeleted(doc uint32) bool {
	return e.deleted != nil && e.deleted.Contains(doc)
}

func (e *engine) wand(active []*cursor, top *topk, score func(uint32, []*cursor) float64) {
	sortByDoc(active)
	for len(active) > 0 {
		theta := top.threshold()
		pivot := 0
		if !math.IsInf(theta, -1) {
			acc, found := 0.0, false
			for i, c := range active {
				acc += c.t.ub
				if acc >= theta {
					pivot, found = i, true
					break
				}
			}
			if !found {
				return // no remaining document can enter the top k
			}
		}
		pd := active[pivot].doc
		if active[0].doc == pd {
			n := 1
			for n < len(active) && active[n].doc == pd {
				n++
			}
			if !e.isDeleted(pd) {
				top.offer(cand{doc: pd, score: score(pd, active[:n])})
			}
			for _, c := range active[:n] {
				c.next()
			}
		} else {
			// Documents before pd appear only in active[:pivot], whose
			// bounds sum below the threshold: skip them all.
			for _, c := range active[:pivot] {
				c.seek(pd)
			}
		}
		active = dropDone(active)
		sortByDoc(active)
	}
}

func (e *engine) and(active []*cursor, top *topk, score func(uint32, []*cursor) float64) {
	slices.SortFunc(active, func(a, b *cursor) int { return a.pl.count() - b.pl.count() })
	ubSum := 0.0
	for _, c := range active {
		ubSum += c.t.ub
	}
	lead := active[0]
	for !lead.done {
		if ubSum < top.threshold() {
			return
		}
		d := lead.doc
		matched := true
		for _, c := range active[1:] {
			c.seek(d)
			if c.done {
				return
			}
			if c.doc > d {
				lead.seek(c.doc)
				matched = false
				break
			}
		}
		if matched {
			if !e.isDeleted(d) {
				top.offer(cand{doc: d, score: score(d, active)})
			}
			lead.next()
		}
	}
}
