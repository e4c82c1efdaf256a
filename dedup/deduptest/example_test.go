package deduptest_test

import (
	"fmt"
	"strings"

	"github.com/crawlkit/crawlkit/dedup/deduptest"
)

// Text gives tests deterministic page-like texts: the same seed, the same
// words.
func ExampleText() {
	a, b := deduptest.Text(1, 300), deduptest.Text(1, 300)
	fmt.Println(len(strings.Fields(a)), a == b, a == deduptest.Text(2, 300))
	// Output:
	// 300 true false
}
