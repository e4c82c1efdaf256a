package webgraph

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"

	"github.com/crawlkit/crawlkit/webgraph/bitio"
)

// BVGraph is a graph in Boldi–Vigna compressed form, file-compatible with
// Java WebGraph's it.unimi.dsi.webgraph.BVGraph: the whole .graph stream is
// held in memory, node offsets in an Elias–Fano list (about 2 + log2 of the
// average bits per node, per node).
//
// A BVGraph is immutable and safe for concurrent use; each call decodes
// with its own bit reader. Successors of a node referenced through a chain
// of r earlier lists costs decoding those r lists (r ≤ maxrefcount when
// written by a Java-compatible compressor); chains are followed
// iteratively, so arbitrarily long chains never grow the goroutine stack.
type BVGraph struct {
	name     string // the .graph file Open read, for errors; "" after Load
	props    Properties
	flags    Flags    // resolved
	words    []uint64 // data as big-endian words, for the bit readers
	nbits    uint64   // length of the stream in bits
	offsets  *eliasFano
	window   int
	minInt   int
	zk       uint
	fast     bool      // default codes: take the specialised decoding path
	pool     sync.Pool // *succState, for random access
	iterPool sync.Pool // *iterBufs, from finished scans
}

// Open loads the BV graph with the given basename (basename.properties,
// basename.graph and, when present, basename.offsets; without offsets they
// are rebuilt by one sequential pass).
func Open(basename string) (*BVGraph, error) {
	pf, err := os.ReadFile(basename + ".properties")
	if err != nil {
		return nil, &Error{Op: "open", Subject: basename, Err: err}
	}
	props, err := ParseProperties(bytes.NewReader(pf))
	if err != nil {
		return nil, &Error{Op: "open", Subject: basename + ".properties", Err: err}
	}
	data, err := os.ReadFile(basename + ".graph")
	if err != nil {
		return nil, &Error{Op: "open", Subject: basename, Err: err}
	}
	offs, err := os.ReadFile(basename + ".offsets")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Op: "open", Subject: basename, Err: err}
	}
	g, err := Load(props, data, offs)
	if err != nil {
		return nil, &Error{Op: "open", Subject: basename, Err: err}
	}
	g.name = basename + ".graph"
	return g, nil
}

// Load builds a BVGraph from the parsed properties, the .graph stream and
// the .offsets stream (nil: rebuild the offsets with one sequential pass
// over the graph). The graph is copied once into 64-bit words for the bit
// readers; neither slice is retained. The offsets are checked for monotonicity and bounds,
// and the node and arc counts are checked when offsets are rebuilt.
func Load(p *Properties, graph, offsets []byte) (*BVGraph, error) {
	if p == nil {
		return nil, errors.New("webgraph: Load without properties")
	}
	if p.Nodes < 0 || p.Nodes >= math.MaxInt32 {
		return nil, formatErr("node count %d", p.Nodes)
	}
	g := &BVGraph{
		props:  *p,
		flags:  p.Flags.resolved(),
		words:  bitio.PackWords(graph),
		nbits:  uint64(len(graph)) * 8,
		window: p.WindowSize,
		minInt: p.MinIntervalLength,
		zk:     uint(p.ZetaK),
	}
	if err := p.Flags.validate(); err != nil {
		return nil, err
	}
	if g.zk < 1 || g.zk > 63 || g.window < 0 || g.window > 1<<16 || g.minInt < 0 {
		return nil, formatErr("parameters windowsize=%d minintervallength=%d zetak=%d", g.window, g.minInt, g.zk)
	}
	// Every node takes at least one bit of the graph stream (its outdegree)
	// and of the offsets stream: refuse node counts the data cannot hold
	// before allocating per-node memory.
	if uint64(p.Nodes) > g.nbits || (offsets != nil && uint64(p.Nodes)+1 > uint64(len(offsets))*8) {
		return nil, formatErr("%d nodes do not fit in %d graph bytes and %d offset bytes", p.Nodes, len(graph), len(offsets))
	}
	g.fast = g.flags == Flags{}.resolved()
	g.pool.New = func() any { return new(succState) }
	if offsets == nil {
		return g, g.rebuildOffsets()
	}
	n := p.Nodes
	vals := make([]uint64, n+1)
	r := bitio.NewReader(offsets)
	var off uint64
	for i := 0; i <= n; i++ {
		d := g.readCode(r, g.flags.Offsets)
		if r.Err() != nil {
			return nil, formatErr("offsets: %v", r.Err())
		}
		if d > g.nbits-off {
			return nil, formatErr("offset %d of node %d beyond the end of the graph stream (%d bits)", off+d, i, g.nbits)
		}
		off += d
		vals[i] = off
	}
	if vals[0] != 0 {
		return nil, formatErr("first offset is %d, want 0", vals[0])
	}
	g.nbits = off // the rest is padding
	g.offsets = newEliasFano(vals, off)
	return g, nil
}

// rebuildOffsets decodes the whole graph once, recording where each node
// starts.
func (g *BVGraph) rebuildOffsets() error {
	n := g.props.Nodes
	vals := make([]uint64, 0, n+1)
	it := g.iter(func(pos uint64) { vals = append(vals, pos) })
	var arcs int64
	for it.Next() {
		arcs += int64(len(it.Successors()))
	}
	if err := it.Err(); err != nil {
		return err
	}
	end := it.pos
	vals = append(vals, end)
	if arcs != g.props.Arcs {
		return formatErr("decoded %d arcs, properties say %d", arcs, g.props.Arcs)
	}
	g.nbits = end
	g.offsets = newEliasFano(vals, end)
	return nil
}

// Properties returns the graph's properties.
func (g *BVGraph) Properties() Properties { return g.props }

// NumNodes returns the number of nodes.
func (g *BVGraph) NumNodes() int { return g.props.Nodes }

// NumArcs returns the number of arcs, as recorded in the properties.
func (g *BVGraph) NumArcs() int64 { return g.props.Arcs }

// StreamBits returns the length of the .graph bit stream.
func (g *BVGraph) StreamBits() uint64 { return g.nbits }

// OffsetsBits returns the memory used by the in-memory offsets, in bits.
func (g *BVGraph) OffsetsBits() uint64 { return g.offsets.sizeBits() }

// Offset returns the bit offset of node x in the .graph stream (x may be
// NumNodes, giving the stream length). Cost: one Elias–Fano lookup.
func (g *BVGraph) Offset(x int) (uint64, error) {
	if x < 0 || x > g.props.Nodes {
		return 0, nodeErr("offset", x, ErrNodeRange)
	}
	return g.offsets.get(x), nil
}

func (g *BVGraph) readCode(r *bitio.Reader, c Code) uint64 {
	switch c {
	case CodeGamma:
		return r.ReadGamma()
	case CodeUnary:
		return r.ReadUnary()
	case CodeZeta:
		return r.ReadZeta(g.zk)
	case CodeDelta:
		return r.ReadDelta()
	case CodeNibble:
		return r.ReadNibble()
	case CodeGolomb:
		return r.ReadGolomb(uint64(g.zk))
	}
	return 0
}

func (g *BVGraph) reader(x int) *bitio.Reader {
	r := bitio.NewWordReader(g.words, g.nbits)
	r.SetPosition(g.offsets.get(x))
	return r
}

// Outdegree returns the number of successors of x. Cost: one Elias–Fano
// lookup and one code read.
func (g *BVGraph) Outdegree(x int) (int, error) {
	if x < 0 || x >= g.props.Nodes {
		return 0, nodeErr("outdegree", x, ErrNodeRange)
	}
	r := g.reader(x)
	d := g.readCode(r, g.flags.Outdegrees)
	if r.Err() != nil {
		return 0, g.nodeErr("outdegree", x, fmt.Errorf("%w: %v", ErrFormat, r.Err()))
	}
	if d > uint64(g.props.Nodes) {
		return 0, g.nodeErr("outdegree", x, formatErr("outdegree %d exceeds node count", d))
	}
	return int(d), nil
}

// header is the part of a node's record read before its reference list is
// needed.
type header struct {
	x, d, ref int
	pos       uint64 // position after the reference
}

// readHeader reads the outdegree and reference of the node at r's position.
func (g *BVGraph) readHeader(r *bitio.Reader, x int) (header, error) {
	h := header{x: x}
	var d uint64
	if g.fast {
		d = r.ReadGamma()
	} else {
		d = g.readCode(r, g.flags.Outdegrees)
	}
	if d > uint64(g.props.Nodes) {
		if r.Err() != nil {
			return h, formatErr("%v", r.Err())
		}
		return h, formatErr("outdegree %d exceeds node count", d)
	}
	h.d = int(d)
	if d > 0 && g.window > 0 {
		var ref uint64
		if g.fast {
			ref = r.ReadUnary()
		} else {
			ref = g.readCode(r, g.flags.References)
		}
		if ref > uint64(g.window) || ref > uint64(x) {
			if r.Err() != nil {
				return h, formatErr("%v", r.Err())
			}
			return h, formatErr("reference %d out of window %d", ref, g.window)
		}
		h.ref = int(ref)
	}
	if r.Err() != nil {
		return h, formatErr("%v", r.Err())
	}
	h.pos = r.Position()
	return h, nil
}

// scratch holds reusable decoding buffers.
type scratch struct {
	extras, resid, merged, blocks, ivs []int
}

// decodeRest decodes the record after the header, given the reference
// list, appending the successors to out[:0]. Every value read is checked,
// so a corrupt stream yields ErrFormat and bounded work. The common cases
// (only copied arcs, only residuals) are written straight into out.
func (g *BVGraph) decodeRest(r *bitio.Reader, h header, refList []int, s *scratch, out []int) ([]int, error) {
	out = out[:0]
	if h.d == 0 {
		return out, nil
	}
	n := g.props.Nodes
	x := h.x
	ncopied := 0
	blocks := s.blocks[:0]
	if h.ref > 0 {
		var bc uint64
		if g.fast {
			bc = r.ReadGamma()
		} else {
			bc = g.readCode(r, g.flags.BlockCount)
		}
		if bc > uint64(len(refList))+1 {
			return out, g.streamErr(r, "block count %d for a reference list of %d", bc, len(refList))
		}
		total := 0
		for i := 0; i < int(bc); i++ {
			var b uint64
			if g.fast {
				b = r.ReadGamma()
			} else {
				b = g.readCode(r, g.flags.Blocks)
			}
			if i > 0 {
				b++
			}
			if b > uint64(len(refList)-total) {
				return out, g.streamErr(r, "blocks exceed the reference list")
			}
			total += int(b)
			if i&1 == 0 {
				ncopied += int(b)
			}
			blocks = append(blocks, int(b))
		}
		if len(blocks)&1 == 0 {
			ncopied += len(refList) - total
		}
		s.blocks = blocks
	}
	extra := h.d - ncopied
	if extra < 0 {
		return out, g.streamErr(r, "copied %d arcs, outdegree is %d", ncopied, h.d)
	}
	if extra == 0 {
		// Only copied arcs: decode in place.
		k := 0
		for i, b := range blocks {
			if i&1 == 0 {
				out = append(out, refList[k:k+b]...)
			}
			k += b
		}
		if len(blocks)&1 == 0 {
			out = append(out, refList[k:]...)
		}
		if r.Err() != nil {
			return out[:0], g.streamErr(r, "")
		}
		return out, nil
	}
	extras := s.extras[:0]
	if g.minInt > 0 {
		ic := r.ReadGamma()
		if ic > uint64(extra/g.minInt) {
			return out, g.streamErr(r, "%d intervals for %d extra arcs", ic, extra)
		}
		prev := 0
		for i := 0; i < int(ic); i++ {
			var left int
			v := r.ReadGamma()
			if i == 0 {
				if v > 2*uint64(n)+1 {
					return out, g.streamErr(r, "interval start out of range")
				}
				left = x + nat2int(v)
			} else {
				if v >= uint64(n) {
					return out, g.streamErr(r, "interval gap out of range")
				}
				left = prev + int(v) + 1
			}
			l := r.ReadGamma()
			if l > uint64(extra) {
				return out, g.streamErr(r, "interval longer than the extra arcs")
			}
			ln := int(l) + g.minInt
			if left < 0 || ln > extra || left+ln > n {
				return out, g.streamErr(r, "interval [%d, %d) out of range", left, left+ln)
			}
			for v := left; v < left+ln; v++ {
				extras = append(extras, v)
			}
			extra -= ln
			prev = left + ln
		}
		s.extras = extras
	}
	resid := s.resid[:0]
	if ncopied == 0 && len(extras) == 0 {
		resid = out // only residuals: decode in place
	}
	if extra > 0 {
		v := g.readResidual(r)
		if v > 2*uint64(n)+1 {
			return out, g.streamErr(r, "first residual out of range")
		}
		cur := x + nat2int(v)
		if cur < 0 || cur >= n {
			return out, g.streamErr(r, "residual %d out of range", cur)
		}
		resid = append(resid, cur)
		for i := 1; i < extra; i++ {
			var gap uint64
			if g.fast {
				gap = r.ReadZeta(g.zk)
			} else {
				gap = g.readCode(r, g.flags.Residuals)
			}
			if gap >= uint64(n-cur-1) { // the next residual, cur+gap+1, is a node
				return out, g.streamErr(r, "residual gap out of range")
			}
			cur += int(gap) + 1
			resid = append(resid, cur)
		}
	}
	if r.Err() != nil {
		return out, g.streamErr(r, "")
	}
	if ncopied == 0 && len(extras) == 0 {
		return resid, nil
	}
	s.resid = resid
	// Merge: intervals ∪ residuals, then ∪ the copy blocks.
	if len(extras) > 0 && len(resid) > 0 {
		m, ok := merge(s.merged[:0], extras, resid)
		s.merged = m
		if !ok {
			return out, g.streamErr(r, "repeated successor")
		}
		extras = m
	} else if len(resid) > 0 {
		extras = resid
	}
	out, ok := mergeBlocks(out, refList, blocks, ncopied, extras)
	if !ok {
		return out, g.streamErr(r, "repeated successor")
	}
	return out, nil
}

// mergeBlocks appends to out the union of the arcs copied from refList
// (copy blocks at even positions of blocks, plus the tail when the count is
// even) and the strictly increasing extras, copying runs of the reference
// list in bulk; ok is false if an extra arc is also copied.
func mergeBlocks(out, refList, blocks []int, ncopied int, extras []int) ([]int, bool) {
	if ncopied == 0 {
		return append(out, extras...), true
	}
	j, k := 0, 0
	for i := 0; i <= len(blocks); i++ {
		var seg []int
		switch {
		case i < len(blocks):
			b := blocks[i]
			if i&1 == 1 {
				k += b
				continue
			}
			seg = refList[k : k+b]
			k += b
		case len(blocks)&1 == 0:
			seg = refList[k:]
		}
		for len(seg) > 0 {
			if j == len(extras) || extras[j] > seg[len(seg)-1] {
				out = append(out, seg...)
				break
			}
			y := extras[j]
			p := 0
			for p < len(seg) && seg[p] < y {
				p++
			}
			out = append(out, seg[:p]...)
			if p < len(seg) && seg[p] == y {
				return out, false
			}
			out = append(out, y)
			j++
			seg = seg[p:]
		}
	}
	return append(out, extras[j:]...), true
}

func (g *BVGraph) readResidual(r *bitio.Reader) uint64 {
	if g.fast {
		return r.ReadZeta(g.zk)
	}
	return g.readCode(r, g.flags.Residuals)
}

func (g *BVGraph) streamErr(r *bitio.Reader, format string, args ...any) error {
	if r.Err() != nil {
		return fmt.Errorf("%w: %v", ErrFormat, r.Err())
	}
	return formatErr(format, args...)
}

// merge appends the union of the strictly increasing lists a and b to out;
// ok is false if they share an element. It walks the shorter list and copies
// the runs of the longer one between its elements in bulk, which suits the
// usual shape (many copied arcs, a few extra ones).
func merge(out, a, b []int) ([]int, bool) {
	if len(a) < len(b) {
		a, b = b, a
	}
	i := 0
	for _, y := range b {
		j := i
		for j < len(a) && a[j] < y {
			j++
		}
		out = append(out, a[i:j]...)
		if j < len(a) && a[j] == y {
			return out, false
		}
		out = append(out, y)
		i = j
	}
	return append(out, a[i:]...), true
}

func nat2int(v uint64) int {
	if v&1 == 0 {
		return int(v >> 1)
	}
	return -int((v + 1) >> 1)
}

func int2nat(v int) uint64 {
	if v >= 0 {
		return uint64(v) << 1
	}
	return uint64(-v)<<1 - 1
}

// Successors appends the successors of x, in increasing order, to buf[:0]
// and returns the result. Reference chains are resolved iteratively: the
// chain's headers are collected first, then the lists are decoded from the
// oldest to x, each from the previous one. Cost: the sum of the outdegrees
// along the chain; allocation-free when buf has capacity. The decoder may
// use all of buf's capacity as scratch, also past the returned length. A
// chain longer than the maxrefcount property (unless Unlimited) is reported
// as ErrFormat, since no Java-compatible compressor writes one.
func (g *BVGraph) Successors(x int, buf []int) ([]int, error) {
	if x < 0 || x >= g.props.Nodes {
		return buf[:0], nodeErr("successors", x, ErrNodeRange)
	}
	st := g.pool.Get().(*succState)
	out, err := g.successors(x, buf, st)
	g.pool.Put(st)
	if err != nil {
		return out[:0], g.nodeErr("successors", x, err)
	}
	return out, nil
}

// succState is the per-call state of a random access.
type succState struct {
	r       bitio.Reader
	chain   []header
	a, b    []int
	scratch scratch
}

// buf returns the buffer to decode the i-th list of a reference chain
// into: out for the last one (i = 0), else a and b in turn, so the list
// being decoded never shares memory with the one it references.
func (st *succState) buf(i int, out []int) []int {
	switch {
	case i == 0:
		return out
	case i&1 == 0:
		return st.a
	default:
		return st.b
	}
}

// keep stores the list decoded into buf(i, ...) back where it came from,
// so a buffer grown once stays grown.
func (st *succState) keep(i int, res []int, out *[]int) {
	switch {
	case i == 0:
		*out = res
	case i&1 == 0:
		st.a = res
	default:
		st.b = res
	}
}

func (g *BVGraph) successors(x int, out []int, st *succState) ([]int, error) {
	if g.fast {
		return g.successorsFast(x, out, st)
	}
	st.r.ResetWords(g.words, g.nbits)
	r := &st.r
	chain := st.chain[:0]
	for y := x; ; {
		r.SetPosition(g.offsets.get(y))
		h, err := g.readHeader(r, y)
		if err != nil {
			return out, err
		}
		chain = append(chain, h)
		if h.d == 0 || h.ref == 0 {
			break
		}
		// A Java-compatible compressor never builds chains longer than
		// maxrefcount; a longer one is corruption, and refusing it bounds
		// the work of one call by (maxrefcount+1) lists.
		if g.props.MaxRefCount < Unlimited && len(chain) > g.props.MaxRefCount {
			return out, formatErr("reference chain longer than maxrefcount %d", g.props.MaxRefCount)
		}
		y -= h.ref
	}
	st.chain = chain
	// Decode from the end of the chain back to x.
	var prev []int
	for i := len(chain) - 1; i >= 0; i-- {
		h := chain[i]
		r.SetPosition(h.pos)
		res, err := g.decodeRest(r, h, prev, &st.scratch, st.buf(i, out))
		if err != nil {
			return out, err
		}
		st.keep(i, res, &out)
		prev = res
	}
	return out, nil
}

// successorsFast is successors for the default codes (see decode.go).
func (g *BVGraph) successorsFast(x int, out []int, st *succState) ([]int, error) {
	chain := st.chain[:0]
	for y := x; ; {
		d, ref, pos, err := g.headerFast(g.offsets.get(y), y)
		if err != nil {
			return out, err
		}
		chain = append(chain, header{x: y, d: d, ref: ref, pos: pos})
		if d == 0 || ref == 0 {
			break
		}
		if g.props.MaxRefCount < Unlimited && len(chain) > g.props.MaxRefCount {
			return out, formatErr("reference chain longer than maxrefcount %d", g.props.MaxRefCount)
		}
		y -= ref
	}
	st.chain = chain
	var prev []int
	for i := len(chain) - 1; i >= 0; i-- {
		h := chain[i]
		res, _, err := g.restFast(h.pos, h.x, h.d, h.ref, prev, nil, 0, &st.scratch, st.buf(i, out))
		if err != nil {
			return out, err
		}
		st.keep(i, res, &out)
		prev = res
	}
	return out, nil
}
