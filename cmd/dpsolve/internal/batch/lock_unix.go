//go:build unix

package batch

import (
	"errors"
	"os"
	"syscall"
)

// jobLock is an exclusive advisory lock (flock) on a job's lock file. The
// kernel releases it when the holding process dies, even by SIGKILL, so a
// crashed batch never leaves a job locked.
type jobLock struct{ f *os.File }

// errLocked reports that another process holds the job's lock.
var errLocked = errors.New("the job is running in another batch process")

// tryLock takes the lock at path without waiting.
func tryLock(path string) (*jobLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return &jobLock{f}, nil
}

// record replaces the lock file's content: the current attempt's "started"
// record, which tells batch status that the job runs (or was interrupted)
// without a second write of status.json. Writing in place is cheaper than
// the temporary file and rename a status needs; a reader that catches it
// half-written treats the job as running.
func (l *jobLock) record(b []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, 0)
	return err
}

// unlock releases the lock.
func (l *jobLock) unlock() { l.f.Close() }

// processAlive reports whether pid names a running process on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Flags of readSmallFile's open: never through a link, never block on a
// FIFO that slipped in between the check and the open.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)
