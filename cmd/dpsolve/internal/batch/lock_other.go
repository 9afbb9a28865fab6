//go:build !unix

package batch

import "errors"

type jobLock struct{}

var errLocked = errors.New("the job is running in another batch process")

// tryLock is unsupported off Unix: batch needs flock to guarantee that two
// processes never run one job.
func tryLock(string) (*jobLock, error) {
	return nil, errors.New("job locks need a Unix system")
}

func (*jobLock) record([]byte) error { return nil }

func (*jobLock) unlock() {}

func processAlive(int) bool { return false }

const (
	oNoFollow = 0
	oNonBlock = 0
)
