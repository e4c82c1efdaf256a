//go:build !unix

package robots

// cpuNanos is not available here; benchmarks then report 0 CPU time.
func cpuNanos() int64 { return 0 }
