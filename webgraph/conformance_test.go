package webgraph_test

import (
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit/webgraph"
	"github.com/crawlkit/crawlkit/webgraph/graphtest"
)

// build writes links and urls with a Builder into a temporary directory.
func build(t *testing.T, o webgraph.BuilderOptions, links []webgraph.Link, urls []string) string {
	t.Helper()
	dir := t.TempDir()
	o.TempDir = dir
	b, err := webgraph.NewBuilder(&o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, l := range links {
		if err := b.AddLink(l.Src, l.Dst); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range urls {
		if err := b.AddURL(u); err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Join(dir, "store")
	if err := b.Finish(base); err != nil {
		t.Fatal(err)
	}
	return base
}

// Every GraphStore of the package passes the graphtest suite: the plain
// in-memory store, and the compressed one written by a Builder (with its
// default batches, and with batches so small that URLs and arcs spill to
// sorted runs on disk, and with a reference window of one list and
// unlimited reference chains) and opened from its files.
func TestConformance(t *testing.T) {
	openStore := func(o webgraph.BuilderOptions) func(*testing.T, []webgraph.Link, []string) webgraph.GraphStore {
		return func(t *testing.T, links []webgraph.Link, urls []string) webgraph.GraphStore {
			s, err := webgraph.OpenStore(build(t, o, links, urls))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	tests := []struct {
		name string
		new  func(*testing.T, []webgraph.Link, []string) webgraph.GraphStore
	}{
		{"MemStore", func(_ *testing.T, links []webgraph.Link, urls []string) webgraph.GraphStore {
			return webgraph.NewMemStore(links, urls...)
		}},
		{"Store", openStore(webgraph.BuilderOptions{})},
		{"Store/spilled", openStore(webgraph.BuilderOptions{BatchURLs: 7, BatchArcs: 50})},
		{"Store/window1-unlimited", openStore(webgraph.BuilderOptions{Graph: &webgraph.Options{WindowSize: 1, MaxRefCount: -1}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			graphtest.Run(t, graphtest.Harness{New: tt.new})
		})
	}
}
