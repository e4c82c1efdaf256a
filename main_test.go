package crawlkit

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: Run
// must stop its workers, housekeeping and the modules it created.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
