package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// State is where a job stands, as recorded in its status.json.
type State string

// The states a status.json can record.
const (
	// Started: the job was launched and has not finished. Only jobs that
	// release data write it to status.json (durably, before they start),
	// so that a later batch never runs them again; every job records its
	// start in its lock file too, for batch status.
	Started State = "started"
	// Succeeded: the job exited with status 0.
	Succeeded State = "succeeded"
	// Failed: the job exited with another status, was killed, or could not
	// be launched; a rerun runs it again. A job that releases data is
	// marked Failed only when it provably drew no noise: exit status 2 (a
	// bad command line), or dpsolve release refusing before sampling (the
	// budget ledger's refusal, an unreadable records file or spec).
	Failed State = "failed"
	// NeedsReview: a job that releases private data ended without
	// succeeding after it started, so it may have drawn noise; it is never
	// re-run automatically. Review it, then delete its status.json to
	// allow a rerun.
	NeedsReview State = "needs_review"
)

// StatusFile, StdoutFile, StderrFile and LockFile are the names of a job's
// bookkeeping files inside OUT/<id>. The lock file holds the latest
// attempt's "started" record (a Status in JSON).
const (
	StatusFile = "status.json"
	StdoutFile = "stdout"
	StderrFile = "stderr"
	LockFile   = "lock"
)

// Status is a job's status.json.
type Status struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	State   State  `json:"state"`
	// Exit is the job's exit status; -1 while it runs, when it was killed
	// by a signal, or when it could not be launched.
	Exit int `json:"exit"`
	// Seconds is the job's wall time (0 while it runs).
	Seconds float64 `json:"seconds"`
	// Error says why the job did not succeed: its last line on stderr, a
	// signal, or why it was not retried.
	Error string `json:"error,omitempty"`
	// Outcome is a release job's own record of its transaction
	// (OutcomeRecord.Outcome: refused, released, charged_not_released);
	// empty when it left none.
	Outcome string `json:"outcome,omitempty"`
	// Hash is the hash of the manifest line the status belongs to.
	Hash string `json:"hash"`
	// Releases is true for jobs whose command draws noise from private data.
	Releases bool `json:"releases,omitempty"`
	// Host, PID and Shard say which batch process ran the job.
	Host     string     `json:"host"`
	PID      int        `json:"pid"`
	Shard    string     `json:"shard,omitempty"`
	Start    time.Time  `json:"start"`
	Finished *time.Time `json:"finished,omitempty"`
}

// ReadStatus reads OUT/<id>/status.json from jobDir; it returns (nil, nil)
// when there is none.
func ReadStatus(jobDir string) (*Status, error) {
	b, err := readSmallFile(filepath.Join(jobDir, StatusFile), maxSmallFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(jobDir, StatusFile), err)
	}
	return &st, nil
}

// WriteStatus replaces jobDir's status.json atomically: it writes a
// temporary file in the same folder and renames it, so a reader sees the old
// status or the new one, never a mix. With durable, the file and the folder
// are synced to disk first, so the new status survives a crash of the
// machine too (used before a release job draws noise and after it ends).
func WriteStatus(jobDir string, st *Status, durable bool) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(jobDir, StatusFile), append(b, '\n'), durable)
}

// writeFileAtomic writes data to path through a temporary file and rename.
func writeFileAtomic(path string, data []byte, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if durable {
		return syncDir(dir)
	}
	return nil
}

// syncDir syncs a folder so that renames and new files in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncTree syncs the outputs directly inside a job's folder dir, then dir
// itself: a job's outputs are on disk before its status says it succeeded.
// It skips what needs no syncing there: the status (rewritten durably right
// after), the lock file (its start record only informs batch status) and
// hidden temporary files (an unfinished write of someone's).
func syncTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !needsSync(e) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR, 0)
		if err != nil {
			continue // vanished or unreadable: nothing of ours to sync
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// needsSync says whether syncTree syncs the folder entry e.
func needsSync(e fs.DirEntry) bool {
	name := e.Name()
	return e.Type().IsRegular() && name != StatusFile && name != LockFile && !strings.HasPrefix(name, ".")
}
