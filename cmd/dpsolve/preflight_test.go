package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/release"
)

// TestCheckOutputsAliases: an output that reaches an input by another
// spelling, a symbolic link or a hard link is refused; distinct paths pass.
func TestCheckOutputsAliases(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(in, []byte("data"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.Symlink(in, filepath.Join(dir, "link.npy")))
	require.NoError(t, os.Symlink(dir, filepath.Join(dir, "dirlink")))
	require.NoError(t, os.Link(in, filepath.Join(dir, "hard.npy")))
	for _, alias := range []string{in, filepath.Join(dir, "sub", "..", "x.npy"), filepath.Join(dir, "link.npy"),
		filepath.Join(dir, "dirlink", "x.npy"), filepath.Join(dir, "hard.npy")} {
		err := checkOutputs([]string{in}, matOut("--out", alias))
		require.Error(t, err, alias)
		assert.Contains(t, err.Error(), "is also an input", alias)
	}
	assert.NoError(t, checkOutputs([]string{in}, matOut("--out", filepath.Join(dir, "o.npy")), matOut("--out-w", filepath.Join(dir, "w.csv"))))
	err := checkOutputs(nil, matOut("--out", filepath.Join(dir, "o.npy")), matOut("--out-xhat", filepath.Join(dir, "sub", "..", "o.npy")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--out and --out-xhat name the same file")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.npy"), 0o755))
	err = checkOutputs(nil, matOut("--out", filepath.Join(dir, "d.npy")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a directory")
	err = checkOutputs(nil, matOut("--out", filepath.Join(dir, "x.npy", "o.npy")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a directory")
	// The probe leaves nothing behind.
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 6)
}

// TestCheckOutputsReadOnlyDir: a directory the process cannot write is
// found by the probe (skipped as root, who can write anywhere).
func TestCheckOutputsReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root bypasses directory permissions")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o555))
	err := checkOutputs(nil, matOut("--out", filepath.Join(ro, "o.npy")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot write")
}

// TestMemoryModelMatchesLargestN: the largest n the message names fits, and
// n+1 does not (the model checked against itself at the boundary), and the
// refusal names the needed and the available memory.
func TestMemoryModelMatchesLargestN(t *testing.T) {
	t.Setenv(resources.EnvLimit, "1GiB")
	err := checkSpecMemory("solve", workload.Source{Spec: "prefix", N: 100000}, memSolve, false, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs about 745 GiB of memory, but only 870 MiB is available to it: 85% of the 1 GiB limit set by DPSOLVE_MEMORY_LIMIT")
	budget := resources.Usable * (1 << 30)
	largest := resources.LargestN(func(n float64) float64 { return memNeed(memSolve, n, n, 0, false) }, resources.Available())
	assert.LessOrEqual(t, memNeed(memSolve, float64(largest), 0, 0, false), budget)
	assert.Greater(t, memNeed(memSolve, float64(largest+1), 0, 0, false), budget)
	assert.NoError(t, checkSpecMemory("solve", workload.Source{Spec: "prefix", N: largest}, memSolve, false, false))
	assert.Error(t, checkSpecMemory("solve", workload.Source{Spec: "prefix", N: largest + 1}, memSolve, false, false))
	// Answering a random workload forms W (m×n): m matters.
	assert.NoError(t, checkSpecMemory("run", workload.Source{Spec: "wrange:m=1000", N: 1024}, memRun, false, true))
	assert.Error(t, checkSpecMemory("run", workload.Source{Spec: "wrange:m=100000", N: 1024}, memRun, false, true)) // 8·1e5·1024 = 0.8 GB of W
}

// TestAnswerOrderMatchesW: for every built-in, the release's answers (closed
// forms for the structured workloads) equal W·x with W from the workload's
// Matrix, and the orders the help text documents hold on explicit rows.
func TestAnswerOrderMatchesW(t *testing.T) {
	const n = 12
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i*i%11) + 0.25*float64(i)
	}
	for _, spec := range []string{"identity", "total", "prefix", "allrange", "width:k=4", "wrange:m=30", "wdiscrete:m=40,pneg=0.2", "wrelated:m=9,s=3", "marginals:dims=3x4,k=1", "marginals:dims=2x3x2"} {
		nn := n
		if len(spec) > 9 && spec[:9] == "marginals" {
			nn = 0
		}
		w, err := workload.Parse(spec, nn)
		require.NoError(t, err, spec)
		got, err := release.Answer(w, x)
		require.NoError(t, err, spec)
		wm := w.(workload.Explicit).Matrix()
		want := mat.NewVecDense(w.Queries(), nil)
		want.MulVec(wm, mat.NewVecDense(n, x))
		require.Len(t, got, w.Queries(), spec)
		for i := range got {
			// Sums of ≤ 12 terms of size ≤ 20: exact up to ~1e-13.
			assert.InDelta(t, want.AtVec(i), got[i], 1e-9, "%s answer %d", spec, i)
		}
	}
	// allrange: [0,0], [0,1], …, [0,n-1], [1,1], …
	w, _ := workload.Parse("allrange", 4)
	a := w.(workload.Explicit).Matrix()
	assert.Equal(t, []float64{1, 1, 0, 0}, mat.Row(nil, 1, a))
	assert.Equal(t, []float64{0, 1, 0, 0}, mat.Row(nil, 4, a))
	// width:k=2: answer i is x_i + x_(i+1).
	w, _ = workload.Parse("width:k=2", 4)
	assert.Equal(t, []float64{0, 1, 1, 0}, mat.Row(nil, 1, w.(workload.Explicit).Matrix()))
	// marginals 2x3, k=1: attribute 0's two values, then attribute 1's
	// three; cell c = 3·a0 + a1 (row-major).
	w, _ = workload.Parse("marginals:dims=2x3,k=1", 0)
	m := w.(workload.Explicit).Matrix()
	assert.Equal(t, []float64{0, 0, 0, 1, 1, 1}, mat.Row(nil, 1, m)) // a0 = 1
	assert.Equal(t, []float64{0, 1, 0, 0, 1, 0}, mat.Row(nil, 3, m)) // a1 = 1
}
