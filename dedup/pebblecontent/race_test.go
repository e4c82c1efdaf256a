//go:build race

package pebblecontent_test

// raceEnabled shrinks the workloads under the race detector, which slows
// Pebble (its invariant checks turn on with -race) and the hot loops by
// one to two orders of magnitude.
const raceEnabled = true
