// Package graphtest is the conformance suite every webgraph.GraphStore
// implementation runs, in the style of database/sql's driver tests, and
// the link logs it builds its graphs from.
//
// # Suite
//
// Run builds stores over several link logs (empty, link-less URLs only,
// self-loops and repeated links, a small site, a few thousand links over
// a dozen hosts) and checks every query against its
// own model of the graph, computed from the links without webgraph's code
// (only webgraph.CompareURLs, which defines the id order):
//
//   - ids are positions in CompareURLs order; ID and URL are inverse;
//   - NumNodes counts distinct URLs, NumArcs distinct links;
//   - Out lists the successors of a node in increasing order, In its
//     predecessors (the transpose), OutDegree and InDegree their lengths;
//   - Out and In append to buf[:0] and return it, allocating nothing when
//     buf has room;
//   - out-of-range ids fail with webgraph.ErrNodeRange, unknown URLs with
//     webgraph.ErrUnknownURL, both inside a *webgraph.Error;
//   - webgraph.OutURLs and InURLs agree with the model;
//   - concurrent queries give the same answers.
//
// An implementation's test calls Run with a Harness that builds its store:
//
//	func TestConformance(t *testing.T) {
//		graphtest.Run(t, graphtest.Harness{
//			New: func(t *testing.T, links []webgraph.Link, urls []string) webgraph.GraphStore {
//				return webgraph.NewMemStore(links, urls...)
//			},
//		})
//	}
//
// # Link logs
//
// Links returns a deterministic link log shaped like a crawl's: most links
// stay on their host, pages link to runs of consecutive pages (intervals
// for the BV coder) and to the lists of their neighbours (references),
// some hosts are served over both http and https, and there are
// self-loops and repeated links.
package graphtest
