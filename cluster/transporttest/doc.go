// Package transporttest is the conformance suite every cluster.Transport
// implementation runs (cluster.Mem, cluster.NATS, cluster.Meter over
// either, and yours), in the style of database/sql's driver tests.
//
// It lives in a package of its own so that implementations outside
// package cluster can run it; package cluster runs it from its external
// tests.
//
// # Suite
//
// Run asks the Harness for a fresh transport per subtest and checks, as
// subtests:
//
//   - Delivery: an inbox is delivered to its consumer, every message
//     once, a message whose handler failed again later, the one a closed
//     consumer was handling to the next consumer (a restarted node, on a
//     peer connection if the harness gives one), and Backlog counts the
//     published and pending messages per node;
//   - Order: a consumer without failures gets its inbox oldest first;
//   - ConsumeClose: no handler runs after Close of its consumer returns,
//     and what is published meanwhile waits in the inbox;
//   - PublishCopies: the stored message does not share the caller's
//     buffer;
//   - Request: a subject nobody serves is ErrNoResponder, a reply comes
//     back as sent, a handler's error comes back as a *cluster.Error
//     wrapping cluster.ErrRemote with the handler's message, and the
//     handler's request does not share the caller's buffer;
//   - ServeConcurrent: concurrent requests each get their own reply;
//   - ServeClose: Close of a server waits for its running handlers, and
//     the subject has no responder afterwards;
//   - Canceled: Publish and Request with a canceled context fail with an
//     error wrapping context.Canceled;
//   - CancelDuringRequest: a Request whose context ends while its
//     handler runs returns within a second with an error wrapping the
//     context's error, whether the handler honours its context or not.
//
// A test of an implementation reads:
//
//	func TestMemConformance(t *testing.T) {
//		transporttest.Run(t, transporttest.Harness{
//			New: func(t *testing.T) cluster.Transport {
//				m := cluster.NewMem()
//				m.RedeliverDelay = 10 * time.Millisecond
//				t.Cleanup(func() { m.Close() })
//				return m
//			},
//		})
//	}
//
// Known deviations of an implementation are named in Harness.Skip, so
// that they show in the test output instead of hiding in a weaker suite.
package transporttest
