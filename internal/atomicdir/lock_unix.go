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

// lockTemp takes an exclusive flock on this writer's temporary entry (a
// directory or a file) without waiting; release drops it. The entry is the
// reservation other processes see (writerOf): its lock is held from the
// reservation until the entry is renamed onto the target or removed, and
// the kernel drops it when the writer exits, however it exits.
func lockTemp(path string) (release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := flockNB(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// writerOf judges the writer of a temporary entry: live while its lock is
// held (lockTemp) or, for an entry without one (a writer older than the
// lock), while process pid runs; dead otherwise. An unlocked entry named
// with this process's id is left alone (this process's reservations are
// in held).
func writerOf(path string, isDir bool, pid int) writer {
	if f, err := os.Open(path); err == nil {
		err := flockNB(f)
		f.Close() // drops the lock if it was ours for a moment
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return writerLive
		}
	}
	switch {
	case pid == os.Getpid():
		return writerUnknown
	case processAlive(pid):
		return writerLive
	}
	return writerDead
}

// flockNB is flock(LOCK_EX|LOCK_NB), retried on EINTR.
func flockNB(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
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
