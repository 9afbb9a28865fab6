//go:build unix

package atomicdir

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// held records the targets this process has reserved: flock(2) locks are
// per open file, so a second Reserve in the same process would otherwise
// succeed on its own descriptor.
var held sync.Map

// lockTarget takes an exclusive, non-blocking flock on PARENT/.NAME.lock.
// The lock file is removed on release; a writer that locked a file no
// longer named by the path (removed by the previous owner meanwhile)
// starts over.
func lockTarget(target string) (func(), error) {
	if _, loaded := held.LoadOrStore(target, true); loaded {
		return nil, &TargetError{target, ErrBusy}
	}
	path := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".lock")
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			held.Delete(target)
			return nil, &TargetError{target, err}
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			held.Delete(target)
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &TargetError{target, ErrBusy}
			}
			return nil, &TargetError{target, err}
		}
		a, err1 := f.Stat()
		b, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return func() {
				os.Remove(path)
				f.Close()
				held.Delete(target)
			}, nil
		}
		f.Close()
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
