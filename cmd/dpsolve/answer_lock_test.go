package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// pauseEnv, in a child run as dpsolve (DPSOLVE_TEST_AS_DPSOLVE=1, see
// batch_child_test.go), pauses the release transaction after its charge:
// the child creates DIR/paused and waits until DIR/go exists. This init
// must run before batch_child_test.go's, which runs the command and exits:
// Go runs a package's init functions in the order of its file names, and
// this file's sorts first.
const pauseEnv = "DPSOLVE_TEST_PAUSE_CHARGED"

func init() {
	dir := os.Getenv(pauseEnv)
	if os.Getenv("DPSOLVE_TEST_AS_DPSOLVE") != "1" || dir == "" {
		return
	}
	publish.InjectFault(func(ctx context.Context, step string) error {
		if step != "charged" {
			return nil
		}
		if err := os.WriteFile(filepath.Join(dir, "paused"), nil, 0o644); err != nil {
			return err
		}
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
				return nil
			}
		}
		return errors.New("test: never told to go on")
	})
}

// Two processes answer to the same --out file with one ledger: the first
// is paused after its charge, holding its reservation; the second (the
// built dpsolve binary) is refused with exit 2, before any charge, naming
// the file and the first process; the first then completes. Exactly one
// charge, the file written once, nothing left beside it. Before: the
// reservation of an output file was within one process only, so both were
// charged.
func TestAnswerConcurrentSameOutFile(t *testing.T) {
	dir, aPath, xPath, _ := releaseFixture(t)
	led := txnLedger(t, dir)
	out := filepath.Join(dir, "same.csv")
	args := []string{"answer", "--strategy", aPath, "--data", xPath, "--workload", "prefix", "--rho", "0.25",
		"--mechanism", "zcdp", "--budget-file", led, "--out", out}
	pause := t.TempDir()
	first := exec.Command(os.Args[0], args...)
	first.Env = append(os.Environ(), "DPSOLVE_TEST_AS_DPSOLVE=1", pauseEnv+"="+pause)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	require.NoError(t, first.Start())
	defer first.Process.Kill()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(pause, "paused")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the first answer never reached its charge: %s", firstErr.String())
	}
	require.Equal(t, 1, ledgerEntries(t, led), "the first answer is charged")

	code, _, stderr, _ := runBin(t, dir, nil, args...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--out "+out+" is being written by another process")
	assert.Contains(t, stderr, "process "+strconv.Itoa(first.Process.Pid))
	assert.Equal(t, 1, ledgerEntries(t, led), "the second answer is refused before its charge")

	require.NoError(t, os.WriteFile(filepath.Join(pause, "go"), nil, 0o644))
	require.NoError(t, first.Wait(), firstErr.String())
	assert.Equal(t, 1, ledgerEntries(t, led))
	assert.FileExists(t, out)
	left, _ := filepath.Glob(filepath.Join(dir, ".same.csv*"))
	assert.Empty(t, left)
}

// answer and run charge --budget-file as release does: a charge is
// recorded with its label (default: --out), and a release that would
// exceed the limit is refused before any noise, its output not written.
func TestAnswerRunBudgetFile(t *testing.T) {
	dir, cmds := txnCommands(t)
	led := txnLedger(t, dir) // ρ = 1
	for _, name := range []string{"answer", "run"} {
		out := filepath.Join(dir, name+".csv")
		a := append(append([]string(nil), cmds[name]...), "--budget-file", led, "--out", out)
		code, _, stderr := releaseCLI(t, a...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, "charged rho=0.5 to "+led)
	}
	f, err := ledger.Read(led)
	require.NoError(t, err)
	require.Len(t, f.Spent, 2)
	assert.Equal(t, filepath.Join(dir, "answer.csv"), f.Spent[0].Label)
	a := append(append([]string(nil), cmds["answer"]...), "--budget-file", led, "--label", "third", "--out", filepath.Join(dir, "third.csv"))
	code, _, stderr := releaseCLI(t, a...)
	assert.NotEqual(t, 0, code, stderr)
	assert.Contains(t, stderr, "exceed")
	assert.NotContains(t, stderr, "NOT differentially private", "noise was about to be drawn")
	assert.Equal(t, 2, ledgerEntries(t, led))
	assert.NoFileExists(t, filepath.Join(dir, "third.csv"))
}
