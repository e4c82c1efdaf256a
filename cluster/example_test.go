package cluster_test

import (
	"context"
	"fmt"

	"github.com/crawlkit/crawlkit/cluster"
	"github.com/crawlkit/crawlkit/dedup"
)

// Two nodes on an in-process transport: every host has exactly one
// owner, and content fetched on one node is a duplicate on the other.
func Example() {
	ctx := context.Background()
	t := cluster.NewMem()
	defer t.Close()
	names := []string{"a", "b"}
	var nodes []*cluster.Node
	for _, name := range names {
		n, err := cluster.NewNode(ctx, &cluster.Options{Name: name, Nodes: names, Transport: t})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer n.Close()
		nodes = append(nodes, n)
	}

	owners := 0
	for _, host := range []string{"h000.sim.test", "h001.sim.test", "h002.sim.test", "example.com"} {
		for _, n := range nodes {
			if n.Splitter().Local(host) {
				owners++
			}
		}
	}
	fmt.Println("owners of 4 hosts:", owners)

	m1, _ := nodes[0].ContentSeen().Seen(ctx, dedup.Doc{URL: "http://x.test/", Text: []byte("Hello, World!")})
	m2, _ := nodes[1].ContentSeen().Seen(ctx, dedup.Doc{URL: "http://y.test/copy", Text: []byte("hello world")})
	fmt.Println(m1.Seen, m2.Seen, m2.URL)
	// Output:
	// owners of 4 hosts: 4
	// false true http://x.test/
}
