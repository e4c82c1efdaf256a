//go:build unix

package fetchtest_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used, the
// figure benchmarks report because wall time on a shared machine mostly
// measures the other load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
