package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func TestRunOptimizesAndAnswers(t *testing.T) {
	dir := t.TempDir()
	x := make([]float64, 32)
	for i := range x {
		x[i] = float64((i * 7) % 5)
	}
	xPath := filepath.Join(dir, "x.npy")
	require.NoError(t, matio.WriteVector(xPath, x))
	out, aPath := filepath.Join(dir, "ans.npy"), filepath.Join(dir, "A.npy")
	code, stdout, stderr := releaseCLI(t, "run", "--data", xPath, "--workload", "prefix", "--eps", "1", "--delta", "1e-6",
		"--out", out, "--out-a", aPath, "--insecure-seed", "5", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "optimizing")

	var got struct {
		Mechanism    string  `json:"mechanism"`
		Sigma        float64 `json:"sigma"`
		Sensitivity  float64 `json:"sensitivity"`
		Snapped      float64 `json:"snapped_sensitivity"`
		ExpectedRMSE float64 `json:"expected_rmse"`
		Objective    float64 `json:"objective"`
		Gap          float64 `json:"gap"`
		Queries      int     `json:"queries"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	// The certified optimum for Prefix n = 32 (internal/reference); the
	// solver certifies a gap ≤ 1e-8.
	assert.InEpsilon(t, reference.PrefixN32, got.Objective, 1e-8)
	assert.LessOrEqual(t, got.Gap, 1e-8)
	// Optimized strategies have unit columns: Δ₂ = 1.
	assert.InDelta(t, 1, got.Sensitivity, 1e-9)
	// σ from the analytic Gaussian for the snapped sensitivity, sampled on
	// its grid; expected RMSE = σ·√(tr(V X⁻¹)/m) with tr(V X⁻¹) the objective.
	sigma, err := calibrate.GaussianSigma(1, 1e-6, got.Snapped)
	require.NoError(t, err)
	g, err := noise.Grid(sigma)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, got.Sigma, sigma)
	assert.LessOrEqual(t, got.Sigma, sigma+g)
	assert.InDelta(t, got.Sigma*math.Sqrt(got.Objective/32), got.ExpectedRMSE, 1e-8*got.ExpectedRMSE)
	assert.Equal(t, 32, got.Queries)

	a, err := matio.ReadMatrix(aPath)
	require.NoError(t, err)
	for i := 0; i < 32; i++ {
		for j := 0; j < i; j++ {
			require.Zero(t, a.At(i, j), "A is not upper triangular")
		}
	}
	ans, err := matio.ReadVector(out)
	require.NoError(t, err)
	assert.Len(t, ans, 32)

	// dpsolve answer with the saved strategy and the same seed reproduces
	// the release exactly.
	out2 := filepath.Join(dir, "ans2.npy")
	code, _, stderr = releaseCLI(t, "answer", "--strategy", aPath, "--data", xPath, "--workload", "prefix",
		"--eps", "1", "--delta", "1e-6", "--out", out2, "--insecure-seed", "5")
	require.Equal(t, 0, code, stderr)
	ans2, err := matio.ReadVector(out2)
	require.NoError(t, err)
	assert.Equal(t, ans, ans2)
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	xPath := filepath.Join(dir, "x.npy")
	require.NoError(t, matio.WriteVector(xPath, []float64{1, 2, 3, 4}))
	out := filepath.Join(dir, "o.npy")
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", "--data", xPath, "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", out, "--tol", "0"}, 2, "--tol"},
		{[]string{"run", "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", out}, 2, "--data is required"},
		{[]string{"run", "--data", xPath, "--workload", "nosuch", "--eps", "1", "--delta", "1e-6", "--out", out}, 2, "nosuch"},
		{[]string{"run", "--data", xPath, "--workload", "prefix", "--mechanism", "laplace", "--eps", "1", "--delta", "0.1", "--out", out}, 2, "delta must be 0"},
	}
	for _, c := range cases {
		code, _, stderr := releaseCLI(t, c.args...)
		assert.Equal(t, c.code, code, stderr)
		assert.Contains(t, stderr, c.msg)
	}
}
