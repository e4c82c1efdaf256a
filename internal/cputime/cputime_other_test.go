//go:build !unix

package cputime_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/internal/cputime"
)

// TestNowIsZero checks the promise benchmarks rely on to skip their CPU
// metrics where CPU time is not measured.
func TestNowIsZero(t *testing.T) {
	if got := cputime.Now(); got != 0 {
		t.Fatalf("Now() = %v, want 0", got)
	}
}
