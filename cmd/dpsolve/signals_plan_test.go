package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/matio"
)

// prefixSpec writes a one-attribute prefix spec of n values and records
// over it; it returns their paths.
func prefixSpec(t *testing.T, dir string, n int) (spec, data string) {
	t.Helper()
	spec = filepath.Join(dir, fmt.Sprintf("s%d.json", n))
	require.NoError(t, os.WriteFile(spec, []byte(fmt.Sprintf(`{"domain":[{"name":"a","size":%d}],"workload":[{"name":"p","product":{"a":"prefix"}}]}`, n)), 0o644))
	var sb strings.Builder
	sb.WriteString("a\n")
	for i := 0; i < 3000; i++ {
		sb.WriteString(strconv.Itoa((i*389)%n) + "\n")
	}
	data = filepath.Join(dir, fmt.Sprintf("r%d.csv", n))
	require.NoError(t, os.WriteFile(data, []byte(sb.String()), 0o644))
	return spec, data
}

// interruptAfter starts dpsolve, sends one SIGINT after wait and returns
// the exit status and how long the exit took after the signal.
func interruptAfter(t *testing.T, dir string, wait time.Duration, args ...string) (int, time.Duration, string) {
	t.Helper()
	s := startBin(t, dir, args...)
	time.Sleep(wait)
	sent := time.Now()
	require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
	code, _ := s.wait(t)
	return code, time.Since(sent), s.errb.String()
}

// A single SIGINT stops dpsolve plan within a second while it solves a
// one-attribute kron plan. Before: the solver, once cancelled, certified
// the point it stopped at (an O(n³) step), 16 s after SIGINT at n = 2048.
func TestPlanInterruptStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 1536-value kron plan")
	}
	dir := t.TempDir()
	spec, _ := prefixSpec(t, dir, 1536)
	code, took, stderr := interruptAfter(t, dir, time.Second, "plan", "--spec", spec, "--template", "kron", "--out", filepath.Join(dir, "P"))
	assert.Equal(t, exitInterrupted, code, stderr)
	// 1 s is the target; 2 s allows for a loaded 2-core machine.
	assert.Less(t, took, 2*time.Second, "stopped %v after SIGINT", took)
	t.Logf("plan stopped %v after SIGINT", took)
	assert.NoDirExists(t, filepath.Join(dir, "P"))
}

// A single SIGINT stops dpsolve release of a one-attribute prefix workload
// with a kron --plan within a second (issue #34: 75 s after SIGINT at 4096
// values on main), and nothing is charged. The plan's factor has its first
// column scaled by 10⁻⁵: still of full rank and a valid plan, but too
// ill-conditioned for the QR pseudo-inverse (package tables), so the
// release prepares through the SVD (about 10 s at 1024 values; the QR one
// is done in under a second, before the signal).
func TestReleaseWithPlanInterruptStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("plans and prepares a 1024-value kron release")
	}
	dir := t.TempDir()
	spec, data := prefixSpec(t, dir, 1024)
	planDir := filepath.Join(dir, "P")
	code, _, stderr := releaseCLI(t, "plan", "--spec", spec, "--template", "kron", "--out", planDir, "--quiet")
	require.Equal(t, 0, code, stderr)
	factor := filepath.Join(planDir, "A_a.npy")
	a, err := matio.ReadMatrix(factor)
	require.NoError(t, err)
	for i, r := 0, a.RawMatrix().Rows; i < r; i++ {
		a.Set(i, 0, a.At(i, 0)*1e-5)
	}
	require.NoError(t, matio.WriteMatrix(factor, a))
	led := txnLedger(t, dir)
	before, _ := os.ReadFile(led)
	code, took, stderr := interruptAfter(t, dir, time.Second, "release", "--spec", spec, "--plan", planDir, "--rho", "0.5",
		"--data", data, "--budget-file", led, "--out", filepath.Join(dir, "out"))
	assert.Equal(t, exitInterrupted, code, stderr)
	assert.Less(t, took, 2*time.Second, "stopped %v after SIGINT", took)
	t.Logf("release stopped %v after SIGINT", took)
	after, _ := os.ReadFile(led)
	assert.Equal(t, string(before), string(after), "nothing charged")
	assert.NoDirExists(t, filepath.Join(dir, "out"))
}
