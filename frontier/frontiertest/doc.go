// Package frontiertest is the conformance suite every frontier.Frontier
// implementation runs, and the fake clock it drives them with.
//
// # Suite
//
// Run checks, as subtests: no URL lost or handed out twice; at most one
// lease per politeness key, under 64 concurrent workers; politeness gaps
// (K × fetch time, MinDelay, Crawl-delay, Retry-After, MaxDelay) measured
// in fake time; priority bias; Next unblocking on context cancel, on Add
// and on Close; scheduled revisits with their fetch history;
// Done's errors; and checkpoint/restore (queued URLs stay queued, leased
// ones come back, none lost or doubled).
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
// # Fake clock
//
// FakeClock implements frontier.Clock; it moves only on Advance or Set,
// which fire the timers that became due, so gap tests take no real time.
package frontiertest
