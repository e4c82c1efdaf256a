package dedup_test

import (
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/statetest"
)

// TestExactContentBodySeen runs the crawlkit.BodySeen suite on
// ExactContent, the crawler's body set when the State keeps none.
func TestExactContentBodySeen(t *testing.T) {
	statetest.RunBodySeen(t, func(t *testing.T) crawlkit.BodySeen { return new(dedup.ExactContent) })
}
