//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// CPUTime returns the process's user and system CPU time so far (OpenBLAS's
// pool threads included); zero when getrusage fails.
func CPUTime() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// ChildrenCPU returns the user + system CPU time of every finished child of
// this process and of their waited-for descendants (a command run by a
// test, a batch's jobs); zero when getrusage fails.
func ChildrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
