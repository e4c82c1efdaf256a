package render

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that a closed Fetcher leaves no goroutine behind: the
// tabs' workers and closers, chromedp's readers and the browser's waiter
// all end with Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
