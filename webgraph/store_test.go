package webgraph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// randomLinks makes a link log over a few hosts with site-local structure.
func randomLinks(seed uint64, hosts, pages, links int) ([]Link, []string) {
	rng := rand.New(rand.NewPCG(seed, 7))
	url := func() string {
		h := rng.IntN(hosts)
		scheme := "http"
		if h%5 == 0 {
			scheme = "https"
		}
		return fmt.Sprintf("%s://www.h%03d.example.org/p/%d.html", scheme, h, rng.IntN(pages))
	}
	var out []Link
	for i := 0; i < links; i++ {
		src := url()
		dst := url()
		if rng.IntN(3) > 0 { // mostly same-host links
			dst = src[:len(src)-len(filepath.Base(src))] + fmt.Sprintf("%d.html", rng.IntN(pages))
		}
		out = append(out, Link{src, dst})
	}
	return out, []string{"http://isolated.example.com/", "not a url"}
}

// checkStores compares every query of got against the reference store.
func checkStores(t *testing.T, want, got GraphStore) {
	t.Helper()
	if got.NumNodes() != want.NumNodes() || got.NumArcs() != want.NumArcs() {
		t.Fatalf("counts %d/%d, want %d/%d", got.NumNodes(), got.NumArcs(), want.NumNodes(), want.NumArcs())
	}
	var a, b []int
	for id := 0; id < want.NumNodes(); id++ {
		u, err := want.URL(id)
		if err != nil {
			t.Fatal(err)
		}
		if gu, err := got.URL(id); err != nil || gu != u {
			t.Fatalf("URL(%d) = %q, %v; want %q", id, gu, err, u)
		}
		if gid, err := got.ID(u); err != nil || gid != id {
			t.Fatalf("ID(%q) = %d, %v; want %d", u, gid, err, id)
		}
		for _, dir := range []struct {
			name   string
			w, g   func(int, []int) ([]int, error)
			wd, gd func(int) (int, error)
		}{{"out", want.Out, got.Out, want.OutDegree, got.OutDegree}, {"in", want.In, got.In, want.InDegree, got.InDegree}} {
			a, _ = dir.w(id, a)
			if b, err = dir.g(id, b); err != nil || !slices.Equal(a, b) {
				t.Fatalf("%s(%d) = %v, %v; want %v", dir.name, id, b, err, a)
			}
			if d, err := dir.gd(id); err != nil || d != len(a) {
				t.Fatalf("%s degree(%d) = %d, %v; want %d", dir.name, id, d, err, len(a))
			}
		}
	}
	if _, err := got.ID("http://nowhere.example/"); !errors.Is(err, ErrUnknownURL) {
		t.Fatalf("unknown URL: %v", err)
	}
	if _, err := got.Out(want.NumNodes(), nil); !errors.Is(err, ErrNodeRange) {
		t.Fatalf("out of range: %v", err)
	}
	if _, err := got.URL(-1); !errors.Is(err, ErrNodeRange) {
		t.Fatalf("URL out of range: %v", err)
	}
}

func TestBuilderMatchesMemStore(t *testing.T) {
	links, extra := randomLinks(1, 30, 60, sizeFor(4000, 1000))
	mem := NewMemStore(links, extra...)
	for _, tt := range []struct {
		name string
		o    *BuilderOptions
	}{
		{"defaults", nil},
		{"tiny batches", &BuilderOptions{BatchURLs: 7, BatchArcs: 13}},
		{"no references", &BuilderOptions{BatchURLs: 100, Graph: &Options{WindowSize: -1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o := BuilderOptions{}
			if tt.o != nil {
				o = *tt.o
			}
			o.TempDir = dir
			b, err := NewBuilder(&o)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for _, l := range links {
				if err := b.AddLink(l.Src, l.Dst); err != nil {
					t.Fatal(err)
				}
			}
			for _, u := range extra {
				if err := b.AddURL(u); err != nil {
					t.Fatal(err)
				}
			}
			base := filepath.Join(dir, "web")
			if err := b.Finish(base); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := OpenStore(base)
			if err != nil {
				t.Fatal(err)
			}
			checkStores(t, mem, s)
			matches, _ := filepath.Glob(filepath.Join(dir, "webgraph-*"))
			if len(matches) != 0 {
				t.Fatalf("temporary files left: %v", matches)
			}
		})
	}
}

func TestURLOrderIsHostReversed(t *testing.T) {
	m, err := NewURLMap([]string{
		"http://www.stanford.edu/biology",
		"http://www.stanford.edu/alchemy",
		"http://cs.stanford.edu/",
		"http://www.mit.edu/",
		"https://www.stanford.edu/alchemy",
		"http://www.stanford.edu/alchemy",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"http://www.mit.edu/",
		"http://cs.stanford.edu/",
		"http://www.stanford.edu/alchemy",
		"https://www.stanford.edu/alchemy",
		"http://www.stanford.edu/biology",
	}
	if m.Len() != len(want) {
		t.Fatalf("len %d, want %d", m.Len(), len(want))
	}
	for i, w := range want {
		if u, _ := m.URL(i); u != w {
			t.Errorf("URL(%d) = %q, want %q", i, u, w)
		}
		if id, err := m.ID(w); id != i || err != nil {
			t.Errorf("ID(%q) = %d, %v", w, id, err)
		}
	}
}

func TestFrontCodedCorrupt(t *testing.T) {
	m, _ := NewURLMap([]string{"http://a.example/1", "http://a.example/2", "http://b.example/"})
	var buf []byte
	{
		var w sliceWriter
		m.WriteTo(&w)
		buf = w
	}
	if _, err := ReadURLMap(buf); err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		for _, cut := range []bool{true, false} {
			p := slices.Clone(buf)
			if cut {
				p = p[:i]
			} else {
				p[i] ^= 0xff
			}
			m2, err := ReadURLMap(p)
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("unexpected error %v", err)
				}
				continue
			}
			for id := 0; id < m2.Len(); id++ {
				if u, err := m2.URL(id); err == nil {
					m2.ID(u)
				}
			}
		}
	}
}

// TestURLMapOutOfOrder: a map file whose URLs are out of order, or
// repeated, in a bucket (the heads in order) is refused at load: ID, which
// searches by order, would call some of its URLs unknown.
func TestURLMapOutOfOrder(t *testing.T) {
	tests := []struct {
		name string
		urls []string
		ok   bool
	}{
		{"in order", []string{"http://a.example/1", "http://a.example/2", "http://b.example/"}, true},
		{"out of order in a bucket", []string{"http://a.example/1", "http://c.example/", "http://b.example/"}, false},
		{"below the bucket's head", []string{"http://b.example/", "http://a.example/"}, false},
		{"repeated", []string{"http://a.example/1", "http://a.example/1"}, false},
		{"same key, URLs out of order", []string{"https://a.example/1", "http://a.example/1"}, false},
	}
	for _, tt := range tests {
		var w sliceWriter
		fw := NewFrontCodedWriter(&w, 16)
		for _, u := range tt.urls {
			fw.Add(u)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		m, err := ReadURLMap(w)
		if tt.ok != (err == nil) || err != nil && !errors.Is(err, ErrFormat) {
			t.Errorf("%s: ReadURLMap: %v", tt.name, err)
			continue
		}
		for id := 0; tt.ok && id < m.Len(); id++ {
			if u, _ := m.URL(id); u != tt.urls[id] {
				t.Errorf("%s: URL(%d) = %q", tt.name, id, u)
			}
			if got, err := m.ID(tt.urls[id]); got != id || err != nil {
				t.Errorf("%s: ID(%q) = %d, %v", tt.name, tt.urls[id], got, err)
			}
		}
	}
}

type sliceWriter []byte

func (w *sliceWriter) Write(p []byte) (int, error) { *w = append(*w, p...); return len(p), nil }

// FuzzFrontCoded decodes arbitrary front-coded lists.
func FuzzFrontCoded(f *testing.F) {
	m, _ := NewURLMap([]string{"http://a.example/1", "http://a.example/2", "http://b.example/", "https://c.example/x?y"})
	var w sliceWriter
	m.WriteTo(&w)
	f.Add([]byte(w))
	f.Add([]byte(fcMagic + "\x00\x00\x00\x00\x00\x00\x00\x06" + "\x00\x00\x00\x00\x00\x00\x00\x00" + "\x00\x00\x00\x00\x00\x00\x00\x10"))
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := ReadURLMap(p)
		if err != nil {
			return
		}
		// However corrupt the file, a map that loads answers consistently:
		// the URL of an id leads back to a node with that URL, or to
		// ErrFormat, never to "unknown".
		for id := 0; id < m.Len() && id < 1000; id++ {
			u, err := m.URL(id)
			if err != nil {
				continue
			}
			got, err := m.ID(u)
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("ID of URL(%d) = %q: %v", id, u, err)
				}
				continue
			}
			if u2, err := m.URL(got); err != nil || u2 != u {
				t.Fatalf("URL(%d) = %q, ID of it %d, whose URL is %q (%v)", id, u, got, u2, err)
			}
		}
	})
}

// compareAdjacentPairs are neighbours a URL map may hold, and some it may
// not: compareAdjacent must order each pair as CompareURLs does.
var compareAdjacentPairs = [][2]string{
	{"http://a.example/x", "http://a.example/y"},
	{"http://a.example/x", "https://a.example/x"},
	{"http://a.example/x?b=1", "http://a.example/x?a=2"},
	{"http://a.example/x", "http://a.example/x?"},
	{"http://a.example/x#f", "http://a.example/x"},
	{"http://a.example/%41", "http://a.example/A"},
	{"http://a.example/%41", "http://a.example/%61"},
	{"http://a.example/%4", "http://a.example/%40"},
	{"http://a.example/a b", "http://a.example/a%20b"},
	{"http://a.example/é", "http://a.example/%C3%A9"},
	{"http://a.example:80/x", "http://a.example/x"},
	{"http://A.Example/x", "http://a.example/y"},
	{"http://u@a.example/x", "http://u@a.example/w"},
	{"http://a.example?q/x", "http://a.example?q/y"},
	{"http://a.example/x", "http://a.example"},
	{"http://[::1]/x", "http://[::1]/y"},
	{"http://a.example./x", "http://a.example/x"},
	{"not a url/x", "not a url/y"},
	{"http:///x", "http:///y"},
	{"http://a.example/[x]", "http://a.example/x"},
	{"http://a.example/x\x00", "http://a.example/x"},
	{"mailto://a.example/x", "mailto://a.example/y"},
}

func TestCompareAdjacent(t *testing.T) {
	check := func(a, b string) {
		t.Helper()
		want := CompareURLs(a, b)
		got := compareAdjacent([]byte(a), []byte(b), plainPrefix([]byte(a)), plainPrefix([]byte(b)))
		if sign(got) != sign(want) {
			t.Errorf("compareAdjacent(%q, %q) = %d, CompareURLs says %d", a, b, got, want)
		}
	}
	for _, p := range compareAdjacentPairs {
		check(p[0], p[1])
		check(p[1], p[0])
	}
	// Random neighbours on a few sites, with the characters that escape.
	rng := rand.New(rand.NewPCG(7, 8))
	parts := []string{"/", "a", "B", "%41", "%4", "%zz", "?", "#", "=", "&", " ", "é", ".", "..", ":", "@", "[", "~", "%2F", "%2f"}
	sites := []string{"http://a.example", "https://a.example", "http://a.example:8080", "http://A.example", "http://u:p@a.example"}
	for range 20000 {
		var u [2]string
		site := sites[rng.IntN(len(sites))]
		for j := range u {
			s := site
			if rng.IntN(4) == 0 {
				s = sites[rng.IntN(len(sites))]
			}
			s += "/"
			for range rng.IntN(6) {
				s += parts[rng.IntN(len(parts))]
			}
			u[j] = s
		}
		check(u[0], u[1])
	}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// FuzzCompareAdjacent: on any two strings, compareAdjacent orders as
// CompareURLs does.
func FuzzCompareAdjacent(f *testing.F) {
	for _, p := range compareAdjacentPairs {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		want := CompareURLs(a, b)
		if got := compareAdjacent([]byte(a), []byte(b), plainPrefix([]byte(a)), plainPrefix([]byte(b))); sign(got) != sign(want) {
			t.Fatalf("compareAdjacent(%q, %q) = %d, CompareURLs says %d", a, b, got, want)
		}
	})
}
