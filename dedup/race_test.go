//go:build race

package dedup_test

// raceEnabled shrinks the simulated web under the race detector, which
// slows fetching and parsing by an order of magnitude.
const raceEnabled = true
