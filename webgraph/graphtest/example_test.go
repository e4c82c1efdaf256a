package graphtest_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/webgraph"
	"github.com/crawlkit/crawlkit/webgraph/graphtest"
)

// ExampleLinks builds a store from a generated link log: repeated links
// count once, and the pages of a host get neighbouring ids.
func ExampleLinks() {
	links := graphtest.Links(1, 3, 40)
	s := webgraph.NewMemStore(links)
	fmt.Println(len(links), "links,", s.NumNodes(), "pages,", s.NumArcs(), "arcs")
	for id := range 3 {
		u, _ := s.URL(id)
		out, _ := s.Out(id, nil)
		fmt.Println(id, u, "->", out)
	}
	// Output:
	// 44 links, 30 pages, 33 arcs
	// 0 http://www.h00.example/s0/p0004.html -> [0]
	// 1 http://www.h00.example/s1/p0001.html -> [3 5 12 13]
	// 2 http://www.h00.example/s1/p0005.html -> []
}
