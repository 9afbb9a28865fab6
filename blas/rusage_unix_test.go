//go:build unix

package blas_test

import (
	"syscall"
	"time"
)

// processCPU returns the process's user + system CPU time so far (OpenBLAS's
// pool threads included): on a shared machine a kernel's CPU time is a
// steadier measure than its wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
