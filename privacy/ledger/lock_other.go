//go:build !unix

package ledger

import (
	"errors"
	"os"
)

// lock is unavailable without flock(2): refusing is safer than an
// unlocked ledger that concurrent releases could overspend.
func lock(string, int) (os.FileInfo, func(), error) {
	return nil, nil, errors.New("ledger: budget ledgers need flock(2), available on Unix systems only")
}

func linkCount(os.FileInfo) uint64 { return 1 }

func keepOwnership(tmp *os.File, old os.FileInfo) error { return tmp.Chmod(old.Mode().Perm()) }
