//go:build !unix

package atomicdir

import "os"

// withParentLock runs f (no directory lock here: writers are serialized
// within this process only, by held).
func withParentLock(parent string, f func() error) error { return f() }

// lockTemp: no flock here; other processes judge the entry by its
// process id (writerOf), which they cannot check.
func lockTemp(path string) (release func(), err error) { return func() {}, nil }

// writerOf: a process's liveness is unknown here, so a temporary
// directory counts as a live writer's and is left alone; a temporary file
// is left alone and does not refuse the target (as before the lock).
func writerOf(path string, isDir bool, pid int) writer {
	if isDir && pid != os.Getpid() {
		return writerLive
	}
	return writerUnknown
}

// processAlive: unknown here, so every temporary directory is left alone
// and counts as a live writer's.
func processAlive(pid int) bool { return true }

// rename: os.Rename (an existing empty directory is not replaced here).
func rename(from, to string) error { return os.Rename(from, to) }
