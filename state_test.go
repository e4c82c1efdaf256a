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

// TestMemStateResumeConformance: a MemState outlives a Run, not its
// process; what a new Crawler on the same MemState finds is what the
// restart checks read, so its "reopen" is the same value.
func TestMemStateResumeConformance(t *testing.T) {
	statetest.Run(t, statetest.Harness{
		New:    func(t *testing.T) crawlkit.State { return crawlkit.NewMemState() },
		Reopen: func(t *testing.T, s crawlkit.State) crawlkit.State { return s },
	})
}

// TestMemStateBodySeenConformance runs the BodySeen suite on the body
// set of a MemState.
func TestMemStateBodySeenConformance(t *testing.T) {
	statetest.RunBodySeen(t, func(t *testing.T) crawlkit.BodySeen {
		s := crawlkit.NewMemState()
		t.Cleanup(func() { s.Close() })
		b, err := s.BodySeen()
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}
