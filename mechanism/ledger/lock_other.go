//go:build !unix

package ledger

import "errors"

// lock is unavailable without flock(2): refusing is safer than an
// unlocked ledger that concurrent releases could overspend.
func lock(string) (func(), error) {
	return nil, errors.New("ledger: budget ledgers need flock(2), available on Unix systems only")
}
