//go:build unix

package robots

import "syscall"

// cpuNanos returns the CPU time this process has used. Benchmarks report it
// next to wall time because the machines they run on are often shared: with
// GOMAXPROCS=1 and no allocation, CPU time per operation is the cost of the
// code, not of the queue for a core.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
