package frontier_test

import (
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// TestSystemClockConformance runs the Clock suite on the real clock,
// which advances by sleeping.
func TestSystemClockConformance(t *testing.T) {
	frontiertest.RunClock(t, frontier.SystemClock{}, time.Sleep)
}
