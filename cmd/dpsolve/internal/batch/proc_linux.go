//go:build linux

package batch

import "syscall"

// childAttr makes the kernel kill a job when the batch process that launched
// it dies (even by SIGKILL), so no job runs on unsupervised: its status would
// stay "started" while it still writes its outputs. Pdeathsig fires when the
// launching OS thread exits, so the worker locks its goroutine to the thread
// for the job's lifetime (see runChild).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
