package webgraph

import (
	"fmt"
	"iter"
	"sort"

	"github.com/crawlkit/crawlkit/webgraph/bitio"
)

// NodeIterator scans a BVGraph sequentially, node 0 first. Sequential
// decoding keeps the last windowsize+1 lists in a ring, so references cost
// nothing beyond copying.
//
//	it := g.NodeIterator()
//	for it.Next() {
//		x, succ := it.Node(), it.Successors()
//	}
//	if err := it.Err(); err != nil { ... }
//
// A NodeIterator is not safe for concurrent use; create one per goroutine.
type NodeIterator struct {
	g       *BVGraph
	r       bitio.Reader // generic codes only
	pos     uint64       // bit position of the next node
	x       int          // current node, from-1 before the first Next
	end     int          // the node after the last one
	slot    int          // ring slot of the next node: (x+1) mod len(ring)
	ring    [][]int
	cur     []int
	s       scratch
	err     error
	onStart func(pos uint64)
}

// NodeIterator returns an iterator over all nodes from node 0.
func (g *BVGraph) NodeIterator() *NodeIterator {
	return g.iter(nil)
}

func (g *BVGraph) iter(onStart func(uint64)) *NodeIterator {
	it := &NodeIterator{g: g, x: -1, end: g.props.Nodes, onStart: onStart}
	if b, _ := g.iterPool.Get().(*iterBufs); b != nil {
		it.ring, it.s = b.ring, b.s
	} else {
		it.ring = make([][]int, g.window+1)
	}
	it.r.ResetWords(g.words, g.nbits)
	return it
}

// iterBufs are the lists of a finished scan, handed to the next one: an
// algorithm that scans the graph again and again (PageRank, a BFS per
// query) would otherwise grow a new ring of window+1 lists, each to the
// largest outdegree it meets, for every pass. A list in the ring is only
// read after this scan wrote it (a reference reaches at most to node 0, or
// to the lists NodeIteratorRange decodes before its start).
type iterBufs struct {
	ring [][]int
	s    scratch
}

// release gives the iterator's buffers to the next scan once Next has
// returned false, after which no list of this one may be used.
func (it *NodeIterator) release() {
	if it.ring == nil {
		return
	}
	it.g.iterPool.Put(&iterBufs{ring: it.ring, s: it.s})
	it.ring, it.cur, it.s = nil, nil, scratch{}
}

// NodeIteratorRange returns an iterator over the nodes from, from+1, …,
// to-1. References reach back WindowSize lists, so the iterator starts by
// decoding the lists before from with Successors (random access, through
// the offsets): a start costs about WindowSize random accesses, after which
// the scan is as fast as a NodeIterator from node 0.
func (g *BVGraph) NodeIteratorRange(from, to int) (*NodeIterator, error) {
	n := g.props.Nodes
	if from < 0 || from > to || to > n {
		return nil, fmt.Errorf("webgraph: node range [%d, %d) of a graph of %d nodes: %w", from, to, n, ErrNodeRange)
	}
	it := g.iter(nil)
	it.x, it.end = from-1, to
	if from == 0 || from == to {
		if from == to {
			it.x = to - 1
		}
		return it, nil
	}
	l := len(it.ring)
	for y := max(0, from-g.window); y < from; y++ {
		list, err := g.Successors(y, it.ring[y%l][:0])
		if err != nil {
			return nil, err
		}
		it.ring[y%l] = list
	}
	it.slot = from % l
	it.pos = g.offsets.get(from)
	it.r.SetPosition(it.pos)
	return it, nil
}

// SplitNodeIterators returns at most k iterators over consecutive node
// ranges that together cover the graph, for k goroutines to scan it in
// parallel (Java WebGraph's splitNodeIterators). The ranges split the bit
// stream, not the node count, into nearly equal parts, so each iterator
// has about the same decoding work.
func (g *BVGraph) SplitNodeIterators(k int) ([]*NodeIterator, error) {
	if k < 1 {
		return nil, fmt.Errorf("webgraph: %d iterators requested", k)
	}
	n := g.props.Nodes
	its := make([]*NodeIterator, 0, k)
	from := 0
	for i := 1; i <= k; i++ {
		to := n
		if i < k {
			// The first node starting at or after i/k of the stream.
			target := g.nbits / uint64(k) * uint64(i)
			to = sort.Search(n, func(x int) bool { return g.offsets.get(x) >= target })
		}
		if to <= from && (i < k || len(its) > 0) {
			continue // an empty range, unless the graph has no nodes
		}
		it, err := g.NodeIteratorRange(from, to)
		if err != nil {
			return nil, err
		}
		its = append(its, it)
		from = to
	}
	return its, nil
}

// Next decodes the next node; it returns false at the end or on error.
func (it *NodeIterator) Next() bool {
	if it.err != nil || it.x+1 >= it.end {
		it.release()
		return false
	}
	it.x++
	x := it.x
	if it.onStart != nil {
		it.onStart(it.pos)
	}
	g := it.g
	// slot = x mod (window+1), kept incrementally: no division per node.
	slot := it.slot
	if it.slot++; it.slot == len(it.ring) {
		it.slot = 0
	}
	var out []int
	if g.fast {
		var err error
		out, it.pos, err = g.restFast(it.pos, x, 0, 0, nil, it.ring, slot, &it.s, it.ring[slot])
		it.ring[slot] = out
		if err != nil {
			it.err = g.nodeErr("scan", x, err)
			it.release()
			return false
		}
	} else {
		h, err := g.readHeader(&it.r, x)
		if err != nil {
			it.err = g.nodeErr("scan", x, err)
			it.release()
			return false
		}
		out, err = g.decodeRest(&it.r, h, it.refList(slot, h.ref), &it.s, it.ring[slot])
		it.ring[slot] = out
		if err != nil {
			it.err = g.nodeErr("scan", x, err)
			it.release()
			return false
		}
		it.pos = it.r.Position()
	}
	it.cur = out
	return true
}

// refList returns the list ref nodes before the one in slot (nil if ref is 0).
func (it *NodeIterator) refList(slot, ref int) []int {
	if ref == 0 {
		return nil
	}
	rs := slot - ref
	if rs < 0 {
		rs += len(it.ring)
	}
	return it.ring[rs]
}

// Node returns the current node id.
func (it *NodeIterator) Node() int { return it.x }

// Successors returns the successors of the current node in increasing
// order. The slice belongs to the iterator, which decodes later lists from
// it: do not modify it, and copy it to keep it past the next call to Next.
// Once Next has returned false the iterator's lists go to the graph's next
// scan, and Successors returns nil.
func (it *NodeIterator) Successors() []int { return it.cur }

// All returns the remaining nodes as a range-over-func sequence of (node,
// successors), with the same slice rules as Successors. The sequence ends
// early on error; check Err afterwards:
//
//	for x, succ := range it.All() { ... }
//	if err := it.Err(); err != nil { ... }
func (it *NodeIterator) All() iter.Seq2[int, []int] {
	return func(yield func(int, []int) bool) {
		for it.Next() {
			if !yield(it.x, it.cur) {
				return
			}
		}
	}
}

// Err returns the error that stopped the iteration, or nil.
func (it *NodeIterator) Err() error { return it.err }
