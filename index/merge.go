package index

import (
	"errors"

	"github.com/RoaringBitmap/roaring/v2"
)

// termIter walks a segment's dictionary in term order, reading each block
// once around the cache.
type termIter struct {
	r       *segReader
	rb      readBuf
	i       int64 // next block
	bi      blockIter
	inBlock bool
	prev    string
	seen    uint64
	e       termEntry
	err     error
}

func (r *segReader) termIter() *termIter { return &termIter{r: r} }

// next moves to the following entry (it.e), or returns false at the end or
// on an error (it.err).
func (it *termIter) next() bool {
	for it.err == nil {
		if it.inBlock {
			if e, ok := it.bi.next(); ok {
				e.term = string(it.bi.term)
				if it.seen > 0 && e.term <= it.prev {
					it.err = it.r.corrupt("dictionary terms out of order")
					return false
				}
				it.e, it.prev = e, e.term
				it.seen++
				return true
			}
			if it.bi.err != nil {
				it.err = it.bi.err
				return false
			}
			it.inBlock = false
		}
		if it.i >= it.r.blocks {
			if it.seen != it.r.terms {
				it.err = it.r.corrupt("dictionary has %d terms, footer says %d", it.seen, it.r.terms)
			}
			return false
		}
		b, err := it.r.block(it.i, 0, &it.rb)
		if err != nil {
			it.err = err
			return false
		}
		it.i++
		it.bi = it.r.blockIter(b)
		it.inBlock = true
	}
	return false
}

// mergeInput is one segment being merged with the deletions to drop.
type mergeInput struct {
	r    *segReader
	del  *roaring.Bitmap
	base uint32 // id of its first kept document in the output
}

// newID maps a kept document id to its id in the output: documents keep
// their order and deleted ones leave no gap, so no table is needed.
func (in *mergeInput) newID(id uint32) uint32 {
	return in.base + id - uint32(in.del.Rank(id))
}

// errMergeAborted is the cause of a merge interrupted by Close or Rewind.
var errMergeAborted = errors.New("interrupted")

// mergeSegments writes to path one segment with the documents of the
// inputs, in order, without those in their deletions (which must be ids of
// their segments), and returns the number of documents. It streams: each
// input is read front to back one section at a time around the cache, and
// besides read buffers (256 KiB per input) only one term's posting lists
// are in memory at once. stop is polled; an error from it aborts the
// merge.
func mergeSegments(path string, ins []mergeInput, stop func() error) (uint64, error) {
	w, err := createSegment(path, mergedDocs(ins))
	if err != nil {
		return 0, err
	}
	n, err := mergeInto(w, ins, stop)
	if err != nil {
		w.abort()
		return 0, err
	}
	return n, nil
}

// mergedDocs sets the bases of the inputs and returns the number of
// documents they keep.
func mergedDocs(ins []mergeInput) uint64 {
	var n uint64
	for j := range ins {
		ins[j].base = uint32(n)
		n += ins[j].r.docs - ins[j].del.GetCardinality()
	}
	return n
}

func mergeInto(w *segWriter, ins []mergeInput, stop func() error) (uint64, error) {
	var total uint64
	for _, in := range ins {
		r := in.r
		sr := r.seq(r.lensOff, 4*int64(r.docs))
		for id := uint32(0); uint64(id) < r.docs; id++ {
			l := sr.u32()
			if sr.err == nil && !in.del.Contains(id) {
				w.length(l)
				total += uint64(l)
			}
		}
		if sr.err != nil {
			return 0, sr.err
		}
	}
	if err := stop(); err != nil {
		return 0, err
	}
	// Offsets, then records: two passes over each input's offsets.
	for pass := range 2 {
		for _, in := range ins {
			r := in.r
			offs := r.seq(r.offsOff, 8*(int64(r.docs)+1))
			stored := r.seq(r.storedOff, r.hashOff-r.storedOff)
			prev := offs.u64()
			for id := uint32(0); uint64(id) < r.docs && offs.err == nil && stored.err == nil; id++ {
				next := offs.u64()
				if next < prev || next > uint64(r.hashOff-r.storedOff) {
					return 0, r.corrupt("document %d: bad record offsets", id)
				}
				live := !in.del.Contains(id)
				if pass == 0 {
					if live {
						w.recLen(int(next - prev))
					}
				} else {
					rec := stored.next(int(next - prev))
					if live && stored.err == nil {
						if _, _, ok := decodeRecord(rec); !ok {
							return 0, r.corrupt("document %d: bad record", id)
						}
						w.record(rec)
					}
				}
				prev = next
			}
			if err := errors.Join(offs.err, stored.err); err != nil {
				return 0, err
			}
		}
	}
	if err := stop(); err != nil {
		return 0, err
	}
	if err := mergeHashes(w, ins); err != nil {
		return 0, err
	}
	if err := mergeTerms(w, ins, stop); err != nil {
		return 0, err
	}
	if err := w.finish(total); err != nil {
		return 0, err
	}
	return w.n, nil
}

// mergeHashes merges the inputs' sorted hash entries of kept documents.
func mergeHashes(w *segWriter, ins []mergeInput) error {
	type head struct {
		in   *mergeInput
		sr   *seqReader
		left uint64
		h    uint64
		id   uint32 // output id
		ok   bool
	}
	heads := make([]head, len(ins))
	advance := func(hd *head) error {
		r := hd.in.r
		for hd.left > 0 {
			hd.left--
			b := hd.sr.next(12)
			if hd.sr.err != nil {
				return hd.sr.err
			}
			h, id := leUint64(b), leUint32(b[8:])
			if uint64(id) >= r.docs || (hd.ok && h < hd.h) {
				return r.corrupt("bad hash entries")
			}
			hd.h, hd.ok = h, true
			if !hd.in.del.Contains(id) {
				hd.id = hd.in.newID(id)
				return nil
			}
		}
		hd.ok = false
		return nil
	}
	for j := range ins {
		r := ins[j].r
		heads[j] = head{in: &ins[j], sr: r.seq(r.hashOff, 12*int64(r.docs)), left: r.docs}
		if err := advance(&heads[j]); err != nil {
			return err
		}
	}
	for {
		best := -1
		for j := range heads {
			if hd := &heads[j]; hd.ok &&
				(best < 0 || hd.h < heads[best].h || hd.h == heads[best].h && hd.id < heads[best].id) {
				best = j
			}
		}
		if best < 0 {
			return nil
		}
		hd := &heads[best]
		w.hash(hd.h, hd.id)
		if err := advance(hd); err != nil {
			return err
		}
	}
}

// mergeTerms merges the inputs' dictionaries and posting lists.
func mergeTerms(w *segWriter, ins []mergeInput, stop func() error) error {
	its := make([]*termIter, len(ins))
	post := make([]*seqReader, len(ins))
	live := make([]bool, len(ins))
	for j, in := range ins {
		its[j] = in.r.termIter()
		post[j] = in.r.seq(in.r.termsOff, in.r.dictIdxOff-in.r.termsOff)
		live[j] = its[j].next()
		if its[j].err != nil {
			return its[j].err
		}
	}
	var ids []uint32
	for count := 0; ; count++ {
		if count%512 == 511 {
			if err := stop(); err != nil {
				return err
			}
		}
		term := ""
		for j := range ins {
			if live[j] && (term == "" || its[j].e.term < term) {
				term = its[j].e.term
			}
		}
		if term == "" {
			return nil
		}
		out := &postingList{}
		ids = ids[:0]
		for j, in := range ins {
			if !live[j] || its[j].e.term != term {
				continue
			}
			e := its[j].e
			post[j].skipTo(e.off)
			b := post[j].next(int(e.n))
			if post[j].err != nil {
				return post[j].err
			}
			pl, err := decodePostings(b, in.r.docs)
			if err == nil && uint64(pl.count()) != e.df {
				err = errors.New("count mismatch")
			}
			if err != nil {
				return in.r.corrupt("posting list of %q: %v", e.term, err)
			}
			it := pl.docs.Iterator()
			for i := 0; it.HasNext(); i++ {
				id := it.Next()
				if in.del.Contains(id) {
					continue
				}
				ids = append(ids, in.newID(id))
				out.appendFreq(pl.freq(i))
			}
			for _, p := range pl.front {
				out.note(p.tf, p.len)
			}
			live[j] = its[j].next()
			if its[j].err != nil {
				return its[j].err
			}
		}
		if len(ids) > 0 {
			out.docs = roaring.New()
			out.docs.AddMany(ids)
			w.term(term, out)
		}
	}
}

func leUint64(b []byte) uint64 {
	return uint64(leUint32(b)) | uint64(leUint32(b[4:]))<<32
}

func leUint32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// tier is the size class of a segment of n live documents for the merge
// policy: ⌊log_factor n⌋.
func tier(n uint64, factor int) int {
	t := 0
	for f := uint64(factor); n >= f; n /= f {
		t++
	}
	return t
}

// pickMerge chooses the segments the policy merges next: the first
// segment whose deletions reach half its documents (rewritten alone), or
// else factor segments of the lowest tier holding at least factor. It
// returns nil when nothing qualifies. sizes are the live document counts,
// docs the stored ones.
func pickMerge(sizes, docs []uint64, factor int) []int {
	for i := range sizes {
		if docs[i] > 0 && 2*(docs[i]-sizes[i]) >= docs[i] {
			return []int{i}
		}
	}
	byTier := map[int][]int{}
	low := -1
	for i, n := range sizes {
		t := tier(n, factor)
		byTier[t] = append(byTier[t], i)
		if len(byTier[t]) >= factor && (low < 0 || t < low) {
			low = t
		}
	}
	if low < 0 {
		return nil
	}
	return byTier[low][:factor]
}
