//go:build unix

package publish

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// lockedBy reports whether some other open file holds a flock on path.
func lockedBy(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// TestHistogramHonoursOtherProcessReservation: RunHistogram reserves its
// files with atomicdir.ReserveFile, whose reservation other processes see:
// a temporary entry of B that another writer holds locked (made here as
// another process makes it, named with a process id that no longer runs,
// so only the lock keeps it live) refuses the release as busy, naming the
// writer, before the charge and without writing; an unlocked one of a dead
// process is a leftover, removed. During a release its own temporary
// files are locked from the reservation to the commit, and nothing is
// left beside the outputs afterwards.
func TestHistogramHonoursOtherProcessReservation(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger.json")
	limit, _ := calibrate.ZCDP(1)
	if err := ledger.Create(led, limit); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	other := filepath.Join(dir, atomicdir.TempPrefix(filepath.Join(dir, "B"))+strconv.Itoa(dead.Process.Pid)+"-abc")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	req := histRequest(t, dir, led)
	res, err := RunHistogram(context.Background(), req)
	if res.Outcome != Refused || !errors.Is(err, ErrOutput) || !errors.Is(err, atomicdir.ErrBusy) ||
		!strings.Contains(err.Error(), filepath.Join(dir, "B")) || !strings.Contains(err.Error(), other) {
		t.Fatalf("B held by another writer: %v %v", res.Outcome, err)
	}
	if f, _ := ledger.Read(led); len(f.Spent) != 0 {
		t.Fatal("charged although an output was busy")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".A*")); len(left) != 0 {
		t.Fatalf("the refused release left %v", left)
	}
	fh.Close() // the other writer dies: its entry is a leftover
	locked := map[string]bool{}
	req.fault = func(_ context.Context, step string) error {
		if step == "reserved" || step == "commit" {
			tmps, _ := filepath.Glob(filepath.Join(dir, ".A.tmp-*"))
			locked[step] = len(tmps) == 1 && lockedBy(t, tmps[0])
		}
		return nil
	}
	if res, err := RunHistogram(context.Background(), req); res.Outcome != Released {
		t.Fatal(res.Outcome, err)
	}
	if !locked["reserved"] || !locked["commit"] {
		t.Errorf("A's temporary file locked at reserved, commit: %v; want both", locked)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}
