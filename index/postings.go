package index

import (
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// postingList is the postings of one term: a roaring bitmap of document ids
// with the term frequencies beside it, freqs[i] belonging to the i-th
// smallest id. Frequencies take one byte; the rare ones from 255 up are
// kept exactly in big, keyed by position. front is the Pareto frontier of its (tf, document length)
// pairs, deleted documents included: the postings no other beats on both
// higher tf and shorter document. BM25 grows with tf and shrinks with
// length, so the best posting for any avgdl is on the frontier, and the
// term's exact upper bound for dynamic pruning costs O(len(front)), a few
// points, instead of a scan of the list.
//
// Adding goes to pending, a plain slice of ids larger than any in docs:
// appending to a slice is several times cheaper than a bitmap insertion and
// adds no pointers for the garbage collector to chase. seal moves pending
// into the bitmap in bulk; every reader seals first.
type postingList struct {
	docs    *roaring.Bitmap
	pending []uint32
	freqs   []uint8        // for docs, then for pending; 255 means see big
	big     map[int]uint32 // frequencies ≥ 255 by position
	front   []tfLen        // ascending tf and ascending length
}

type tfLen struct{ tf, len uint32 }

func newPostingList() *postingList {
	return &postingList{docs: roaring.New()}
}

// add appends a posting; doc must be larger than every id already present.
// It reports whether pl had nothing pending before (and so needs sealing).
func (pl *postingList) add(doc, tf, docLen uint32) (becameDirty bool) {
	becameDirty = len(pl.pending) == 0
	pl.pending = append(pl.pending, doc)
	pl.appendFreq(tf)
	pl.note(tf, docLen)
	return becameDirty
}

// appendFreq appends the frequency of the next posting.
func (pl *postingList) appendFreq(tf uint32) {
	if tf >= 255 {
		if pl.big == nil {
			pl.big = make(map[int]uint32)
		}
		pl.big[len(pl.freqs)] = tf
		tf = 255
	}
	pl.freqs = append(pl.freqs, uint8(tf))
}

// freq returns the frequency of the posting at position i.
func (pl *postingList) freq(i int) uint32 {
	if f := pl.freqs[i]; f < 255 {
		return uint32(f)
	}
	return pl.big[i]
}

// count returns the number of postings.
func (pl *postingList) count() int { return len(pl.freqs) }

// freqs32 returns a copy of the frequencies as uint32s.
func (pl *postingList) freqs32() []uint32 {
	out := make([]uint32, len(pl.freqs))
	for i := range out {
		out[i] = pl.freq(i)
	}
	return out
}

// seal moves the pending ids into the bitmap.
func (pl *postingList) seal() {
	if len(pl.pending) == 0 {
		return
	}
	pl.docs.AddMany(pl.pending)
	pl.pending = nil
}

// dictionary maps terms to their posting lists and remembers the lists
// holding postings not yet sealed (see sealAll): the postings of a Shard
// and of a TermShard. The caller locks.
type dictionary struct {
	dict  map[string]*postingList
	dirty []*postingList
}

func newDictionary() dictionary {
	return dictionary{dict: make(map[string]*postingList)}
}

// addPosting appends doc's posting to the list of term t (frequency n,
// document length dl), creating the list of a new term with a copy of t.
func (d *dictionary) addPosting(t string, doc, n, dl uint32) {
	pl := d.dict[t]
	if pl == nil {
		pl = newPostingList()
		d.dict[strings.Clone(t)] = pl
	}
	if pl.add(doc, n, dl) {
		d.dirty = append(d.dirty, pl)
	}
}

// sealAll seals the lists of dirty and returns dirty emptied for reuse.
func sealAll(dirty []*postingList) []*postingList {
	for _, pl := range dirty {
		pl.seal()
	}
	clear(dirty)
	return dirty[:0]
}

// note adds (tf, docLen) to the frontier unless a point dominates it.
func (pl *postingList) note(tf, docLen uint32) {
	f := pl.front
	// The first point with tf' ≥ tf has the shortest length among them.
	i := 0
	for i < len(f) && f[i].tf < tf {
		i++
	}
	if i < len(f) && f[i].len <= docLen {
		return // dominated
	}
	// Points with tf' ≤ tf and len' ≥ docLen are dominated by the new one;
	// they sit just before i (lengths ascend).
	j := i
	for j > 0 && f[j-1].len >= docLen {
		j--
	}
	if i < len(f) && f[i].tf == tf {
		i++ // same tf, longer document: replaced
	}
	pl.front = append(f[:j], append([]tfLen{{tf, docLen}}, f[i:]...)...)
}

// upperBound is the largest BM25 contribution any posting of pl makes,
// inflated by a relative 1e-9 so that summing bounds in another order than
// scores can never make a bound fall below a real score.
func (pl *postingList) upperBound(p BM25, idf, avgdl float64) float64 {
	if len(pl.freqs) == 0 || idf <= 0 {
		return 0 // a non-positive idf (stale statistics) never adds to a score
	}
	best := 0.0
	for _, pt := range pl.front {
		best = max(best, p.termScore(idf, pt.tf, p.norm(pt.len, avgdl)))
	}
	return best * (1 + 1e-9)
}

// liveDF is the number of postings of pl that are not deleted. Cost:
// O(containers).
func (pl *postingList) liveDF(deleted *roaring.Bitmap) int64 {
	n := int64(pl.docs.GetCardinality())
	if deleted != nil && !deleted.IsEmpty() {
		n -= int64(pl.docs.AndCardinality(deleted))
	}
	return n
}

// cursor walks a posting list in id order, tracking the index of the
// current posting.
type cursor struct {
	pl   *postingList
	it   roaring.IntPeekable
	doc  uint32
	pos  int
	done bool
	t    *qterm
}

func (c *cursor) reset(pl *postingList, t *qterm) {
	c.pl, c.t, c.pos, c.done = pl, t, -1, false
	c.it = pl.docs.Iterator()
	c.next()
}

// next moves to the following posting.
func (c *cursor) next() {
	if !c.it.HasNext() {
		c.done = true
		return
	}
	c.doc = c.it.Next()
	c.pos++
}

// seek moves to the first posting with id ≥ target. Short hops step;
// long ones skip inside the bitmap and recover the position by rank.
func (c *cursor) seek(target uint32) {
	for steps := 0; !c.done && c.doc < target; steps++ {
		if steps == 4 {
			c.it.AdvanceIfNeeded(target)
			if !c.it.HasNext() {
				c.done = true
				return
			}
			c.doc = c.it.Next()
			c.pos = int(c.pl.docs.Rank(c.doc)) - 1
			return
		}
		c.next()
	}
}

func (c *cursor) tf() uint32 {
	if f := c.pl.freqs[c.pos]; f < 255 {
		return uint32(f)
	}
	return c.pl.big[c.pos]
}
