//go:build race

package fetchertest

// raceEnabled shrinks the concurrent workload under the race detector,
// which slows every fetch over HTTP tenfold.
const raceEnabled = true
