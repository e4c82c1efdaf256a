//go:build race

package graphtest

// raceEnabled shrinks the graphs under the race detector and skips the
// allocation counts, which it perturbs.
const raceEnabled = true
