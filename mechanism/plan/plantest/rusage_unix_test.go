//go:build unix

package plantest

import (
	"syscall"
	"time"
)

// cpuNow is the process's user+system CPU time: on a machine shared with
// other jobs it measures the work a plan did, where wall time measures the
// queue it waited in.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
