package frontiertest_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// TestFakeClockConformance runs the Clock suite on the fake clock.
func TestFakeClockConformance(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	frontiertest.RunClock(t, clk, clk.Advance)
}

// TestFaultyStoreConformance runs the Store suite on FaultyStore over
// the default store, set to inject no fault: it must pass everything
// through.
func TestFaultyStoreConformance(t *testing.T) {
	frontiertest.RunStore(t, frontiertest.StoreHarness{
		New: func(*testing.T) frontier.Store {
			s := frontiertest.NewFaultyStore(frontier.NewMemStore())
			s.FailAfter(-1, nil)
			return s
		},
	})
}
