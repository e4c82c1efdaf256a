package webgraph

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// collect returns the (node, successors) pairs an iterator yields.
func collect(tb testing.TB, it *NodeIterator) (nodes []int, lists [][]int) {
	tb.Helper()
	for x, succ := range it.All() {
		nodes = append(nodes, x)
		lists = append(lists, slices.Clone(succ))
	}
	if err := it.Err(); err != nil {
		tb.Fatal(err)
	}
	return nodes, lists
}

// equalLists compares decoded lists with the expected ones, nil and empty
// being equal.
func equalLists(got, want [][]int) bool {
	return slices.EqualFunc(got, want, func(a, b []int) bool {
		return len(a) == 0 && len(b) == 0 || slices.Equal(a, b)
	})
}

func TestNodeIteratorRange(t *testing.T) {
	lists := randomWebLike(5, sizeFor(800, 200))
	n := len(lists)
	opts := []struct {
		name string
		o    *Options
	}{
		{"defaults", nil},
		{"window 16 unlimited", &Options{WindowSize: 16, MaxRefCount: -1}},
		{"no references", &Options{WindowSize: -1}},
		{"generic codes", &Options{Flags: Flags{Outdegrees: CodeDelta, References: CodeGamma}}},
	}
	ranges := [][2]int{{0, n}, {0, 0}, {n, n}, {1, n}, {7, 8}, {7, n/2 + 7}, {16, 17}, {n / 2, n}, {n - 1, n}, {3, 3}}
	for _, o := range opts {
		g, _, _ := encodeLists(t, lists, o.o)
		for _, r := range ranges {
			t.Run(fmt.Sprintf("%s/%d-%d", o.name, r[0], r[1]), func(t *testing.T) {
				it, err := g.NodeIteratorRange(r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				nodes, got := collect(t, it)
				if len(nodes) != r[1]-r[0] || len(nodes) > 0 && (nodes[0] != r[0] || nodes[len(nodes)-1] != r[1]-1) {
					t.Fatalf("nodes %v, want [%d, %d)", nodes, r[0], r[1])
				}
				if !equalLists(got, lists[r[0]:r[1]]) {
					t.Fatalf("lists of [%d, %d) differ", r[0], r[1])
				}
			})
		}
	}
	g, _, _ := encodeLists(t, lists, nil)
	for _, r := range [][2]int{{-1, 3}, {5, 4}, {0, n + 1}} {
		if _, err := g.NodeIteratorRange(r[0], r[1]); !errors.Is(err, ErrNodeRange) {
			t.Errorf("NodeIteratorRange(%d, %d): err %v, want ErrNodeRange", r[0], r[1], err)
		}
	}
}

func TestSplitNodeIterators(t *testing.T) {
	lists := randomWebLike(6, sizeFor(1000, 200))
	for _, o := range []*Options{nil, {Flags: Flags{Residuals: CodeDelta}}} {
		g, _, _ := encodeLists(t, lists, o)
		for _, k := range []int{1, 2, 3, 7, 64, len(lists) + 10} {
			its, err := g.SplitNodeIterators(k)
			if err != nil {
				t.Fatal(err)
			}
			if len(its) == 0 || len(its) > k {
				t.Fatalf("k=%d: %d iterators", k, len(its))
			}
			// Scan all ranges at once, as the goroutines of a parallel
			// algorithm would, then check that together they are the graph.
			got := make([][][]int, len(its))
			nodes := make([][]int, len(its))
			var wg sync.WaitGroup
			for i, it := range its {
				wg.Go(func() {
					for x, succ := range it.All() {
						nodes[i] = append(nodes[i], x)
						got[i] = append(got[i], slices.Clone(succ))
					}
				})
			}
			wg.Wait()
			var all [][]int
			next := 0
			for i, it := range its {
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				for _, x := range nodes[i] {
					if x != next {
						t.Fatalf("k=%d: iterator %d yields node %d, want %d", k, i, x, next)
					}
					next++
				}
				all = append(all, got[i]...)
			}
			if !equalLists(all, lists) {
				t.Fatalf("k=%d: the split scan differs from the graph", k)
			}
		}
	}
	g, _, _ := encodeLists(t, lists, nil)
	if _, err := g.SplitNodeIterators(0); err == nil {
		t.Error("SplitNodeIterators(0) accepted")
	}
	empty, _, _ := encodeLists(t, nil, nil)
	its, err := empty.SplitNodeIterators(3)
	if err != nil || len(its) != 1 || its[0].Next() {
		t.Errorf("empty graph: %d iterators, %v", len(its), err)
	}
}

// TestSharedSplit scans cnr-2000 with two iterators in parallel and checks
// the arcs, in order, against the published SHA-1.
func TestSharedSplit(t *testing.T) {
	skipUnderRace(t)
	g := openShared(t, "cnr-2000")
	its, err := g.SplitNodeIterators(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 2 {
		t.Fatalf("%d iterators, want 2", len(its))
	}
	parts := make([][]byte, len(its))
	var wg sync.WaitGroup
	for i, it := range its {
		wg.Go(func() {
			var buf [8]byte
			for x, succ := range it.All() {
				for _, y := range succ {
					binary.BigEndian.PutUint32(buf[:4], uint32(x))
					binary.BigEndian.PutUint32(buf[4:], uint32(y))
					parts[i] = append(parts[i], buf[:]...)
				}
			}
		})
	}
	wg.Wait()
	h := sha1.New()
	for i, it := range its {
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		h.Write(parts[i])
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != "b37eaeeeadbd6d190a0f2014e1dcd921f4535fa7" {
		t.Errorf("SHA-1 of the split scan %s", got)
	}
	// The split halves the stream, and so roughly the arcs.
	for i := range parts {
		if arcs := len(parts[i]) / 8; float64(arcs) > 0.6*float64(g.NumArcs()) {
			t.Errorf("iterator %d has %d of %d arcs", i, arcs, g.NumArcs())
		}
	}
}

// TestScansReuseBuffers checks the hand-over of a finished scan's lists to
// the next scan of the same graph: scans that run side by side never share
// them, lists left in a handed-over ring are never read as references, and
// a finished iterator has no current list.
func TestScansReuseBuffers(t *testing.T) {
	lists := randomWebLike(9, sizeFor(600, 150))
	for _, o := range []*Options{nil, {WindowSize: 16, MaxRefCount: -1}} {
		g, _, _ := encodeLists(t, lists, o)
		for pass := range 3 {
			// Two scans side by side, b three nodes behind a, the first
			// with the previous pass's buffers; then a range scan started
			// in the middle.
			a, b := g.NodeIterator(), g.NodeIterator()
			check := func(it *NodeIterator, x int) {
				t.Helper()
				if !it.Next() {
					t.Fatalf("pass %d: scan ended at node %d: %v", pass, x, it.Err())
				}
				if got := it.Successors(); it.Node() != x || !slices.Equal(got, lists[x]) && len(got)+len(lists[x]) > 0 {
					t.Fatalf("pass %d: node %d: %v, want %v", pass, x, got, lists[x])
				}
			}
			for x := range len(lists) + 3 {
				if x < len(lists) {
					check(a, x)
				}
				if x >= 3 {
					check(b, x-3)
				}
			}
			if a.Next() || b.Next() || a.Successors() != nil || a.Err() != nil {
				t.Fatalf("pass %d: after the end: Successors %v, err %v", pass, a.Successors(), a.Err())
			}
			mid := len(lists)/2 + pass
			it, err := g.NodeIteratorRange(mid, len(lists))
			if err != nil {
				t.Fatal(err)
			}
			if _, got := collect(t, it); !equalLists(got, lists[mid:]) {
				t.Fatalf("pass %d: the range scan from %d differs", pass, mid)
			}
		}
	}
}
