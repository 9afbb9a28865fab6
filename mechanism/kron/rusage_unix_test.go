//go:build unix

package kron

import "syscall"

// cpuSeconds returns the process's user+system CPU time, for benchmarks
// on a shared machine (wall time there measures the other jobs too).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
