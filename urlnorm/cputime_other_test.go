//go:build !unix

package urlnorm

import "time"

// cpuTime is not measured on this platform; benchmarks then skip the
// per-CPU-second metric.
func cpuTime() time.Duration { return 0 }
