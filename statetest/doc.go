// Package statetest is the conformance suite of crawlkit.State: every
// implementation (crawlkit.MemState, crawldb.DB, and yours) runs it from
// its tests, as database/sql drivers run their driver tests.
//
//	func TestConformance(t *testing.T) {
//		statetest.Run(t, statetest.Harness{
//			New: func(t *testing.T) crawlkit.State { return crawlkit.NewMemState() },
//		})
//	}
package statetest
