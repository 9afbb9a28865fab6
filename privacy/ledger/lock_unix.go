//go:build unix

package ledger

import (
	"fmt"
	"os"
	"syscall"
)

// lock opens path with flag and takes an exclusive flock(2) on it, and
// returns its release. flock is per open file description, so it excludes
// other processes and other goroutines of this one alike; it locks the
// inode, whatever name opened it, and needs no write permission. It also
// returns the locked file's FileInfo. It is plain syscall, so purego and
// CGO_ENABLED=0 builds have it too.
func lock(path string, flag int) (os.FileInfo, func(), error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: opening %s to lock it: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("ledger: locking %s: %w", path, err)
	}
	unlock := func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	fi, err := f.Stat()
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("ledger: %w", err)
	}
	return fi, unlock, nil
}

// linkCount returns fi's number of hard links (1 when unknown).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// keepOwnership gives the new ledger file tmp the mode and group of old.
// The owner cannot be kept without privileges and is the writer's; the
// group matters for a shared ledger and is kept or the charge refused.
func keepOwnership(tmp *os.File, old os.FileInfo) error {
	if err := tmp.Chmod(old.Mode().Perm()); err != nil {
		return err
	}
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	cur, err := tmp.Stat()
	if err != nil {
		return err
	}
	if now, ok := cur.Sys().(*syscall.Stat_t); ok && now.Gid == st.Gid {
		return nil
	}
	return tmp.Chown(-1, int(st.Gid))
}
