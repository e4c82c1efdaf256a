// Package frontiertest holds the conformance suites of package frontier's
// interfaces, which every implementation runs, and the fake clock and the
// fault-injecting store they are driven with.
//
// # Frontier suite
//
// Run checks, as subtests: no URL lost or handed out twice; at most one
// lease per politeness key, under 64 concurrent workers; politeness gaps
// (K × fetch time, MinDelay, Crawl-delay, Retry-After, MaxDelay) measured
// in fake time; priority bias; Next unblocking on context cancel, on Add
// and on Close; scheduled revisits with their fetch history; Requeue;
// Done's errors; and checkpoint/restore (queued URLs stay queued, leased
// ones come back, none lost or doubled). The optional capabilities are
// checked when implemented: Holder (held keys wait, also when held during
// a lease), Poller (leases without blocking, the ready time otherwise),
// Stater (Queued, Leased, Waiting and the counters through Add, Next,
// Done, Requeue and revisits) and Syncer (with Harness.Crash, a crash
// after Sync loses nothing unfinished).
//
//	func TestConformance(t *testing.T) {
//		frontiertest.Run(t, frontiertest.Harness{
//			New: func(t *testing.T, o frontier.Options) frontier.Frontier {
//				m, err := frontier.NewMercator(&o)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return m
//			},
//			Prioritized: true,
//		})
//	}
//
// # Other suites
//
//   - RunStore: frontier.Store (FIFO queues, deferred URLs, Scan) and,
//     for a frontier.DurableStore, Sync and reopen after a crash or Close;
//   - RunFilter: frontier.URLFilter, against the caller's table of Cases,
//     on odd URLs and concurrently;
//   - RunPrioritizer: frontier.Prioritizer (and FetchObserver): the range
//     [0, levels), determinism, concurrent use;
//   - RunClock: frontier.Clock and its timers.
//
// Each suite's own tests break an implementation on purpose, one rule at
// a time, and check that the suite fails it.
//
// # Fake clock and faulty store
//
// FakeClock implements frontier.Clock; it moves only on Advance or Set,
// which fire the timers that became due, so gap tests take no real time.
// FaultyStore wraps a frontier.Store and fails its operations on demand.
package frontiertest
