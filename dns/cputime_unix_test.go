//go:build unix

package dns

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used, so
// that benchmarks can report a cost that other load on the machine does not
// inflate the way it inflates wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
