package webgraph

import (
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/crawlkit/crawlkit/webgraph/bitio"
)

// This file is the decoder for graphs with the default codes (γ outdegrees,
// block counts, blocks and intervals, unary references, ζ_k residuals),
// which is what Java WebGraph writes unless told otherwise. It keeps the bit
// position in a local variable, decodes each code word from one 64-bit
// window with bitio's word decoders and falls back to a bitio.Reader only
// for words longer than the window. Positions are checked against the
// stream length at each node's header, in the residual loop and at the end
// of the record: every loop is bounded by a count validated against the
// outdegree or the reference list, so a corrupt stream costs bounded work
// and ends in ErrFormat. The generic decoder (decodeRest) handles every
// other combination of codes; the tests check that both agree, also on
// corrupt streams.

// errPos is where a failed read leaves the position: past every stream
// length, so the next check reports it, and far from overflow.
const errPos = 1 << 62

// slowCode reads one code word at pos with a bitio.Reader: the path for
// words longer than 64 bits and for reads past the end. It returns the
// value and the position after it, or 0, errPos on a read error.
func slowCode(words []uint64, pos uint64, c Code, k uint) (uint64, uint64) {
	if pos >= errPos {
		return 0, errPos
	}
	var r bitio.Reader
	r.ResetWords(words, uint64(len(words))*64)
	r.SetPosition(pos)
	var v uint64
	switch c {
	case CodeUnary:
		v = r.ReadUnary()
	case CodeZeta:
		v = r.ReadZeta(k)
	default:
		v = r.ReadGamma()
	}
	if r.Err() != nil {
		return 0, errPos
	}
	return v, r.Position()
}

// refill decodes the code word at pos from a fresh 64-bit window, for the
// decoding loops of restFast when the word is longer than what is left of
// their window (or, for ζ_k with k ≠ 3, always). It returns the value, its
// length and the window and its valid bits before the word: the caller
// then consumes the length. Words longer than 64 bits and read errors go
// through slowCode; the position is then already past the word (or errPos)
// and the length and window are returned empty.
func refill(words []uint64, pos uint64, c Code, k uint) (v uint64, n uint, w uint64, avail uint, npos uint64) {
	w = bitio.Peek(words, pos)
	switch c {
	case CodeGamma:
		v, n = bitio.GammaWord(w)
	case CodeUnary:
		v, n = bitio.UnaryWord(w)
	default:
		if k == 3 {
			if v, n = bitio.Zeta3Fast(w); n == 0 {
				if v, n = bitio.Zeta3Word(w); n > 64 {
					n = 0
				}
			}
		} else {
			v, n = bitio.ZetaWord(w, k)
		}
	}
	if n == 0 {
		v, pos = slowCode(words, pos, c, k)
		return v, 0, 0, 0, pos
	}
	return v, n, w, 64, pos
}

// posErr reports a position past the end of the stream.
func (g *BVGraph) posErr(pos uint64) error {
	if pos >= errPos {
		return formatErr("corrupt code word or read past the end of the stream")
	}
	return formatErr("read past the end of the stream (bit %d of %d)", pos, g.nbits)
}

// valueErr reports a decoded value out of range, or the overrun that
// produced it. format has at most two %d verbs, for a and b: plain
// integers rather than variadic arguments, so that the error paths, which
// restFast has at every step, box nothing at their call sites (boxing
// there cost the decoding loops registers, about 2% of sequential
// decoding).
//
//go:noinline
func (g *BVGraph) valueErr(pos uint64, format string, a, b int64) error {
	if pos > g.nbits {
		return g.posErr(pos)
	}
	return formatErr(format, []any{a, b}[:strings.Count(format, "%d")]...)
}

// sat is v as an int64 for an error message, saturated.
func sat(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

// headerFast reads the outdegree and the reference of node x at pos.
func (g *BVGraph) headerFast(pos uint64, x int) (d, ref int, next uint64, err error) {
	words := g.words
	v, nb := bitio.GammaWord(bitio.Peek(words, pos))
	if nb == 0 {
		v, pos = slowCode(words, pos, CodeGamma, 0)
	} else {
		pos += uint64(nb)
	}
	if v > uint64(g.props.Nodes) {
		return 0, 0, pos, g.valueErr(pos, "outdegree %d exceeds node count", sat(v), 0)
	}
	if v > 0 && g.window > 0 {
		r, nb := bitio.UnaryWord(bitio.Peek(words, pos))
		if nb == 0 {
			r, pos = slowCode(words, pos, CodeUnary, 0)
		} else {
			pos += uint64(nb)
		}
		if r > uint64(g.window) || r > uint64(x) {
			return 0, 0, pos, g.valueErr(pos, "reference %d out of window %d", sat(r), int64(g.window))
		}
		ref = int(r)
	}
	if pos > g.nbits {
		return 0, 0, pos, g.posErr(pos)
	}
	return int(v), ref, pos, nil
}

// restFast decodes the record of node x from pos, appending the successors
// to out[:0]; it returns them and the position after the record. With ring
// nil, pos is just after the header, whose outdegree d and reference ref
// are given with the referenced list refList. With ring non-nil (the
// sequential window, x in ring[slot]) pos is at the start of the record and
// the header is read here, saving a call per node.
//
// out grows at most twice, the second time to the outdegree. Copied arcs are appended as the blocks
// are read; residuals are decoded straight into out when they are the only
// source, intervals stay (left, length) runs, and extra arcs are merged
// into the copied ones in place from the back, so copied arcs below the
// first extra one never move.
func (g *BVGraph) restFast(pos uint64, x, d, ref int, refList []int, ring [][]int, slot int, s *scratch, out []int) ([]int, uint64, error) {
	words, limit, n := g.words, g.nbits, g.props.Nodes
	// w holds the next avail bits of the stream from pos, MSB-aligned: one
	// 64-bit load serves several code words. A word longer than avail
	// reloads it (see refill).
	var w uint64
	var avail uint
	if ring != nil {
		w, avail = bitio.Peek(words, pos), 64
		v, nb := bitio.GammaWord(w)
		if nb-1 >= avail {
			v, nb, w, avail, pos = refill(words, pos, CodeGamma, 0)
		}
		w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
		if v > uint64(n) {
			return out[:0], pos, g.valueErr(pos, "outdegree %d exceeds node count", sat(v), 0)
		}
		d = int(v)
		if d > 0 && g.window > 0 {
			r, nb := bitio.UnaryWord(w)
			if nb-1 >= avail {
				r, nb, w, avail, pos = refill(words, pos, CodeUnary, 0)
			}
			w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
			if r > uint64(g.window) || r > uint64(x) {
				return out[:0], pos, g.valueErr(pos, "reference %d out of window %d", sat(r), int64(g.window))
			}
			if ref = int(r); ref > 0 {
				// slot - ref modulo len(ring), without a branch: the
				// reference is as unpredictable as the graph.
				rs := slot - ref
				rs += len(ring) & (rs >> (bits.UintSize - 1))
				refList = ring[rs]
			}
		}
		if pos > limit {
			return out[:0], pos, g.posErr(pos)
		}
	}
	out = out[:0]
	if d == 0 {
		return out, pos, nil
	}
	if ref > 0 {
		bc, nb := bitio.GammaWord(w)
		if nb-1 >= avail {
			bc, nb, w, avail, pos = refill(words, pos, CodeGamma, 0)
		}
		w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
		if bc > uint64(len(refList))+1 {
			return out, pos, g.valueErr(pos, "block count %d for a reference list of %d", sat(bc), int64(len(refList)))
		}
		k := 0
		for i := 0; i < int(bc); i++ {
			b, nb := bitio.GammaWord(w)
			if nb-1 >= avail {
				b, nb, w, avail, pos = refill(words, pos, CodeGamma, 0)
			}
			w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
			if i > 0 {
				b++
			}
			if b > uint64(len(refList)-k) {
				return out, pos, g.valueErr(pos, "blocks exceed the reference list", 0, 0)
			}
			if i&1 == 0 {
				out = appendList(out, refList[k:k+int(b)])
			}
			k += int(b)
		}
		if bc&1 == 0 {
			out = appendList(out, refList[k:])
		}
	}
	ncopied := len(out)
	extra := d - ncopied
	if extra < 0 {
		return out, pos, g.valueErr(pos, "copied %d arcs, outdegree is %d", int64(ncopied), int64(d))
	}
	if extra == 0 {
		if pos > limit {
			return out, pos, g.posErr(pos)
		}
		return out, pos, nil
	}
	ivs := s.ivs[:0] // (left, length) pairs
	if g.minInt > 0 {
		ic, nb := bitio.GammaWord(w)
		if nb-1 >= avail {
			ic, nb, w, avail, pos = refill(words, pos, CodeGamma, 0)
		}
		w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
		if ic > uint64(extra/g.minInt) {
			return out, pos, g.valueErr(pos, "%d intervals for %d extra arcs", sat(ic), int64(extra))
		}
		prev := 0
		for i := 0; i < int(ic); i++ {
			v, nb := bitio.GammaWord(w)
			if nb-1 >= avail {
				v, nb, w, avail, pos = refill(words, pos, CodeGamma, 0)
			}
			w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
			var left int
			if i == 0 {
				if v > 2*uint64(n)+1 {
					return out, pos, g.valueErr(pos, "interval start out of range", 0, 0)
				}
				left = x + nat2int(v)
			} else {
				if v >= uint64(n) {
					return out, pos, g.valueErr(pos, "interval gap out of range", 0, 0)
				}
				left = prev + int(v) + 1
			}
			l, nb := bitio.GammaWord(w)
			if nb-1 >= avail {
				l, nb, w, avail, pos = refill(words, pos, CodeGamma, 0)
			}
			w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
			if l > uint64(extra) {
				return out, pos, g.valueErr(pos, "interval longer than the extra arcs", 0, 0)
			}
			ln := int(l) + g.minInt
			if left < 0 || ln > extra || left+ln > n {
				return out, pos, g.valueErr(pos, "interval [%d, %d) out of range", int64(left), int64(left+ln))
			}
			ivs = append(ivs, left, ln)
			extra -= ln
			prev = left + ln
		}
		s.ivs = ivs
	}
	// Every residual takes at least one bit: refuse counts the stream cannot
	// hold before allocating for them.
	if pos > limit || uint64(extra) > limit-pos {
		return out, pos, g.valueErr(pos, "%d residuals in %d bits", int64(extra), int64(limit-min(pos, limit)))
	}
	direct := ncopied == 0 && len(ivs) == 0
	var resid []int
	if direct {
		resid = slices.Grow(out, extra)[:extra]
	} else {
		resid = slices.Grow(s.resid[:0], extra)[:extra]
	}
	if extra > 0 {
		zk := g.zk
		var v uint64
		var nb uint
		if zk == 3 {
			v, nb = bitio.Zeta3Fast(w)
		}
		if nb-1 >= avail {
			v, nb, w, avail, pos = refill(words, pos, CodeZeta, zk)
		}
		w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
		if v > 2*uint64(n)+1 {
			return out, pos, g.valueErr(pos, "first residual out of range", 0, 0)
		}
		cur := x + nat2int(v)
		if cur < 0 || cur >= n {
			return out, pos, g.valueErr(pos, "residual %d out of range", int64(cur), 0)
		}
		resid[0] = cur
		if zk == 3 {
			// The default ζ₃: one table lookup per word, no test of k.
			for i := 1; i < len(resid); i++ {
				gap, nb := bitio.Zeta3Fast(w)
				if nb-1 >= avail {
					gap, nb, w, avail, pos = refill(words, pos, CodeZeta, 3)
				}
				w, avail, pos = w<<(nb&63), avail-nb, pos+uint64(nb)
				if gap >= uint64(n-cur-1) || pos > limit { // cur+gap+1 is a node
					return out, pos, g.valueErr(pos, "residual gap out of range", 0, 0)
				}
				cur += int(gap) + 1
				resid[i] = cur
			}
		} else {
			for i := 1; i < len(resid); i++ {
				// Other k: every word through refill (the window is not
				// needed after the residuals).
				gap, nb, _, _, npos := refill(words, pos, CodeZeta, zk)
				pos = npos + uint64(nb)
				if gap >= uint64(n-cur-1) || pos > limit {
					return out, pos, g.valueErr(pos, "residual gap out of range", 0, 0)
				}
				cur += int(gap) + 1
				resid[i] = cur
			}
		}
	}
	if pos > limit {
		return out, pos, g.posErr(pos)
	}
	if direct {
		return resid, pos, nil
	}
	s.resid = resid
	// All counts are validated now: d arcs is what the list holds.
	out = slices.Grow(out, d-ncopied)
	if ncopied == 0 {
		var ok bool
		if out, ok = mergeIntervals(out, ivs, resid); !ok {
			return out, pos, formatErr("repeated successor")
		}
		return out, pos, nil
	}
	extras := resid
	if len(ivs) > 0 {
		var ok bool
		extras, ok = mergeIntervals(s.extras[:0], ivs, resid)
		s.extras = extras
		if !ok {
			return out, pos, formatErr("repeated successor")
		}
	}
	// Merge the strictly increasing extras into the strictly increasing
	// copied arcs, in place from the back (out has room for d): copied arcs
	// below the first extra one stay where they are. Inline, because as a
	// function the call cost a tenth of the merge.
	i := len(out) - 1
	out = out[:d]
	wr := d - 1
	for j := len(extras) - 1; j >= 0; j-- {
		y := extras[j]
		for i >= 0 && out[i] > y {
			out[wr] = out[i]
			wr--
			i--
		}
		if i >= 0 && out[i] == y {
			return out, pos, formatErr("repeated successor")
		}
		out[wr] = y
		wr--
	}
	return out, pos, nil
}

// appendList appends src to out. Most copied blocks are short (a third of
// those of cnr-2000 have one or two arcs): when src has at most 8 elements
// and both slices have room for 8 past their starts, it moves 8 words
// unconditionally (the extra ones land past len(out) and are overwritten
// or ignored), which is cheaper than a call to memmove with its branches
// on the size.
func appendList(out, src []int) []int {
	n := len(out)
	if len(src) <= 8 && cap(src) >= 8 && cap(out)-n >= 8 {
		t := *(*[8]int)(src[:8])
		*(*[8]int)(out[n : n+8]) = t
		return out[:n+len(src)]
	}
	return append(out, src...)
}

// mergeIntervals appends the union of the intervals ivs ((left, length)
// pairs, increasing and disjoint) and the strictly increasing resid to out;
// ok is false if a residual falls inside an interval.
func mergeIntervals(out, ivs, resid []int) ([]int, bool) {
	j := 0
	for p := 0; p+1 < len(ivs); p += 2 {
		l, e := ivs[p], ivs[p]+ivs[p+1]
		for j < len(resid) && resid[j] < l {
			out = append(out, resid[j])
			j++
		}
		if j < len(resid) && resid[j] < e {
			return out, false
		}
		for v := l; v < e; v++ {
			out = append(out, v)
		}
	}
	return append(out, resid[j:]...), true
}
