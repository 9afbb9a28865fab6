package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A release job's child says in a structured record, not in its stderr,
// whether it may have drawn noise: the batch sets OutcomeEnv in the child's
// environment to the job folder's OutcomeFile, and dpsolve release writes
// there, atomically, the outcome of its transaction (pipeline/publish)
// when it returns: "refused" (nothing charged, no noise drawn),
// "released", or "charged_not_released". A release job that fails is run
// again only when its record says refused; any other failure — no record
// (the child crashed, was killed or never reached its transaction), an
// unreadable one, or one that says noise may have been drawn — is
// needs_review.
const (
	// OutcomeFile is the record's name in the job folder.
	OutcomeFile = "outcome.json"
	// OutcomeEnv names the environment variable that gives the child the
	// record's path.
	OutcomeEnv = "DPSOLVE_OUTCOME_FILE"
	// maxSmallFile bounds every small file the batch reads (status,
	// outcome, lock, stdout report): a link to /dev/zero or a huge file is
	// refused, never read into memory.
	maxSmallFile = 1 << 20
)

// OutcomeRecord is a release child's record of what its transaction did.
type OutcomeRecord struct {
	// Outcome is publish.Outcome's name: refused, released or
	// charged_not_released.
	Outcome string `json:"outcome"`
	// NoiseMayBeDrawn is false only when nothing was charged and no noise
	// was drawn.
	NoiseMayBeDrawn bool `json:"noise_may_be_drawn"`
	// Error is the failure, if any.
	Error string `json:"error,omitempty"`
}

// WriteOutcome writes rec to path atomically and durably (the record
// decides reruns).
func WriteOutcome(path string, rec OutcomeRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'), true)
}

// ReadOutcome reads the job folder's outcome record; (nil, nil) when there
// is none.
func ReadOutcome(jobDir string) (*OutcomeRecord, error) {
	b, err := readSmallFile(filepath.Join(jobDir, OutcomeFile), maxSmallFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec OutcomeRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(jobDir, OutcomeFile), err)
	}
	return &rec, nil
}

// provedNoNoise reports whether rec proves that the release drew no noise.
func (rec *OutcomeRecord) provedNoNoise() bool {
	return rec != nil && rec.Outcome == "refused" && !rec.NoiseMayBeDrawn
}

// readSmallFile reads path if it is a regular file (not followed through a
// symbolic link) of at most limit bytes; a device, a FIFO or a link is
// refused without being opened for reading, and a file that grows past
// limit while read is refused too.
func readSmallFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v); refusing to read it", path, fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d expected; refusing to read it", path, fi.Size(), limit)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi2, err := f.Stat(); err != nil || !fi2.Mode().IsRegular() || !os.SameFile(fi, fi2) {
		return nil, fmt.Errorf("%s changed while opened; refusing to read it", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is more than %d bytes; refusing to read it", path, limit)
	}
	return b, nil
}
