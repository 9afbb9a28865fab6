//go:build unix

package ledger

import (
	"fmt"
	"os"
	"syscall"
)

// lock takes an exclusive flock(2) on path (created if missing) and
// returns its release. flock is per open file description, so it excludes
// other processes and other goroutines of this one alike. It is plain
// syscall, so purego and CGO_ENABLED=0 builds have it too.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ledger: opening the lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger: locking %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
