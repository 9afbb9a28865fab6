//go:build unix

package bench

import (
	"math"
	"syscall"
)

// processCPUSeconds returns the user+system CPU time of this process so far
// (all threads, the garbage collector's included), NaN when unavailable. On
// a machine shared with other jobs it measures the work a computation needs
// where wall time also measures the wait for a core.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}

// childrenCPUSeconds returns the user+system CPU time of this process's
// children that have ended and been waited for (the Python peers), NaN
// when unavailable.
func childrenCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}
