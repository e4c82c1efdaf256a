package graphtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/webgraph"
)

// Harness tells Run how to build the store under test.
type Harness struct {
	// New returns a store holding exactly the graph of links: every
	// Src and Dst is a node, repeated links count once, self-loops are
	// arcs; urls are further nodes, with or without links (repeats
	// allowed). It is called once per graph; cleanup (closing files)
	// belongs in t.Cleanup.
	New func(t *testing.T, links []webgraph.Link, urls []string) webgraph.GraphStore
}

// graphCase is one graph the suite builds.
type graphCase struct {
	name  string
	links []webgraph.Link
	urls  []string
}

// site is a small site with nested paths, plus a host linking into it.
var site = []webgraph.Link{
	{Src: "http://www.stanford.edu/alchemy", Dst: "http://www.stanford.edu/biology"},
	{Src: "http://www.stanford.edu/alchemy", Dst: "http://www.stanford.edu/chemistry"},
	{Src: "http://www.stanford.edu/biology", Dst: "http://www.stanford.edu/biology/plant"},
	{Src: "http://www.stanford.edu/biology/plant", Dst: "http://www.stanford.edu/biology/plant/copyright"},
	{Src: "http://www.stanford.edu/biology/plant", Dst: "http://www.stanford.edu/biology/plant/people"},
	{Src: "http://www.stanford.edu/biology/plant/people", Dst: "http://www.stanford.edu/biology/plant/copyright"},
	{Src: "http://www.stanford.edu/chemistry", Dst: "http://www.stanford.edu/biology/plant/copyright"},
	{Src: "http://www.mit.edu/", Dst: "http://www.stanford.edu/biology/plant/copyright"},
}

func cases() []graphCase {
	return []graphCase{
		{name: "Empty"},
		{name: "URLsOnly", urls: []string{"http://b.test/", "http://a.test/x", "http://a.test/", "http://a.test/", "https://a.test/", "not a url"}},
		{name: "SelfLoopsAndRepeats", links: []webgraph.Link{
			{Src: "http://a.test/", Dst: "http://a.test/"},
			{Src: "http://a.test/", Dst: "http://a.test/b"},
			{Src: "http://a.test/", Dst: "http://a.test/b"},
			{Src: "http://a.test/b", Dst: "http://a.test/b"},
			{Src: "http://a.test/b", Dst: "http://a.test/"},
			{Src: "http://a.test/b", Dst: "https://a.test/b"},
			{Src: "https://a.test/b", Dst: "http://a.test/b"},
			{Src: "http://a.test/b", Dst: "http://a.test/"},
		}, urls: []string{"http://a.test/", "http://z.test/"}},
		{name: "Site", links: site, urls: []string{"http://lonely.example/"}},
		{name: "Crawl", links: Links(1, 12, scale(6000, 1500)), urls: []string{"http://isolated.example.com/", "not a url"}},
	}
}

// Run runs the conformance suite as subtests of t: one subtest per graph,
// each with a subtest per group of checks.
func Run(t *testing.T, h Harness) {
	for _, gc := range cases() {
		t.Run(gc.name, func(t *testing.T) {
			m := newModel(gc.links, gc.urls)
			s := h.New(t, slices.Clone(gc.links), slices.Clone(gc.urls))
			checks := []struct {
				name string
				fn   func(*testing.T, webgraph.GraphStore, *model)
			}{
				{"Counts", testCounts},
				{"URLMap", testURLMap},
				{"Adjacency", testAdjacency},
				{"Errors", testErrors},
				{"Buffers", testBuffers},
				{"URLHelpers", testURLHelpers},
				{"Concurrent", testConcurrent},
			}
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) { c.fn(t, s, m) })
			}
		})
	}
}

// model is the graph as the suite computes it from the links.
type model struct {
	urls    []string // distinct, in CompareURLs order: index = id
	ids     map[string]int
	out, in [][]int
	arcs    int64
}

func newModel(links []webgraph.Link, extra []string) *model {
	m := &model{ids: map[string]int{}}
	for _, u := range extra {
		m.ids[u] = 0
	}
	for _, l := range links {
		m.ids[l.Src], m.ids[l.Dst] = 0, 0
	}
	for u := range m.ids {
		m.urls = append(m.urls, u)
	}
	slices.SortFunc(m.urls, webgraph.CompareURLs)
	for i, u := range m.urls {
		m.ids[u] = i
	}
	arcs := map[[2]int]bool{}
	m.out, m.in = make([][]int, len(m.urls)), make([][]int, len(m.urls))
	for _, l := range links {
		a := [2]int{m.ids[l.Src], m.ids[l.Dst]}
		if !arcs[a] {
			arcs[a] = true
			m.out[a[0]] = append(m.out[a[0]], a[1])
			m.in[a[1]] = append(m.in[a[1]], a[0])
		}
	}
	for x := range m.out {
		slices.Sort(m.out[x])
		slices.Sort(m.in[x])
	}
	m.arcs = int64(len(arcs))
	return m
}

func (m *model) maxDegree() int {
	d := 0
	for x := range m.out {
		d = max(d, len(m.out[x]), len(m.in[x]))
	}
	return d
}

func testCounts(t *testing.T, s webgraph.GraphStore, m *model) {
	if n := s.NumNodes(); n != len(m.urls) {
		t.Fatalf("NumNodes = %d, want %d (distinct URLs)", n, len(m.urls))
	}
	if a := s.NumArcs(); a != m.arcs {
		t.Fatalf("NumArcs = %d, want %d (distinct links)", a, m.arcs)
	}
	var outSum, inSum int64
	for x := range m.urls {
		do, err := s.OutDegree(x)
		if err != nil {
			t.Fatalf("OutDegree(%d): %v", x, err)
		}
		di, err := s.InDegree(x)
		if err != nil {
			t.Fatalf("InDegree(%d): %v", x, err)
		}
		outSum += int64(do)
		inSum += int64(di)
	}
	if outSum != m.arcs || inSum != m.arcs {
		t.Errorf("out-degrees sum to %d and in-degrees to %d, want NumArcs %d", outSum, inSum, m.arcs)
	}
}

func testURLMap(t *testing.T, s webgraph.GraphStore, m *model) {
	for id, u := range m.urls {
		got, err := s.URL(id)
		if err != nil || got != u {
			t.Fatalf("URL(%d) = %q, %v; want %q (ids follow CompareURLs)", id, got, err, u)
		}
		gid, err := s.ID(u)
		if err != nil || gid != id {
			t.Fatalf("ID(%q) = %d, %v; want %d", u, gid, err, id)
		}
	}
}

func testAdjacency(t *testing.T, s webgraph.GraphStore, m *model) {
	var buf []int
	for x := range m.urls {
		for _, dir := range []struct {
			name   string
			list   func(int, []int) ([]int, error)
			degree func(int) (int, error)
			want   []int
		}{
			{"Out", s.Out, s.OutDegree, m.out[x]},
			{"In", s.In, s.InDegree, m.in[x]},
		} {
			var err error
			buf, err = dir.list(x, buf)
			if err != nil {
				t.Fatalf("%s(%d): %v", dir.name, x, err)
			}
			if !slices.Equal(buf, dir.want) {
				t.Fatalf("%s(%d) = %v, want %v", dir.name, x, buf, dir.want)
			}
			if d, err := dir.degree(x); err != nil || d != len(dir.want) {
				t.Fatalf("%sDegree(%d) = %d, %v; want %d", dir.name, x, d, err, len(dir.want))
			}
		}
	}
}

// wantErr checks that err is a *webgraph.Error wrapping target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	var we *webgraph.Error
	if !errors.Is(err, target) || !errors.As(err, &we) {
		t.Errorf("%s: error %v, want a *webgraph.Error wrapping %v", what, err, target)
	}
}

func testErrors(t *testing.T, s webgraph.GraphStore, m *model) {
	n := len(m.urls)
	for _, id := range []int{-1, n, n + 1000} {
		_, err := s.Out(id, nil)
		wantErr(t, fmt.Sprintf("Out(%d)", id), err, webgraph.ErrNodeRange)
		_, err = s.In(id, nil)
		wantErr(t, fmt.Sprintf("In(%d)", id), err, webgraph.ErrNodeRange)
		_, err = s.OutDegree(id)
		wantErr(t, fmt.Sprintf("OutDegree(%d)", id), err, webgraph.ErrNodeRange)
		_, err = s.InDegree(id)
		wantErr(t, fmt.Sprintf("InDegree(%d)", id), err, webgraph.ErrNodeRange)
		_, err = s.URL(id)
		wantErr(t, fmt.Sprintf("URL(%d)", id), err, webgraph.ErrNodeRange)
	}
	unknown := []string{"", "http://nowhere.test/", "not in the graph"}
	for _, u := range m.urls {
		// A URL that sorts next to a known one: same sort key
		// (the other scheme) or one byte longer.
		other := "https" + u[min(len(u), 4):]
		if len(u) > 5 && u[:5] == "https" {
			other = "http" + u[5:]
		}
		for _, c := range []string{other, u + "x"} {
			if _, ok := m.ids[c]; !ok {
				unknown = append(unknown, c)
			}
		}
		if len(unknown) > 40 {
			break
		}
	}
	for _, u := range unknown {
		_, err := s.ID(u)
		wantErr(t, fmt.Sprintf("ID(%q)", u), err, webgraph.ErrUnknownURL)
	}
}

func testBuffers(t *testing.T, s webgraph.GraphStore, m *model) {
	if len(m.urls) == 0 {
		return
	}
	// A stale buffer: its content must not leak into the answer, and an
	// answer that fits must be built in it.
	stale := make([]int, 5, m.maxDegree()+8)
	for i := range stale {
		stale[i] = -7
	}
	for _, dir := range []struct {
		name  string
		list  func(int, []int) ([]int, error)
		lists [][]int
	}{{"Out", s.Out, m.out}, {"In", s.In, m.in}} {
		for x := range m.urls {
			buf := stale[:5]
			got, err := dir.list(x, buf)
			if err != nil {
				t.Fatalf("%s(%d): %v", dir.name, x, err)
			}
			if !slices.Equal(got, dir.lists[x]) {
				t.Fatalf("%s(%d) with a used buffer = %v, want %v", dir.name, x, got, dir.lists[x])
			}
			if len(got) > 0 && &got[0] != &stale[0] {
				t.Fatalf("%s(%d) did not append to buf[:0] although buf had room", dir.name, x)
			}
		}
		if raceEnabled {
			continue // allocation counts are not stable under the race detector
		}
		x := densest(dir.lists)
		buf := make([]int, 0, m.maxDegree()+8)
		buf, _ = dir.list(x, buf) // warm up lazily built state
		if a := testing.AllocsPerRun(20, func() { buf, _ = dir.list(x, buf) }); a > 0 {
			t.Errorf("%s(%d) with a buffer that has room: %.1f allocations, want 0", dir.name, x, a)
		}
	}
}

// densest returns the node with the longest list.
func densest(lists [][]int) int {
	best := 0
	for x, l := range lists {
		if len(l) > len(lists[best]) {
			best = x
		}
	}
	return best
}

func testURLHelpers(t *testing.T, s webgraph.GraphStore, m *model) {
	names := func(ids []int) []string {
		out := make([]string, len(ids))
		for i, y := range ids {
			out[i] = m.urls[y]
		}
		return out
	}
	step := max(1, len(m.urls)/50)
	for x := 0; x < len(m.urls); x += step {
		u := m.urls[x]
		out, err := webgraph.OutURLs(s, u)
		if err != nil || !slices.Equal(out, names(m.out[x])) {
			t.Fatalf("OutURLs(%q) = %q, %v; want %q", u, out, err, names(m.out[x]))
		}
		in, err := webgraph.InURLs(s, u)
		if err != nil || !slices.Equal(in, names(m.in[x])) {
			t.Fatalf("InURLs(%q) = %q, %v; want %q", u, in, err, names(m.in[x]))
		}
	}
	if _, err := webgraph.OutURLs(s, "http://nowhere.test/"); !errors.Is(err, webgraph.ErrUnknownURL) {
		t.Errorf("OutURLs of an unknown URL: %v, want ErrUnknownURL", err)
	}
}

func testConcurrent(t *testing.T, s webgraph.GraphStore, m *model) {
	n := len(m.urls)
	if n == 0 {
		return
	}
	const workers = 8
	queries := scale(2000, 300)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 11))
			var buf []int
			fail := func(format string, args ...any) { errs <- fmt.Errorf(format, args...) }
			for range queries {
				x := r.IntN(n)
				var err error
				switch r.IntN(4) {
				case 0:
					if buf, err = s.Out(x, buf); err != nil || !slices.Equal(buf, m.out[x]) {
						fail("Out(%d) = %v, %v; want %v", x, buf, err, m.out[x])
						return
					}
				case 1:
					if buf, err = s.In(x, buf); err != nil || !slices.Equal(buf, m.in[x]) {
						fail("In(%d) = %v, %v; want %v", x, buf, err, m.in[x])
						return
					}
				case 2:
					if u, err := s.URL(x); err != nil || u != m.urls[x] {
						fail("URL(%d) = %q, %v; want %q", x, u, err, m.urls[x])
						return
					}
				case 3:
					if id, err := s.ID(m.urls[x]); err != nil || id != x {
						fail("ID(%q) = %d, %v; want %d", m.urls[x], id, err, x)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// scale returns n, or small under the race detector.
func scale(n, small int) int {
	if raceEnabled {
		return small
	}
	return n
}

// Links returns a deterministic link log of about n links (repeats
// included; a few more than n) over hosts hosts, shaped like a crawl's.
// Page URLs are http://www.hNN.example/sN/pNNNN.html (zero-padded, so that
// a host's pages sort in page order); on every fifth host, every third
// page is https instead, which sorts among the http pages. About three
// links in four stay on their host: a page links to its section's index
// (the same list for many pages: references for the BV coder), to a run of
// following pages (intervals), to itself now and then, and to random
// pages; the rest go to the home pages and random pages of other hosts,
// popular hosts more often. About one link in fifty is a repeat.
func Links(seed uint64, hosts, n int) []webgraph.Link {
	if hosts <= 0 || n <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(seed, 0x9a7e))
	pages := max(8, 2*n/(hosts*5)) // about five links per page
	page := func(h, p int) string {
		scheme := "http"
		if h%5 == 0 && p%3 == 0 {
			scheme = "https"
		}
		return fmt.Sprintf("%s://www.h%02d.example/s%d/p%04d.html", scheme, h, p%4, p)
	}
	popular := rand.NewZipf(r, 1.4, 1, uint64(hosts-1))
	links := make([]webgraph.Link, 0, n)
	add := func(src, dst string) {
		links = append(links, webgraph.Link{Src: src, Dst: dst})
		if r.IntN(50) == 0 {
			links = append(links, webgraph.Link{Src: src, Dst: dst})
		}
	}
	for len(links) < n {
		h, p := r.IntN(hosts), r.IntN(pages)
		src := page(h, p)
		switch k := r.IntN(16); {
		case k < 4: // the section index: pages 0..5 of the section
			for i := range 6 {
				add(src, page(h, 4*i+p%4))
			}
		case k < 8: // a run of following pages
			for i := range 2 + r.IntN(8) {
				add(src, page(h, (p+1+i)%pages))
			}
		case k < 9:
			add(src, src)
		case k < 12:
			add(src, page(h, r.IntN(pages)))
		case k < 14: // home pages of other hosts
			for range 2 + r.IntN(4) {
				add(src, fmt.Sprintf("http://www.h%02d.example/", int(popular.Uint64())))
			}
		default:
			for range 2 + r.IntN(4) {
				add(src, page(int(popular.Uint64()), r.IntN(pages)))
			}
		}
	}
	return links
}
