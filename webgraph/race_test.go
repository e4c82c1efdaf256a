//go:build race

package webgraph

// raceEnabled shrinks the heaviest tests under the race detector (CI runs
// go test -race on 2 cores): full-graph checks on the shared data run only
// without -race; with it they run on a prefix of the graph.
const raceEnabled = true
