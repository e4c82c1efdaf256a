package webgraph

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// SortOptions bound the memory of the external sorts used by Transpose and
// the Builder.
type SortOptions struct {
	// TempDir holds the spilled batches; "" means os.TempDir().
	TempDir string
	// BatchArcs is how many arcs are sorted in memory at once (8 bytes
	// each). 0 means the default, 4 Mi arcs (32 MiB).
	BatchArcs int
}

func (o *SortOptions) batch() int {
	if o == nil || o.BatchArcs <= 0 {
		return 4 << 20
	}
	return o.BatchArcs
}

func (o *SortOptions) dir() string {
	if o == nil {
		return ""
	}
	return o.TempDir
}

// arcSorter sorts arcs (x, y) with bounded memory: batches are sorted,
// deduplicated and spilled to a temporary file as delta-coded varints, then
// merged.
type arcSorter struct {
	opts  *SortOptions
	batch []uint64
	file  *os.File
	w     *bufio.Writer
	runs  []run // byte ranges of the spill file
	pos   int64
}

type run struct{ off, n int64 }

func newArcSorter(o *SortOptions) *arcSorter {
	return &arcSorter{opts: o}
}

func (s *arcSorter) add(x, y int) error {
	s.batch = append(s.batch, uint64(x)<<32|uint64(uint32(y)))
	if len(s.batch) >= s.opts.batch() {
		return s.spill()
	}
	return nil
}

func sortDedup(b []uint64) []uint64 {
	slices.Sort(b)
	return slices.Compact(b)
}

func (s *arcSorter) spill() error {
	if s.file == nil {
		f, err := os.CreateTemp(s.opts.dir(), "webgraph-arcs-*")
		if err != nil {
			return err
		}
		s.file, s.w = f, bufio.NewWriterSize(f, 1<<16)
	}
	b := sortDedup(s.batch)
	start := s.pos
	var tmp [binary.MaxVarintLen64]byte
	prev := uint64(0)
	for _, v := range b {
		n := binary.PutUvarint(tmp[:], v-prev)
		if _, err := s.w.Write(tmp[:n]); err != nil {
			return err
		}
		s.pos += int64(n)
		prev = v
	}
	s.runs = append(s.runs, run{start, int64(len(b))})
	s.batch = s.batch[:0]
	return nil
}

// close removes the spill file.
func (s *arcSorter) close() error {
	if s.file == nil {
		return nil
	}
	name := s.file.Name()
	err := s.file.Close()
	s.file = nil
	return errors.Join(err, os.Remove(name))
}

// source is one sorted stream of arcs during the merge.
type source struct {
	cur  uint64
	left int64
	r    *bufio.Reader
	mem  []uint64
}

func (src *source) next() (bool, error) {
	if src.left == 0 {
		return false, nil
	}
	src.left--
	if src.r == nil {
		src.cur, src.mem = src.mem[0], src.mem[1:]
		return true, nil
	}
	d, err := binary.ReadUvarint(src.r)
	if err != nil {
		return false, fmt.Errorf("%w: spill file: %v", ErrFormat, err)
	}
	src.cur += d
	return true, nil
}

type srcHeap []*source

func (h srcHeap) Len() int           { return len(h) }
func (h srcHeap) Less(i, j int) bool { return h[i].cur < h[j].cur }
func (h srcHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *srcHeap) Push(x any)        { *h = append(*h, x.(*source)) }
func (h *srcHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// lists merges everything added so far and calls fn for every node
// 0 ≤ x < n in order with its sorted, distinct successors (fn must not
// keep the slice). Arcs with x ≥ n are an error.
func (s *arcSorter) lists(n int, fn func(x int, succ []int) error) error {
	var h srcHeap
	if s.file != nil {
		if err := s.w.Flush(); err != nil {
			return err
		}
		for _, r := range s.runs {
			src := &source{left: r.n, r: bufio.NewReaderSize(io.NewSectionReader(s.file, r.off, s.pos-r.off), 1<<14)}
			if ok, err := src.next(); err != nil {
				return err
			} else if ok {
				h = append(h, src)
			}
		}
	}
	mem := sortDedup(s.batch)
	if len(mem) > 0 {
		src := &source{left: int64(len(mem)), mem: mem}
		src.next()
		h = append(h, src)
	}
	heap.Init(&h)
	x := 0
	var succ []int
	last := uint64(1<<64 - 1)
	flush := func(upTo int) error {
		for ; x < upTo; x++ {
			if err := fn(x, succ); err != nil {
				return err
			}
			succ = succ[:0]
		}
		return nil
	}
	for len(h) > 0 {
		top := h[0]
		v := top.cur
		if ok, err := top.next(); err != nil {
			return err
		} else if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
		if v == last {
			continue // duplicate across batches
		}
		last = v
		a, b := int(v>>32), int(uint32(v))
		if a >= n || b >= n {
			return fmt.Errorf("%w: arc (%d, %d) outside %d nodes", ErrInput, a, b, n)
		}
		if err := flush(a); err != nil {
			return err
		}
		succ = append(succ, b)
	}
	return flush(n)
}

// Transpose writes the transpose of g (the in-link graph: y → x for every
// arc x → y) as a BV graph stream to graph and offsets, compressed with o.
// Memory is bounded by SortOptions.BatchArcs: arcs are sorted in batches
// spilled to a temporary file and merged. It returns the properties to
// write next to the streams.
func Transpose(g *BVGraph, graph, offsets io.Writer, o *Options, so *SortOptions) (*Properties, error) {
	s := newArcSorter(so)
	defer s.close()
	it := g.NodeIterator()
	for it.Next() {
		x := it.Node()
		for _, y := range it.Successors() {
			if err := s.add(y, x); err != nil {
				return nil, &Error{Op: "transpose", Err: err}
			}
		}
	}
	if err := it.Err(); err != nil {
		return nil, &Error{Op: "transpose", Err: err}
	}
	enc, err := NewEncoder(graph, offsets, o)
	if err != nil {
		return nil, err
	}
	if err := s.lists(g.NumNodes(), func(_ int, succ []int) error { return enc.Add(succ) }); err != nil {
		return nil, &Error{Op: "transpose", Err: err}
	}
	return enc.Close()
}

// WriteFiles creates basename.graph, basename.offsets and
// basename.properties, lets fill add the successor lists to the Encoder in
// node order, and writes the properties when fill returns.
func WriteFiles(basename string, o *Options, fill func(*Encoder) error) (*Properties, error) {
	gf, err := os.Create(basename + ".graph")
	if err != nil {
		return nil, &Error{Op: "create", Subject: basename, Err: err}
	}
	defer gf.Close()
	of, err := os.Create(basename + ".offsets")
	if err != nil {
		return nil, &Error{Op: "create", Subject: basename, Err: err}
	}
	defer of.Close()
	enc, err := NewEncoder(gf, of, o)
	if err != nil {
		return nil, err
	}
	if err := fill(enc); err != nil {
		return nil, err
	}
	p, err := enc.Close()
	if err != nil {
		return nil, err
	}
	if err := writeProperties(basename, p); err != nil {
		return nil, err
	}
	if err := gf.Close(); err != nil {
		return nil, &Error{Op: "create", Subject: basename, Err: err}
	}
	if err := of.Close(); err != nil {
		return nil, &Error{Op: "create", Subject: basename, Err: err}
	}
	return p, nil
}

func writeProperties(basename string, p *Properties) error {
	pf, err := os.Create(basename + ".properties")
	if err != nil {
		return &Error{Op: "create", Subject: basename, Err: err}
	}
	if _, err := p.WriteTo(pf); err != nil {
		pf.Close()
		return &Error{Op: "create", Subject: basename, Err: err}
	}
	if err := pf.Close(); err != nil {
		return &Error{Op: "create", Subject: basename, Err: err}
	}
	return nil
}
