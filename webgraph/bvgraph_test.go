package webgraph

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crawlkit/crawlkit/webgraph/bitio"
)

// encodeLists compresses lists with o and loads the result back.
func encodeLists(tb testing.TB, lists [][]int, o *Options) (*BVGraph, []byte, []byte) {
	tb.Helper()
	var gb, ob bytes.Buffer
	enc, err := NewEncoder(&gb, &ob, o)
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range lists {
		if err := enc.Add(l); err != nil {
			tb.Fatal(err)
		}
	}
	p, err := enc.Close()
	if err != nil {
		tb.Fatal(err)
	}
	g, err := Load(p, gb.Bytes(), ob.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	return g, gb.Bytes(), ob.Bytes()
}

// checkLists verifies sequential and random access against lists.
func checkLists(tb testing.TB, g *BVGraph, lists [][]int) {
	tb.Helper()
	if g.NumNodes() != len(lists) {
		tb.Fatalf("nodes = %d, want %d", g.NumNodes(), len(lists))
	}
	it := g.NodeIterator()
	for it.Next() {
		x := it.Node()
		if !slices.Equal(it.Successors(), lists[x]) && !(len(lists[x]) == 0 && len(it.Successors()) == 0) {
			tb.Fatalf("sequential node %d: got %v want %v", x, it.Successors(), lists[x])
		}
	}
	if it.Err() != nil {
		tb.Fatal(it.Err())
	}
	var buf []int
	for _, x := range rand.New(rand.NewPCG(9, 9)).Perm(len(lists)) {
		var err error
		buf, err = g.Successors(x, buf)
		if err != nil {
			tb.Fatal(err)
		}
		if !slices.Equal(buf, lists[x]) && !(len(lists[x]) == 0 && len(buf) == 0) {
			tb.Fatalf("random node %d: got %v want %v", x, buf, lists[x])
		}
		d, err := g.Outdegree(x)
		if err != nil || d != len(lists[x]) {
			tb.Fatalf("outdegree(%d) = %d, %v; want %d", x, d, err, len(lists[x]))
		}
	}
}

// randomWebLike makes a graph with web-like structure: sites of similar
// pages sharing navigation links, runs of consecutive ids, and random
// long-range links.
func randomWebLike(seed uint64, n int) [][]int {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	lists := make([][]int, n)
	for x := 0; x < n; x++ {
		set := map[int]bool{}
		if rng.IntN(8) == 0 {
			lists[x] = nil
			continue
		}
		site := x / 50 * 50
		for i := 0; i < 6; i++ { // template links
			if rng.IntN(10) > 0 {
				set[min(n-1, site+i*3)] = true
			}
		}
		if rng.IntN(3) == 0 { // a run
			s := rng.IntN(n)
			for i := 0; i < rng.IntN(12); i++ {
				set[min(n-1, s+i)] = true
			}
		}
		for i := 0; i < rng.IntN(6); i++ {
			set[rng.IntN(n)] = true
		}
		if rng.IntN(4) == 0 {
			set[x] = true
		}
		for y := range set {
			lists[x] = append(lists[x], y)
		}
		slices.Sort(lists[x])
	}
	return lists
}

func TestRoundTripOptions(t *testing.T) {
	lists := randomWebLike(1, sizeFor(1500, 300))
	tests := []struct {
		name string
		o    *Options
	}{
		{"nil options", nil},
		{"defaults", &DefaultOptions},
		{"no references", &Options{WindowSize: -1}},
		{"no intervals", &Options{MinIntervalLength: -1}},
		{"no refs no intervals", &Options{WindowSize: -1, MinIntervalLength: -1}},
		{"window 1", &Options{WindowSize: 1}},
		{"window 16 unlimited", &Options{WindowSize: 16, MaxRefCount: -1}},
		{"min interval 2", &Options{MinIntervalLength: 2}},
		{"zeta 1", &Options{ZetaK: 1}},
		{"zeta 5", &Options{ZetaK: 5}},
		{"delta outdegrees, gamma refs", &Options{Flags: Flags{Outdegrees: CodeDelta, References: CodeGamma, BlockCount: CodeUnary, Blocks: CodeDelta}}},
		{"nibble residuals, delta offsets", &Options{Flags: Flags{Residuals: CodeNibble, Offsets: CodeDelta}}},
		{"golomb residuals", &Options{ZetaK: 4, Flags: Flags{Residuals: CodeGolomb}}},
		{"gamma residuals", &Options{Flags: Flags{Residuals: CodeGamma, References: CodeDelta}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, data, _ := encodeLists(t, lists, tt.o)
			checkLists(t, g, lists)
			// Properties survive a write/parse cycle and decode the same.
			var pb bytes.Buffer
			p := g.Properties()
			if _, err := p.WriteTo(&pb); err != nil {
				t.Fatal(err)
			}
			p2, err := ParseProperties(&pb)
			if err != nil {
				t.Fatal(err)
			}
			if p2.Flags.resolved() != p.Flags.resolved() || p2.WindowSize != p.WindowSize || p2.ZetaK != p.ZetaK || p2.MinIntervalLength != p.MinIntervalLength {
				t.Fatalf("properties changed: %+v → %+v", p, p2)
			}
			// Offsets rebuilt by a sequential pass agree.
			g2, err := Load(p2, data, nil)
			if err != nil {
				t.Fatal(err)
			}
			for x := 0; x <= g.NumNodes(); x++ {
				a, _ := g.Offset(x)
				b, _ := g2.Offset(x)
				if a != b {
					t.Fatalf("offset %d: %d vs rebuilt %d", x, a, b)
				}
			}
		})
	}
}

// TestBookExample encodes the four rows of IIR Figure 20.6 (ids shifted to
// start at 0) and decodes them back.
func TestBookExample(t *testing.T) {
	rows := [][]int{
		{1, 2, 4, 8, 16, 32, 64},
		{1, 4, 9, 16, 25, 36, 49, 64},
		{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144},
		{1, 4, 8, 16, 25, 36, 49, 64},
	}
	lists := make([][]int, 145)
	copy(lists, rows)
	g, _, _ := encodeLists(t, lists, nil)
	checkLists(t, g, lists)
	// Row 4 is row 2 with 9 replaced by 8: the encoder must pick the
	// reference at distance 2, as the book describes.
	var st succState
	st.r.ResetWords(g.words, g.nbits)
	st.r.SetPosition(g.offsets.get(3))
	h, err := g.readHeader(&st.r, 3)
	if err != nil || h.ref != 2 {
		t.Fatalf("row 4 references %d (err %v), want 2", h.ref, err)
	}
}

// TestPaperExample round-trips the successor lists of nodes 15–18 from
// Boldi and Vigna, "The WebGraph Framework I" (WWW 2004), Table 1, with
// every combination of references and intervals.
func TestPaperExample(t *testing.T) {
	lists := make([][]int, 3042)
	lists[15] = []int{13, 15, 16, 17, 18, 19, 23, 24, 203, 315, 1034}
	lists[16] = []int{15, 16, 17, 22, 23, 24, 315, 316, 317, 3041}
	lists[18] = []int{13, 15, 16, 17, 50}
	for _, o := range []*Options{nil, {MinIntervalLength: 2}, {WindowSize: -1}, {MinIntervalLength: -1}, {WindowSize: 1, MinIntervalLength: 3}} {
		g, _, _ := encodeLists(t, lists, o)
		checkLists(t, g, lists)
	}
}

// TestLongReferenceChains builds a graph in which every list extends the
// previous one, compressed with window 16 and unlimited references: the
// chains are thousands of lists long and random access must still work.
func TestLongReferenceChains(t *testing.T) {
	const n = 5000
	lists := make([][]int, n)
	base := []int{0, 3, 7, 11, 19, 23, 31, 47}
	for x := range lists {
		lists[x] = append(slices.Clone(base), 100+x%(n-100))
	}
	g, _, _ := encodeLists(t, lists, &Options{WindowSize: 16, MaxRefCount: -1})
	var st succState
	out, err := g.successors(n-1, nil, &st)
	if err != nil || !slices.Equal(out, lists[n-1]) {
		t.Fatalf("got %v, %v", out, err)
	}
	if len(st.chain) < 1000 {
		t.Fatalf("chain length %d: the test no longer exercises long chains", len(st.chain))
	}
	// Random access costs the chain length: check a sample, and the
	// whole graph sequentially.
	for _, x := range []int{0, 1, 17, 999, 2500, n - 2} {
		if out, err = g.Successors(x, out); err != nil || !slices.Equal(out, lists[x]) {
			t.Fatalf("node %d: got %v, %v", x, out, err)
		}
	}
	it := g.NodeIterator()
	for it.Next() {
		if !slices.Equal(it.Successors(), lists[it.Node()]) {
			t.Fatalf("sequential node %d differs", it.Node())
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
}

func TestEncoderRejects(t *testing.T) {
	tests := []struct {
		name  string
		lists [][]int
	}{
		{"unsorted", [][]int{{1, 0}, {}}},
		{"repeated", [][]int{{1, 1}, {}}},
		{"negative", [][]int{{-1}}},
		{"dangling", [][]int{{5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, _ := NewEncoder(&bytes.Buffer{}, nil, nil)
			var err error
			for _, l := range tt.lists {
				if err = enc.Add(l); err != nil {
					break
				}
			}
			if err == nil {
				_, err = enc.Close()
			}
			if !errors.Is(err, ErrInput) {
				t.Fatalf("err = %v, want ErrInput", err)
			}
		})
	}
}

func TestNodeRange(t *testing.T) {
	g, _, _ := encodeLists(t, [][]int{{1}, {0}}, nil)
	for _, x := range []int{-1, 2} {
		if _, err := g.Successors(x, nil); !errors.Is(err, ErrNodeRange) {
			t.Errorf("Successors(%d): %v", x, err)
		}
		if _, err := g.Outdegree(x); !errors.Is(err, ErrNodeRange) {
			t.Errorf("Outdegree(%d): %v", x, err)
		}
	}
}

// TestCorruptStreams truncates and flips bits of a valid stream: decoding
// must fail with ErrFormat or succeed, never panic.
func TestCorruptStreams(t *testing.T) {
	lists := randomWebLike(2, 300)
	g, data, offs := encodeLists(t, lists, nil)
	p := g.Properties()
	// Truncation: rebuilding offsets must fail.
	if _, err := Load(&p, data[:len(data)/2], nil); !errors.Is(err, ErrFormat) {
		t.Fatalf("truncated stream: err = %v", err)
	}
	if _, err := Load(&p, data, offs[:len(offs)/2]); !errors.Is(err, ErrFormat) {
		t.Fatalf("truncated offsets: err = %v", err)
	}
	if _, err := Load(nil, data, offs); err == nil {
		t.Fatal("Load without properties accepted")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < sizeFor(200, 40); i++ {
		bad := slices.Clone(data)
		for k := 0; k < 1+rng.IntN(4); k++ {
			bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
		}
		exerciseGraph(t, &p, bad, offs)
	}
}

func TestHugeNodeCountRefused(t *testing.T) {
	p := &Properties{Nodes: 1 << 30, Arcs: 0, WindowSize: 7, MaxRefCount: 3, MinIntervalLength: 4, ZetaK: 3}
	for _, offs := range [][]byte{nil, {0x80}} {
		if _, err := Load(p, []byte{0x80, 0}, offs); !errors.Is(err, ErrFormat) {
			t.Fatalf("err = %v, want ErrFormat", err)
		}
	}
}

// exerciseGraph decodes everything it can; errors are fine, panics are not.
func exerciseGraph(t *testing.T, p *Properties, data, offs []byte) {
	t.Helper()
	for _, o := range [][]byte{nil, offs} {
		g, err := Load(p, data, o)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("Load: unexpected error class %v", err)
			}
			continue
		}
		it := g.NodeIterator()
		for it.Next() {
		}
		// Split iterators start in the middle, from windows filled by
		// random access.
		if its, err := g.SplitNodeIterators(3); err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("SplitNodeIterators: unexpected error class %v", err)
			}
		} else {
			for _, it := range its {
				for it.Next() {
				}
				if err := it.Err(); err != nil && !errors.Is(err, ErrFormat) {
					t.Fatalf("split iterator: unexpected error class %v", err)
				}
			}
		}
		checkDecodersAgree(t, p, data, o)
		var buf []int
		for x := 0; x < g.NumNodes(); x++ {
			if buf, err = g.Successors(x, buf); err != nil && !errors.Is(err, ErrFormat) {
				t.Fatalf("Successors: unexpected error class %v", err)
			}
			if _, err = g.Outdegree(x); err != nil && !errors.Is(err, ErrFormat) {
				t.Fatalf("Outdegree: unexpected error class %v", err)
			}
		}
	}
}

// FuzzBVGraph decodes arbitrary graph and offsets streams under arbitrary
// parameters.
func FuzzBVGraph(f *testing.F) {
	for i, o := range []*Options{nil, {WindowSize: 2, MaxRefCount: -1, MinIntervalLength: 2}, {WindowSize: -1, Flags: Flags{Residuals: CodeNibble}}} {
		lists := randomWebLike(uint64(i), 40)
		g, data, offs := encodeLists(f, lists, o)
		p := g.Properties()
		f.Add(data, offs, uint8(p.Nodes), uint8(p.WindowSize), uint8(p.MinIntervalLength), uint8(p.ZetaK), uint8(i))
	}
	f.Add([]byte{0xff, 0x00, 0x01}, []byte{0x80}, uint8(3), uint8(7), uint8(4), uint8(3), uint8(0))
	f.Fuzz(func(t *testing.T, data, offs []byte, nodes, window, minInt, zk, flags uint8) {
		p := &Properties{Nodes: int(nodes), Arcs: -1, MaxRefCount: Unlimited, WindowSize: int(window % 20), MinIntervalLength: int(minInt % 6), ZetaK: 1 + int(zk%7)}
		switch flags % 4 {
		case 1:
			p.Flags.Residuals = CodeNibble
		case 2:
			p.Flags = Flags{Outdegrees: CodeDelta, References: CodeGamma, Residuals: CodeGolomb}
		case 3:
			p.Flags.Residuals = CodeGamma
		}
		// Arcs -1 never matches, so Load without offsets always reports the
		// mismatch after a full sequential pass; with offsets it loads.
		exerciseGraph(t, p, data, offs)
	})
}

func TestSharedStats(t *testing.T) {
	skipUnderRace(t)
	g := openShared(t, "cnr-2000")
	n := g.NumNodes()
	indeg := make([]int32, n)
	var loops, zero, maxOut, maxOutNode int
	it := g.NodeIterator()
	for it.Next() {
		x, s := it.Node(), it.Successors()
		if len(s) == 0 {
			zero++
		}
		if len(s) > maxOut {
			maxOut, maxOutNode = len(s), x
		}
		for _, y := range s {
			if y == x {
				loops++
			}
			indeg[y]++
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	maxIn, maxInNode := int32(0), 0
	for y, d := range indeg {
		if d > maxIn {
			maxIn, maxInNode = d, y
		}
	}
	got := fmt.Sprint(loops, maxOut, maxOutNode, zero, maxIn, maxInNode)
	if want := fmt.Sprint(87442, 2716, 217849, 78056, 18235, 60599); got != want {
		t.Fatalf("loops, max out-degree (node), zero out-degree, max in-degree (node) = %s, want %s", got, want)
	}
}

// TestSharedTranspose checks that cnr-2000-t is the transpose of cnr-2000,
// that random access agrees with the sequential scan, that offsets rebuilt
// without the .offsets file agree with it, and that Transpose produces the
// Java file bit for bit.
func TestSharedTranspose(t *testing.T) {
	skipUnderRace(t)
	g := openShared(t, "cnr-2000")
	gt := openShared(t, "cnr-2000-t")
	n := g.NumNodes()
	// Counting sort of the arcs by target: the transpose's lists.
	start := make([]int32, n+1)
	it := g.NodeIterator()
	for it.Next() {
		for _, y := range it.Successors() {
			start[y+1]++
		}
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	src := make([]int32, start[n])
	fill := slices.Clone(start)
	it = g.NodeIterator()
	for it.Next() {
		for _, y := range it.Successors() {
			src[fill[y]] = int32(it.Node())
			fill[y]++
		}
	}
	var buf []int
	var err error
	rng := rand.New(rand.NewPCG(1, 1))
	it = gt.NodeIterator()
	for it.Next() {
		y := it.Node()
		want := src[start[y]:start[y+1]]
		got := it.Successors()
		if len(got) != len(want) {
			t.Fatalf("in-degree of %d: %d, want %d", y, len(got), len(want))
		}
		for i := range got {
			if int32(got[i]) != want[i] {
				t.Fatalf("in-links of %d differ", y)
			}
		}
		if rng.IntN(16) == 0 { // random access on a sample of nodes
			if buf, err = gt.Successors(y, buf); err != nil || !slices.Equal(buf, got) {
				t.Fatalf("random access of %d: %v %v", y, buf, err)
			}
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	p := gt.Properties()
	data, _ := os.ReadFile(filepath.Join(sharedDir, "cnr-2000-t.graph"))
	rebuilt, err := Load(&p, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for x := 0; x <= n; x += 1 + rng.IntN(64) {
		a, _ := gt.Offset(x)
		b, _ := rebuilt.Offset(x)
		if a != b {
			t.Fatalf("offset %d: %d, rebuilt %d", x, a, b)
		}
	}
}

func TestConcurrentReaders(t *testing.T) {
	lists := randomWebLike(8, 500)
	g, _, _ := encodeLists(t, lists, nil)
	done := make(chan error)
	for w := 0; w < 4; w++ {
		go func(w int) {
			var buf []int
			var err error
			for x := w; x < len(lists); x += 2 {
				if buf, err = g.Successors(x, buf); err != nil || !slices.Equal(buf, lists[x]) && len(lists[x])+len(buf) > 0 {
					done <- fmt.Errorf("node %d: %v %v", x, buf, err)
					return
				}
			}
			done <- nil
		}(w)
	}
	for w := 0; w < 4; w++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestChainLongerThanMaxRef rewrites the maxrefcount property of a graph
// compressed with unlimited chains: random access must refuse the chains.
func TestChainLongerThanMaxRef(t *testing.T) {
	lists := make([][]int, 50)
	for x := range lists {
		lists[x] = []int{1, 2, 3, 7, 9, 10 + x%40}
	}
	g, data, offs := encodeLists(t, lists, &Options{MaxRefCount: -1})
	p := g.Properties()
	p.MaxRefCount = 3
	g2, err := Load(&p, data, offs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g2.Successors(49, nil); !errors.Is(err, ErrFormat) {
		t.Fatalf("err = %v, want ErrFormat", err)
	}
}

func TestEmptyAndTinyGraphs(t *testing.T) {
	for _, lists := range [][][]int{nil, {{}}, {{0}}, {{}, {}, {}}, {{1}, {0}}} {
		g, data, _ := encodeLists(t, lists, nil)
		checkLists(t, g, lists)
		p := g.Properties()
		if _, err := Load(&p, data, nil); err != nil {
			t.Fatalf("%v: rebuilding offsets: %v", lists, err)
		}
	}
}

// checkDecodersAgree loads the graph twice, once forced onto the generic
// decoder, and checks that the fast decoder of the default codes gives the
// same lists, and fails on the same nodes, sequentially and by random access.
func checkDecodersAgree(t *testing.T, p *Properties, data, offs []byte) {
	t.Helper()
	fast, err1 := Load(p, data, offs)
	slow, err2 := Load(p, data, offs)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("Load: %v vs %v", err1, err2)
	}
	if err1 != nil || !fast.fast {
		return
	}
	slow.fast = false
	fi, si := fast.NodeIterator(), slow.NodeIterator()
	for {
		fn, sn := fi.Next(), si.Next()
		if fn != sn {
			t.Fatalf("node %d: fast Next %v (%v), generic %v (%v)", si.Node(), fn, fi.Err(), sn, si.Err())
		}
		if !fn {
			break
		}
		if !slices.Equal(fi.Successors(), si.Successors()) {
			t.Fatalf("node %d: fast %v, generic %v", fi.Node(), fi.Successors(), si.Successors())
		}
		checkList(t, fast, fi.Node(), fi.Successors())
	}
	if (fi.Err() == nil) != (si.Err() == nil) || (fi.Err() != nil && !errors.Is(fi.Err(), ErrFormat)) {
		t.Fatalf("iteration errors: fast %v, generic %v", fi.Err(), si.Err())
	}
	var a, b []int
	for x := 0; x < fast.NumNodes(); x++ {
		var ea, eb error
		a, ea = fast.Successors(x, a)
		b, eb = slow.Successors(x, b)
		if (ea == nil) != (eb == nil) || (ea == nil && !slices.Equal(a, b)) {
			t.Fatalf("Successors(%d): fast %v %v, generic %v %v", x, a, ea, b, eb)
		}
		if ea != nil && !errors.Is(ea, ErrFormat) {
			t.Fatalf("Successors(%d): unexpected error class %v", x, ea)
		}
		if ea == nil {
			checkList(t, fast, x, a)
		}
	}
}

// checkList fails unless list, decoded without error as the successors of
// x, is what a successor list can be, however corrupt the stream: node ids
// of g in increasing order, no more of them than there are nodes.
func checkList(t *testing.T, g *BVGraph, x int, list []int) {
	t.Helper()
	if len(list) > g.NumNodes() {
		t.Fatalf("node %d: %d successors in a graph of %d nodes", x, len(list), g.NumNodes())
	}
	for i, y := range list {
		if y < 0 || y >= g.NumNodes() || i > 0 && y <= list[i-1] {
			t.Fatalf("node %d: successor %d at %d of %v is not a node id in increasing order (graph of %d nodes)", x, y, i, list, g.NumNodes())
		}
	}
}

// TestDecodersAgree runs the fast and the generic decoders side by side on
// valid web-like graphs with the default codes and several parameters.
func TestDecodersAgree(t *testing.T) {
	tests := []struct {
		name string
		o    *Options
	}{
		{"defaults", nil},
		{"window 2 unlimited refs", &Options{WindowSize: 2, MaxRefCount: -1, MinIntervalLength: 2}},
		{"no intervals", &Options{MinIntervalLength: -1}},
		{"no references", &Options{WindowSize: -1}},
		{"zeta 5", &Options{ZetaK: 5}},
		{"zeta 1", &Options{ZetaK: 1}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lists := randomWebLike(uint64(100+i), sizeFor(2000, 300))
			g, data, offs := encodeLists(t, lists, tt.o)
			if !g.fast {
				t.Fatal("default codes did not select the fast decoder")
			}
			checkLists(t, g, lists)
			p := g.Properties()
			checkDecodersAgree(t, &p, data, offs)
			checkDecodersAgree(t, &p, data, nil)
		})
	}
}

// TestResidualPastLastNode: a residual gap that lands exactly on node n
// (one past the last) is corrupt; both decoders, sequential and random
// access, refuse it rather than return a successor that is not a node.
func TestResidualPastLastNode(t *testing.T) {
	p := &Properties{Nodes: 2, Arcs: 2, WindowSize: 7, MaxRefCount: 3, MinIntervalLength: 4, ZetaK: 3}
	for _, gap := range []uint64{0, 1} { // successors {0, 1}, then {0, 2}
		w := bitio.NewWriter(nil)
		// Node 0: outdegree 2, no reference, no interval, residuals
		// 0 (a distance of 0 from node 0) and 0+gap+1.
		n0 := w.WriteGamma(2) + w.WriteUnary(0) + w.WriteGamma(0) + w.WriteZeta(int2nat(0), 3) + w.WriteZeta(gap, 3)
		n1 := w.WriteGamma(0) // node 1: no successors
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		// Without offsets, Load's scan refuses the corrupt graph whole.
		if _, err := Load(p, w.Bytes(), nil); (err != nil) != (gap == 1) || err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("gap %d: Load without offsets: %v", gap, err)
		}
		// With them, each decoder meets the record on its own.
		o := bitio.NewWriter(nil)
		o.WriteGamma(0)
		o.WriteGamma(n0)
		o.WriteGamma(n1)
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
		g, err := Load(p, w.Bytes(), o.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for _, fast := range []bool{true, false} {
			g.fast = fast
			succ, err := g.Successors(0, nil)
			it := g.NodeIterator()
			it.Next()
			if gap == 0 {
				if err != nil || !slices.Equal(succ, []int{0, 1}) || !slices.Equal(it.Successors(), []int{0, 1}) {
					t.Errorf("fast %v: valid list decoded as %v, %v / %v, %v", fast, succ, err, it.Successors(), it.Err())
				}
				continue
			}
			if !errors.Is(err, ErrFormat) || !errors.Is(it.Err(), ErrFormat) {
				t.Errorf("fast %v: successor 2 of a 2-node graph: Successors %v, %v; Next %v, %v", fast, succ, err, it.Successors(), it.Err())
			}
		}
	}
}
