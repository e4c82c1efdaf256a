package crawlkit_test

import (
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/statetest"
)

func TestMemStateConformance(t *testing.T) {
	statetest.Run(t, statetest.Harness{
		New: func(t *testing.T) crawlkit.State { return crawlkit.NewMemState() },
	})
}
