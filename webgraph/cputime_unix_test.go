//go:build unix

package webgraph

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the user+system CPU time of the process. Benchmarks report
// CPU ns/arc next to wall-clock ns/arc because the machine may be shared:
// wall time then overstates the cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var _ = testing.Short
