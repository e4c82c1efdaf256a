// Package splittertest is the conformance suite of crawlkit.HostSplitter
// and of crawlkit.IdleReporter, which a splitter implements to let a
// distributed crawl end: every implementation (cluster.Splitter, and
// yours) runs it from its tests, as database/sql drivers run their driver
// tests.
//
// It lives beside statetest, under the root package that defines the
// interfaces, rather than in package cluster: the contract is the
// crawler's, and an implementation over another transport (a message
// queue, an RPC system) should not have to import cluster to check
// itself against it.
//
// # Suite
//
// Run asks the Harness for the splitters of a cluster of three nodes and
// for a way to see the URLs that reach each node, and checks, as
// subtests:
//
//   - LocalStable: Local is a function of the host alone: the same
//     answer on every call, from concurrent goroutines, and from the
//     splitters of another cluster built for the same node list (a
//     restarted node);
//   - Partition: every host is Local to exactly one node;
//   - Send: every URL sent reaches the node whose splitter says the host
//     is Local, once, with its Depth;
//   - SendConcurrent: the same with Send called from many goroutines of
//     every node at once;
//   - Idle (splitters that implement crawlkit.IdleReporter): every node
//     becomes Idle when nothing was sent; none is Idle while sent URLs
//     are on their way or held by their receiver; every node becomes
//     Idle again once all were received.
//
// A test of an implementation reads:
//
//	func TestSplitterConformance(t *testing.T) {
//		splittertest.Run(t, splittertest.Harness{
//			New: func(t *testing.T, nodes []string, deliver func(int, frontier.URL)) []crawlkit.HostSplitter {
//				... start one node per name, each handing what it receives to deliver
//			},
//			IdleLag: 100 * time.Millisecond,
//		})
//	}
package splittertest
