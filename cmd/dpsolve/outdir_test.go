package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/atomicdir"
)

// Nothing of the user's is deleted: dpsolve mf --out DIR where DIR holds
// other files deleted them (os.RemoveAll in the swap) and replaced a
// regular file at DIR; a bad --out was found only after the solve. Now
// both are refused at once, exit 2, and left as they were.
func TestMFOutRefusesForeignDirBeforeSolve(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	require.NoError(t, os.Mkdir(mine, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mine, "thesis.tex"), []byte("keep"), 0o644))
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("keep"), 0o644))
	for _, out := range []string{mine, file, filepath.Join(dir, "no", "such", "dir")} {
		start := time.Now()
		code, _, stderr := releaseCLI(t, "mf", "--n", "16", "--epochs", "1", "--workload", "prefix", "--out", out, "--quiet")
		assert.Equal(t, 2, code, "%s: %s", out, stderr)
		assert.Less(t, time.Since(start), 2*time.Second, "refused before the solve")
	}
	b, err := os.ReadFile(filepath.Join(mine, "thesis.tex"))
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
}

// An earlier mf output is replaced; a killed run's .DIR.tmp-PID-* is
// removed by the next run; files are 0666 and the folder 0777 less the
// umask (before: .npy files 0600 in a 0700 folder beside a 0644 JSON).
func TestMFOutReplacesItsOwnAndCleansStale(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "mfout")
	args := []string{"mf", "--n", "16", "--epochs", "1", "--workload", "prefix", "--out", out, "--quiet"}
	code, _, stderr := releaseCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale := filepath.Join(dir, atomicdir.TempPrefix(out)+strconv.Itoa(dead.Process.Pid)+"-x")
	require.NoError(t, os.Mkdir(stale, 0o700))
	code, _, stderr = releaseCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	assert.NoDirExists(t, stale)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "only the output remains: %v", entries)
	di, _ := os.Stat(out)
	mask := os.FileMode(0o777) &^ di.Mode().Perm()
	for _, name := range []string{"C.npy", "report.json"} {
		fi, err := os.Stat(filepath.Join(out, name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o666)&^mask, fi.Mode().Perm(), name)
	}
}

// plan --out replaces an earlier plan (strategy.json) and refuses any
// other non-empty directory.
func TestPlanOutReplacesOnlyAPlan(t *testing.T) {
	dir, spec, _, _ := relFixture(t)
	out := filepath.Join(dir, "P")
	for i := 0; i < 2; i++ {
		code, _, stderr := releaseCLI(t, "plan", "--spec", spec, "--template", "kron", "--out", out, "--quiet")
		require.Equal(t, 0, code, stderr)
	}
	other := filepath.Join(dir, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "x"), []byte("keep"), 0o644))
	code, _, stderr := releaseCLI(t, "plan", "--spec", spec, "--template", "kron", "--out", other, "--quiet")
	assert.Equal(t, 2, code, stderr)
	assert.FileExists(t, filepath.Join(other, "x"))
}
