package frontier_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// TestMemStoreConformance runs the Store suite on the default store. It
// is not durable: the Sync and reopen checks skip.
func TestMemStoreConformance(t *testing.T) {
	frontiertest.RunStore(t, frontiertest.StoreHarness{
		New: func(*testing.T) frontier.Store { return frontier.NewMemStore() },
	})
}
