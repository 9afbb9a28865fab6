package ledger

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Before this file's fixes, Spend renamed a new file over the path it was
// given: through a symbolic link it replaced the link with a second ledger
// (both charges of 0.6 below succeeded, 1.2 of 1 spent), a hard link kept
// the old file, and the new file had CreateTemp's mode 0600.

func TestSymlinkIsTheSameLedger(t *testing.T) {
	p := newLedger(t, budgettest.ZCDP(1))
	link := filepath.Join(filepath.Dir(p), "link.json")
	require.NoError(t, os.Symlink(filepath.Base(p), link))
	_, err := Spend(link, budgettest.ZCDP(0.6), "via the link")
	require.NoError(t, err)
	_, err = Spend(p, budgettest.ZCDP(0.6), "via the file")
	require.ErrorIs(t, err, ErrExceeded, "the second 0.6 must see the first")
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link stays a link")
	f, err := Read(p)
	require.NoError(t, err)
	assert.Len(t, f.Spent, 1)
	_, err = Check(link, budgettest.ZCDP(0.6))
	require.ErrorIs(t, err, ErrExceeded)
}

func TestHardLinkRefused(t *testing.T) {
	p := newLedger(t, budgettest.ZCDP(1))
	hard := filepath.Join(filepath.Dir(p), "hard.json")
	require.NoError(t, os.Link(p, hard))
	before, _ := os.ReadFile(p)
	for _, name := range []string{p, hard} {
		_, err := Spend(name, budgettest.ZCDP(0.1), "x")
		require.ErrorIs(t, err, ErrInput)
		assert.Contains(t, err.Error(), "has 2 hard links")
		assert.Contains(t, err.Error(), "nothing was charged")
		_, err = Check(name, budgettest.ZCDP(0.1))
		assert.ErrorContains(t, err, "hard links", "a dry run refuses it too")
	}
	after, _ := os.ReadFile(p)
	assert.Equal(t, before, after)
}

func TestSpendKeepsModeAndGroup(t *testing.T) {
	p := newLedger(t, budgettest.ZCDP(1))
	require.NoError(t, os.Chmod(p, 0o664))
	// A group other than the primary one, when the user has one (as root any).
	gid := os.Getgid()
	if groups, err := os.Getgroups(); err == nil {
		for _, g := range groups {
			if g != gid {
				gid = g
				break
			}
		}
	}
	if gid != os.Getgid() {
		require.NoError(t, os.Chown(p, -1, gid))
	}
	_, err := Spend(p, budgettest.ZCDP(0.1), "x")
	require.NoError(t, err)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o664), fi.Mode().Perm())
	assert.Equal(t, uint32(gid), fi.Sys().(*syscall.Stat_t).Gid)
	if gid == os.Getgid() {
		t.Log("no supplementary group: the group check only saw the primary group")
	}
}

func TestCancelledSpendChangesNothing(t *testing.T) {
	p := newLedger(t, budgettest.ZCDP(1))
	_, err := Spend(p, budgettest.ZCDP(0.1), "first")
	require.NoError(t, err)
	before, _ := os.ReadFile(p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = SpendContext(ctx, p, budgettest.ZCDP(0.1), "cancelled")
	require.ErrorIs(t, err, context.Canceled)
	after, _ := os.ReadFile(p)
	assert.Equal(t, before, after, "byte for byte")
	entries, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp", "no temporary file left")
	}
}

func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, err := Spend(fifo, budgettest.ZCDP(0.1), "x")
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "not a regular file")
}

func TestConcurrentProcessesThroughTwoNames(t *testing.T) {
	// 8 processes, half through a symbolic link, each try to spend 0.3 of
	// ρ = 1: exactly 3 succeed whichever name they used.
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	p := newLedger(t, budgettest.ZCDP(1))
	link := filepath.Join(t.TempDir(), "elsewhere.json") // another directory
	require.NoError(t, os.Symlink(p, link))
	ok, _ := spendInChildren(t, []string{p, link, p, link, p, link, p, link}, "0.3")
	assert.Equal(t, 3, ok)
	f, err := Read(p)
	require.NoError(t, err)
	assert.Len(t, f.Spent, 3)
	assert.InDelta(t, 0.9, f.Total().Rho, 1e-15)
}

// A refusal states the charge in the release's own unit and in the
// ledger's (before: only "costs rho=0.5" for an ε = 1 release).
func TestRefusalStatesBothUnits(t *testing.T) {
	p := newLedger(t, budgettest.ZCDP(0.4))
	_, err := Spend(p, budgettest.PureDP(1), "x")
	require.ErrorIs(t, err, ErrExceeded)
	assert.Contains(t, err.Error(), "costs eps=1, that is rho=0.5 in this ledger's unit")
}
