package webgraph_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/crawlkit/crawlkit/webgraph"
)

// Example compresses the four rows of the book's Figure 20.6 (plus empty
// rows up to node 144), reads them back and queries the in-memory store.
func Example() {
	rows := make([][]int, 145)
	rows[0] = []int{1, 2, 4, 8, 16, 32, 64}
	rows[1] = []int{1, 4, 9, 16, 25, 36, 49, 64}
	rows[2] = []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144}
	rows[3] = []int{1, 4, 8, 16, 25, 36, 49, 64}

	var graph, offsets bytes.Buffer
	enc, _ := webgraph.NewEncoder(&graph, &offsets, nil) // Java WebGraph defaults
	for _, r := range rows {
		enc.Add(r)
	}
	props, _ := enc.Close()
	g, err := webgraph.Load(props, graph.Bytes(), offsets.Bytes())
	if err != nil {
		panic(err)
	}
	succ, _ := g.Successors(3, nil)
	fmt.Println(g.NumArcs(), "arcs in", g.StreamBits(), "bits; row 4:", succ)

	s := webgraph.NewMemStore([]webgraph.Link{
		{Src: "http://www.stanford.edu/alchemy", Dst: "http://www.stanford.edu/biology"},
		{Src: "http://www.mit.edu/", Dst: "http://www.stanford.edu/biology"},
	})
	in, _ := webgraph.InURLs(s, "http://www.stanford.edu/biology")
	fmt.Println(in)
	// Output:
	// 34 arcs in 334 bits; row 4: [1 4 8 16 25 36 49 64]
	// [http://www.mit.edu/ http://www.stanford.edu/alchemy]
}

// ExampleOutURLs asks a connectivity store the two questions of the
// book's §20.4, by URL: which pages a page links to, and which link to it.
func ExampleOutURLs() {
	s := webgraph.NewMemStore([]webgraph.Link{
		{Src: "http://a.test/", Dst: "http://a.test/about"},
		{Src: "http://a.test/", Dst: "http://b.test/"},
		{Src: "http://b.test/", Dst: "http://a.test/about"},
	})
	out, _ := webgraph.OutURLs(s, "http://a.test/")
	in, _ := webgraph.InURLs(s, "http://a.test/about")
	fmt.Println("a.test/ links to", out)
	fmt.Println("a.test/about is linked from", in)
	if _, err := webgraph.OutURLs(s, "http://c.test/"); errors.Is(err, webgraph.ErrUnknownURL) {
		fmt.Println("c.test/ is not in the graph")
	}
	// Output:
	// a.test/ links to [http://a.test/about http://b.test/]
	// a.test/about is linked from [http://a.test/ http://b.test/]
	// c.test/ is not in the graph
}

// ExampleBVGraph_SplitNodeIterators counts the arcs of a graph with two
// goroutines, each scanning its part of the bit stream.
func ExampleBVGraph_SplitNodeIterators() {
	var graph, offsets bytes.Buffer
	enc, _ := webgraph.NewEncoder(&graph, &offsets, nil)
	for x := 0; x < 1000; x++ {
		var succ []int // x+1, …, up to three arcs
		for y := x + 1; y <= x+1+x%3 && y < 1000; y++ {
			succ = append(succ, y)
		}
		if err := enc.Add(succ); err != nil {
			panic(err)
		}
	}
	props, err := enc.Close()
	if err != nil {
		panic(err)
	}
	g, err := webgraph.Load(props, graph.Bytes(), offsets.Bytes())
	if err != nil {
		panic(err)
	}
	its, err := g.SplitNodeIterators(2)
	if err != nil {
		panic(err)
	}
	var arcs atomic.Int64
	var wg sync.WaitGroup
	for _, it := range its {
		wg.Go(func() {
			for _, succ := range it.All() {
				arcs.Add(int64(len(succ)))
			}
		})
	}
	wg.Wait()
	for _, it := range its {
		if err := it.Err(); err != nil {
			panic(err)
		}
	}
	fmt.Println(len(its), "iterators,", arcs.Load(), "arcs of", g.NumArcs())
	// Output:
	// 2 iterators, 1996 arcs of 1996
}
