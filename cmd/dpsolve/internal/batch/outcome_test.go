package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReleaseRerunDecidedByRecord: a failed release job is run again only
// when its own outcome record says it was refused before any charge. The
// message that the old stderr table trusted ("dpsolve release: ledger: …")
// no longer proves anything: without a record (a crash, a panic, a kill)
// the job is needs_review, and so it is when its record says the budget was
// charged. Before, a release that panicked after its charge was "failed"
// and every rerun charged again.
func TestReleaseRerunDecidedByRecord(t *testing.T) {
	f := newFixture(t)
	lines := []string{
		job("refused", "release", "--stderr", "dpsolve release: ledger: budget exceeded", "--outcome", "refused", "--exit", "1"),
		job("noRecord", "release", "--stderr", "dpsolve release: ledger: budget exceeded", "--exit", "1"),
		job("charged", "release", "--stderr", "dpsolve release: boom", "--outcome", "charged_not_released", "--exit", "1"),
		job("panicked", "release", "--stderr", "panic: lapack: insufficient declared workspace length", "--exit", "2"),
		job("usage", "release", "--stderr", "dpsolve release: --rho is required", "--exit", "2"),
	}
	outs := f.run(context.Background(), lines, 2)
	// panicked: a Go program crashing in a panic exits with status 2, like
	// a bad command line; only the record tells them apart.
	if got, want := results(outs), "refused:failed noRecord:needs_review charged:needs_review panicked:needs_review usage:needs_review"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if st := f.status("refused"); st.Outcome != "refused" {
		t.Errorf("refused: %+v", st)
	}
	if st := f.status("charged"); st.Outcome != "charged_not_released" || st.State != NeedsReview {
		t.Errorf("charged: %+v", st)
	}
	// The rerun repeats only the refused one.
	lines[0] = job("refused", "release", "--write", "{out}/answers", "--outcome", "released")
	lines[1] = job("noRecord", "release", "--write", "{out}/answers", "--outcome", "released")
	lines[2] = job("charged", "release", "--write", "{out}/answers", "--outcome", "released")
	outs = f.run(context.Background(), lines, 2)
	if outs[0].Result != Ran || outs[1].Result != Review || outs[2].Result != Review {
		t.Fatalf("rerun: %s", results(outs))
	}
	for _, id := range []string{"noRecord", "charged"} {
		if _, err := os.Stat(filepath.Join(f.out, id, "answers")); !os.IsNotExist(err) {
			t.Errorf("%s was run again", id)
		}
	}
}

// TestBatchReadsOnlySmallRegularFiles: a manifest that is /dev/zero or a
// FIFO, and a job's status.json linked to /dev/zero, are refused at once
// instead of being read until memory runs out or blocking forever.
func TestBatchReadsOnlySmallRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for _, path := range []string{"/dev/zero", fifo} {
		done := make(chan error, 1)
		go func() { _, err := ReadManifest(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadManifest blocked", path)
		}
	}
	job := filepath.Join(dir, "job")
	os.Mkdir(job, 0o755)
	if err := os.Symlink("/dev/zero", filepath.Join(job, StatusFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStatus(job); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("status linked to /dev/zero: %v", err)
	}
	big := filepath.Join(dir, "big")
	os.Mkdir(big, 0o755)
	fh, _ := os.Create(filepath.Join(big, StatusFile))
	fh.Truncate(maxSmallFile + 1)
	fh.Close()
	if _, err := ReadStatus(big); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("an oversized status: %v", err)
	}
}

// TestSymlinkedJobFolderNotFollowed: a job folder that is a symbolic link
// out of --out is neither run into nor read; before, the batch wrote the
// job's status, lock and outputs wherever the link pointed.
func TestSymlinkedJobFolderNotFollowed(t *testing.T) {
	f := newFixture(t)
	elsewhere := filepath.Join(f.dir, "elsewhere")
	os.MkdirAll(elsewhere, 0o755)
	os.MkdirAll(f.out, 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(f.out, "a")); err != nil {
		t.Fatal(err)
	}
	outs := f.run(context.Background(), []string{job("a", "solve", "--write", "{out}/x"), job("b", "release", "--write", "{out}/x", "--outcome", "released")}, 1)
	if outs[0].Result != RanFailed || !strings.Contains(outs[0].Error, "not a directory") {
		t.Fatalf("a: %+v", outs[0])
	}
	if outs[1].Result != Ran {
		t.Fatalf("b: %+v", outs[1])
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("the batch wrote through the link: %v", ents)
	}
	if rep := ReadJob(f.out, "a"); rep.Err == nil {
		t.Fatal("ReadJob followed the link")
	}
}

// TestCollectCSVNeverOverwrites: collect --csv refused nothing and
// replaced any file, a job's status.json included.
func TestCollectCSVNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	os.WriteFile(path, []byte("keep"), 0o644)
	if err := CollectCSV(path, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Fatal("overwritten")
	}
	fresh := filepath.Join(dir, "jobs.csv")
	if err := CollectCSV(fresh, nil); err != nil {
		t.Fatal(err)
	}
	if err := CollectCSV(fresh, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("second collect: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Fatalf("left: %v", left)
	}
}
