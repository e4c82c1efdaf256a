package webgraph

import (
	"fmt"
	"slices"
)

// GraphStore answers the connectivity queries of book §20.4 — which URLs
// does u link to, which URLs link to u — by node id, with the URL ↔ id map
// to translate. Ids are positions in the host-reversed URL order
// (CompareURLs). OutURLs and InURLs query by URL.
//
// Implementations must be safe for concurrent use. Out and In append to
// buf[:0] and return it, so a caller that reuses buf allocates nothing.
type GraphStore interface {
	// NumNodes returns the number of URLs (nodes).
	NumNodes() int
	// NumArcs returns the number of links.
	NumArcs() int64
	// Out returns the successors (out-links) of id in increasing order.
	Out(id int, buf []int) ([]int, error)
	// In returns the predecessors (in-links) of id in increasing order.
	In(id int, buf []int) ([]int, error)
	// OutDegree returns the number of out-links of id.
	OutDegree(id int) (int, error)
	// InDegree returns the number of in-links of id.
	InDegree(id int) (int, error)
	// ID returns the id of url, or an error wrapping ErrUnknownURL.
	ID(url string) (int, error)
	// URL returns the URL of id, or an error wrapping ErrNodeRange.
	URL(id int) (string, error)
}

// OutURLs returns the URLs url links to.
func OutURLs(s GraphStore, url string) ([]string, error) {
	return neighbourURLs(s, url, s.Out)
}

// InURLs returns the URLs that link to url.
func InURLs(s GraphStore, url string) ([]string, error) {
	return neighbourURLs(s, url, s.In)
}

func neighbourURLs(s GraphStore, url string, f func(int, []int) ([]int, error)) ([]string, error) {
	id, err := s.ID(url)
	if err != nil {
		return nil, err
	}
	ids, err := f(id, nil)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ids))
	for i, y := range ids {
		if out[i], err = s.URL(y); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Store is the compressed GraphStore: a BV graph for out-links, its
// transpose for in-links, and a front-coded URL map. Out and In cost one
// random access each (see BVGraph.Successors). Safe for concurrent use.
type Store struct {
	out, in *BVGraph
	urls    *URLMap
}

var _ GraphStore = (*Store)(nil)
var _ GraphStore = (*MemStore)(nil)

// NewStore assembles a Store, checking that the graph, its transpose and
// the URL map agree on the node count and arc count.
func NewStore(out, in *BVGraph, urls *URLMap) (*Store, error) {
	if out.NumNodes() != in.NumNodes() || out.NumNodes() != urls.Len() || out.NumArcs() != in.NumArcs() {
		return nil, &Error{Op: "store", Err: formatErr("graph (%d nodes, %d arcs), transpose (%d, %d) and URL map (%d) disagree",
			out.NumNodes(), out.NumArcs(), in.NumNodes(), in.NumArcs(), urls.Len())}
	}
	return &Store{out: out, in: in, urls: urls}, nil
}

// OpenStore opens the files a Builder writes: basename.urls, basename.* and
// basename-t.*.
func OpenStore(basename string) (*Store, error) {
	out, err := Open(basename)
	if err != nil {
		return nil, err
	}
	in, err := Open(basename + "-t")
	if err != nil {
		return nil, err
	}
	urls, err := OpenURLMap(basename + ".urls")
	if err != nil {
		return nil, err
	}
	return NewStore(out, in, urls)
}

// Graph returns the out-link graph.
func (s *Store) Graph() *BVGraph { return s.out }

// Transpose returns the in-link graph.
func (s *Store) Transpose() *BVGraph { return s.in }

// URLs returns the URL map.
func (s *Store) URLs() *URLMap { return s.urls }

// NumNodes returns the number of URLs.
func (s *Store) NumNodes() int { return s.out.NumNodes() }

// NumArcs returns the number of links.
func (s *Store) NumArcs() int64 { return s.out.NumArcs() }

// Out returns the out-links of id: one random access to the graph.
func (s *Store) Out(id int, buf []int) ([]int, error) { return s.out.Successors(id, buf) }

// In returns the in-links of id: one random access to the transpose.
func (s *Store) In(id int, buf []int) ([]int, error) { return s.in.Successors(id, buf) }

// OutDegree returns the number of out-links of id: one code read.
func (s *Store) OutDegree(id int) (int, error) { return s.out.Outdegree(id) }

// InDegree returns the number of in-links of id: one code read.
func (s *Store) InDegree(id int) (int, error) { return s.in.Outdegree(id) }

// ID returns the id of url (see URLMap.ID for the cost).
func (s *Store) ID(url string) (int, error) { return s.urls.ID(url) }

// URL returns the URL of id (see URLMap.URL for the cost).
func (s *Store) URL(id int) (string, error) { return s.urls.URL(id) }

// Link is one hyperlink of a link log.
type Link struct{ Src, Dst string }

// MemStore is the plain in-memory GraphStore: sorted URL strings and
// uncompressed adjacency lists both ways (about 8 bytes per link per
// direction). It is the reference the compressed Store is tested against,
// and a good choice for small graphs. Safe for concurrent use (immutable).
type MemStore struct {
	urls    []string
	out, in [][]int
	arcs    int64
}

// NewMemStore builds a MemStore from links and extra link-less URLs.
// Repeated links count once.
func NewMemStore(links []Link, urls ...string) *MemStore {
	all := slices.Clone(urls)
	for _, l := range links {
		all = append(all, l.Src, l.Dst)
	}
	slices.SortFunc(all, CompareURLs)
	all = slices.Compact(all)
	m := &MemStore{urls: all, out: make([][]int, len(all)), in: make([][]int, len(all))}
	for _, l := range links {
		x, _ := m.ID(l.Src)
		y, _ := m.ID(l.Dst)
		m.out[x] = append(m.out[x], y)
	}
	for x := range m.out {
		slices.Sort(m.out[x])
		m.out[x] = slices.Compact(m.out[x])
		m.arcs += int64(len(m.out[x]))
		for _, y := range m.out[x] {
			m.in[y] = append(m.in[y], x)
		}
	}
	return m
}

func (m *MemStore) check(id int) error {
	if id < 0 || id >= len(m.urls) {
		return nodeErr("lookup", id, ErrNodeRange)
	}
	return nil
}

// NumNodes returns the number of URLs.
func (m *MemStore) NumNodes() int { return len(m.urls) }

// NumArcs returns the number of links.
func (m *MemStore) NumArcs() int64 { return m.arcs }

// Out returns the out-links of id (a copy, O(degree)).
func (m *MemStore) Out(id int, buf []int) ([]int, error) {
	if err := m.check(id); err != nil {
		return buf[:0], err
	}
	return append(buf[:0], m.out[id]...), nil
}

// In returns the in-links of id (a copy, O(degree)).
func (m *MemStore) In(id int, buf []int) ([]int, error) {
	if err := m.check(id); err != nil {
		return buf[:0], err
	}
	return append(buf[:0], m.in[id]...), nil
}

// OutDegree returns the number of out-links of id, O(1).
func (m *MemStore) OutDegree(id int) (int, error) {
	if err := m.check(id); err != nil {
		return 0, err
	}
	return len(m.out[id]), nil
}

// InDegree returns the number of in-links of id, O(1).
func (m *MemStore) InDegree(id int) (int, error) {
	if err := m.check(id); err != nil {
		return 0, err
	}
	return len(m.in[id]), nil
}

// ID returns the id of url by binary search, O(log n) comparisons.
func (m *MemStore) ID(url string) (int, error) {
	i, ok := slices.BinarySearchFunc(m.urls, url, CompareURLs)
	if !ok {
		return -1, &Error{Op: "id", Subject: url, Err: ErrUnknownURL}
	}
	return i, nil
}

// URL returns the URL of id, O(1).
func (m *MemStore) URL(id int) (string, error) {
	if err := m.check(id); err != nil {
		return "", err
	}
	return m.urls[id], nil
}

// String summarises the store.
func (m *MemStore) String() string {
	return fmt.Sprintf("MemStore(%d nodes, %d arcs)", len(m.urls), m.arcs)
}
