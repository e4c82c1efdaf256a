// Package cputime reads the CPU time the process has used, for benchmarks
// and tests that report a cost beside wall time.
//
// On a machine shared with other work, wall time mostly measures the queue
// for a core; the CPU time the process spent is the cost of the code. A
// benchmark reads it around its loop and reports the difference:
//
//	cpu0 := cputime.Now()
//	for range b.N {
//		work()
//	}
//	if cpu := cputime.Now() - cpu0; cpu > 0 {
//		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
//	}
//
// Where the platform does not report it (outside unix), Now returns 0, and
// a benchmark that checks for a positive difference skips its metric.
package cputime
