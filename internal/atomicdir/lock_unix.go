//go:build unix

package atomicdir

import (
	"errors"
	"os"
	"syscall"
)

// withParentLock runs f holding an exclusive flock on the parent
// directory itself (no lock file: a killed writer leaves nothing, and the
// kernel drops its lock).
func withParentLock(parent string, f func() error) error {
	d, err := os.Open(parent)
	if err != nil {
		return &TargetError{parent, err}
	}
	defer d.Close()
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			return &TargetError{parent, err}
		}
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	return f()
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// rename is rename(2), which replaces an empty directory (os.Rename
// refuses any existing directory).
func rename(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
