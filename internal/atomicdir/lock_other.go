//go:build !unix

package atomicdir

import (
	"os"
	"sync"
)

var held sync.Map

// lockTarget reserves target within this process only (no flock here).
func lockTarget(target string) (func(), error) {
	if _, loaded := held.LoadOrStore(target, true); loaded {
		return nil, &TargetError{target, ErrBusy}
	}
	return func() { held.Delete(target) }, nil
}

// processAlive: unknown here, so every temporary directory is left alone.
func processAlive(pid int) bool { return true }

// rename: os.Rename (an existing empty directory is not replaced here).
func rename(from, to string) error { return os.Rename(from, to) }
