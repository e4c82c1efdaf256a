//go:build !unix

package dns

import "time"

// cpuTime is not measured on this platform; benchmarks skip the metric.
func cpuTime() time.Duration { return 0 }
