//go:build unix

package cputime_test

import (
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/internal/cputime"
)

// TestNowAdvances spins until the process has used measurably more CPU
// time than at the start, and checks that Now never goes back.
func TestNowAdvances(t *testing.T) {
	start := cputime.Now()
	if start <= 0 {
		t.Fatalf("Now() = %v at the start of a test", start)
	}
	deadline := time.Now().Add(10 * time.Second)
	prev, x := start, uint64(1)
	for time.Now().Before(deadline) {
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		now := cputime.Now()
		if now < prev {
			t.Fatalf("Now went back: %v after %v", now, prev)
		}
		if prev = now; now-start >= 20*time.Millisecond {
			return
		}
	}
	t.Fatalf("Now advanced %v in 10 s of spinning (x=%d)", prev-start, x)
}
