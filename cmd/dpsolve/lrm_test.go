package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

func lrmCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append([]string{"lrm"}, args...), &o, &e)
	return code, o.String(), e.String()
}

type lrmOut struct {
	Workload         string   `json:"workload"`
	N                int      `json:"n"`
	M                int      `json:"m"`
	Mechanism        string   `json:"mechanism"`
	Ball             string   `json:"ball"`
	Epsilon          float64  `json:"epsilon"`
	Delta            *float64 `json:"delta"`
	Objective        float64  `json:"objective"`
	Residual         float64  `json:"residual"`
	Rank             int      `json:"rank"`
	WorkloadRank     int      `json:"workload_rank"`
	Iterations       int      `json:"iterations"`
	Seconds          float64  `json:"seconds"`
	ExpectedError    float64  `json:"expected_error"`
	NoiseError       float64  `json:"noise_error"`
	StructuralError  *float64 `json:"structural_error"`
	StructuralBound  float64  `json:"structural_bound"`
	IdentityError    float64  `json:"identity_error"`
	SVDUpperBound    float64  `json:"svd_upper_bound"`
	LowerBound       float64  `json:"lower_bound"`
	Sensitivity      float64  `json:"sensitivity"`
	Converged        bool     `json:"converged"`
	Polished         bool     `json:"polished"`
	RelaxedObjective float64  `json:"relaxed_objective"`
	ALResidual       float64  `json:"al_residual"`
	Start            string   `json:"start"`
	PIdentity        bool     `json:"pidentity"`
	PIdentityRows    int      `json:"pidentity_rows"`
	PIdentityIters   int      `json:"pidentity_iterations"`
}

// prefixMatrix is the lower-triangular ones matrix (prefix sums).
func prefixMatrix(n int) *mat.Dense {
	w := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			w.Set(i, j, 1)
		}
	}
	return w
}

func TestLRMJSONFromFile(t *testing.T) {
	dir := t.TempDir()
	wPath, bPath, lPath := filepath.Join(dir, "W.npy"), filepath.Join(dir, "B.npy"), filepath.Join(dir, "L.npy")
	const n = 32
	w := prefixMatrix(n)
	require.NoError(t, matio.WriteMatrix(wPath, w))
	code, out, errOut := lrmCLI(t, "--w", wPath, "--eps", "0.5", "--out-b", bPath, "--out-l", lPath, "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "laplace noise", "progress goes to stderr")
	var o lrmOut
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)

	assert.Equal(t, "laplace", o.Mechanism)
	assert.Equal(t, "l1", o.Ball)
	assert.Nil(t, o.Delta)
	assert.Equal(t, n, o.N)
	assert.Equal(t, n, o.M)
	assert.Equal(t, n, o.WorkloadRank)
	// r = ⌈1.2·32⌉ ≥ n: the p-Identity start, n + ⌈n/16⌉ rows, returned
	// as is (no --refine).
	assert.Equal(t, "pidentity", o.Start)
	assert.True(t, o.PIdentity)
	assert.Equal(t, 2, o.PIdentityRows)
	assert.Positive(t, o.PIdentityIters)
	assert.Equal(t, n+2, o.Rank)
	assert.True(t, o.Converged)
	assert.Zero(t, o.Iterations)
	assert.Positive(t, o.Seconds)

	// The files hold the decomposition the numbers describe.
	b, err := matio.ReadMatrix(bPath)
	require.NoError(t, err)
	l, err := matio.ReadMatrix(lPath)
	require.NoError(t, err)
	br, bc := b.Dims()
	lr, lc := l.Dims()
	require.Equal(t, []int{n, o.Rank, o.Rank, n}, []int{br, bc, lr, lc})
	nb := mat.Norm(b, 2)
	assert.InDelta(t, nb*nb, o.Objective, 1e-9*o.Objective)
	var d mat.Dense
	d.Mul(b, l)
	d.Sub(w, &d)
	assert.InDelta(t, mat.Norm(&d, 2)/mat.Norm(w, 2), o.Residual, 1e-14)
	assert.LessOrEqual(t, o.Residual, 1e-3)
	var maxCol float64
	for j := 0; j < n; j++ {
		var s float64
		for i := 0; i < lr; i++ {
			s += math.Abs(l.At(i, j))
		}
		maxCol = math.Max(maxCol, s)
	}
	assert.LessOrEqual(t, maxCol, 1+1e-12)
	assert.InDelta(t, maxCol, o.Sensitivity, 1e-15)

	// Errors: Laplace 2Δ²Φ/ε²; Identity 2‖W‖²_F/ε² with ‖W‖²_F = n(n+1)/2.
	assert.InDelta(t, 2*o.Sensitivity*o.Sensitivity*o.Objective/0.25, o.ExpectedError, 1e-9*o.ExpectedError)
	assert.Equal(t, o.NoiseError, o.ExpectedError)
	assert.Nil(t, o.StructuralError)
	assert.InDelta(t, 2*float64(n*(n+1)/2)/0.25, o.IdentityError, 1e-9)
	assert.Less(t, o.ExpectedError, o.IdentityError)
	assert.LessOrEqual(t, o.LowerBound, o.ExpectedError)
	assert.LessOrEqual(t, o.ExpectedError, o.SVDUpperBound)
	assert.Less(t, o.StructuralBound, 1e-20*o.Objective)

	// The SVD start of Yuan et al. (VLDB 2012): r = ⌈1.2·32⌉ rows and the augmented-Lagrangian
	// iteration, polished to an exact pair.
	code, out, errOut = lrmCLI(t, "--w", wPath, "--eps", "0.5", "--start", "svd", "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "dpsolve lrm: lrm  step 1", "the iteration's progress goes to stderr")
	var so lrmOut
	require.NoError(t, json.Unmarshal([]byte(out), &so), out)
	assert.Equal(t, "svd", so.Start)
	assert.False(t, so.PIdentity)
	assert.Equal(t, 39, so.Rank)
	assert.Positive(t, so.Iterations)
	assert.True(t, so.Polished)
	assert.LessOrEqual(t, so.Residual, 1e-12)
}

func TestLRMGaussianAndData(t *testing.T) {
	dir := t.TempDir()
	xPath := filepath.Join(dir, "x.npy")
	x := make([]float64, 32)
	for i := range x {
		x[i] = float64(1000 + 37*i)
	}
	require.NoError(t, matio.WriteVector(xPath, x))

	code, out, errOut := lrmCLI(t, "--workload", "wrange:m=40,seed=2", "--n", "32", "--mechanism", "gaussian",
		"--eps", "1", "--delta", "1e-6", "--data", xPath, "--json", "--quiet")
	require.Equal(t, 0, code, errOut)
	var o lrmOut
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	assert.Equal(t, "l2", o.Ball)
	require.NotNil(t, o.Delta)
	assert.Equal(t, 1e-6, *o.Delta)
	sigma, err := calibrate.GaussianSigma(1, 1e-6, o.Sensitivity)
	require.NoError(t, err)
	assert.InDelta(t, sigma*sigma*o.Objective, o.NoiseError, 1e-9*o.NoiseError)
	require.NotNil(t, o.StructuralError)
	assert.InDelta(t, o.NoiseError+*o.StructuralError, o.ExpectedError, 1e-9*o.ExpectedError)
	assert.Less(t, *o.StructuralError, 1e-12*o.NoiseError, "polished: exact decomposition")
	assert.Empty(t, errOut)

	// Relaxed: the paper's W ≈ BL, with its structural error on these counts
	// (a workload where LRM beats Identity, which Solve would return instead).
	code, out, errOut = lrmCLI(t, "--workload", "wrange:m=40,seed=2", "--n", "32", "--eps", "1",
		"--start", "svd", "--relaxed", "--data", xPath, "--json", "--quiet")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	assert.False(t, o.Polished)
	assert.InDelta(t, o.ALResidual, o.Residual, 1e-12)
	assert.Equal(t, o.RelaxedObjective, o.Objective)
	require.NotNil(t, o.StructuralError)
	assert.Positive(t, *o.StructuralError)
	assert.InDelta(t, o.NoiseError+*o.StructuralError, o.ExpectedError, 1e-9*o.ExpectedError)
	var x2 float64
	for _, v := range x {
		x2 += v * v
	}
	assert.LessOrEqual(t, *o.StructuralError, o.StructuralBound*x2*(1+1e-9))
}

func TestLRMTable(t *testing.T) {
	code, out, errOut := lrmCLI(t, "--workload", "identity", "--n", "16", "--eps", "1", "--quiet")
	require.Equal(t, 0, code, errOut)
	for _, s := range []string{"identity(n=16)", "tr(BᵀB)", "expected error", "identity", "SVD upper", "Hardt–Talwar"} {
		assert.Contains(t, out, s)
	}
}

func TestLRMBadInput(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.npy")
	require.NoError(t, matio.WriteMatrix(zero, mat.NewDense(3, 4, nil)))
	nanCSV := filepath.Join(dir, "nan.csv")
	require.NoError(t, os.WriteFile(nanCSV, []byte("1,0\nnan,1\n"), 0o600))
	good := filepath.Join(dir, "w.npy")
	require.NoError(t, matio.WriteMatrix(good, prefixMatrix(4)))
	short := filepath.Join(dir, "x.npy")
	require.NoError(t, matio.WriteVector(short, []float64{1, 2}))
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--eps", "1"}, 2, "give exactly one of"},
		{[]string{"--w", good, "--workload", "prefix", "--n", "4"}, 2, "exactly one"},
		{[]string{"--w", good, "--eps", "0"}, 2, "epsilon must be positive"},
		{[]string{"--w", good, "--eps", "-1"}, 2, "epsilon must be positive"},
		{[]string{"--w", good, "--eps", "NaN"}, 2, "epsilon must be positive"},
		{[]string{"--w", good, "--delta", "1e-6"}, 2, "delta must be 0 for pure"},
		{[]string{"--w", good, "--mechanism", "gaussian"}, 2, "delta must lie in"},
		{[]string{"--w", good, "--mechanism", "gaussian", "--delta", "1"}, 2, "delta must lie in"},
		{[]string{"--w", good, "--mechanism", "uniform"}, 2, "--mechanism must be"},
		// lrm.Solve checks the options itself (bad input: exit 1).
		{[]string{"--w", good, "--tol", "2"}, 1, "below 1"},
		{[]string{"--w", good, "--rank-factor", "0.5"}, 1, "at least 1"},
		{[]string{"--w", good, "--rank", "-1"}, 1, "must not be negative"},
		{[]string{"--w", good, "--pidentity-rows", "-1"}, 1, "must not be negative"},
		{[]string{"--w", good, "--start", "random"}, 2, "--start must be"},
		{[]string{"--w", good, "--rank", "2"}, 1, "below rank(W)"},
		{[]string{"--w", good, "--n", "4"}, 2, "domain size is only for a built-in workload"},
		{[]string{"--workload", "prefix"}, 2, "domain size n must be positive"},
		{[]string{"--workload", "allrange:x=1", "--n", "4"}, 2, ""},
		{[]string{"--w", zero}, 1, "rank 0"},
		{[]string{"--w", nanCSV}, 1, "nan"},
		{[]string{"--w", filepath.Join(dir, "missing.npy")}, 1, "missing.npy"},
		{[]string{"--w", good, "--data", short}, 1, "2 cells"},
		{[]string{"--w", good, "extra"}, 2, "unexpected arguments"},
	}
	for _, c := range cases {
		code, out, errOut := lrmCLI(t, append(c.args, "--quiet")...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Empty(t, out, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

// TestLRMReturnsIdentity: on a random rank-s workload with s well above √n,
// ε-DP factorizations cost more than answering each cell (the optimizer's
// own result is about 1.1× Identity's here), so lrm returns Identity and
// says so.
func TestLRMReturnsIdentity(t *testing.T) {
	dir := t.TempDir()
	bPath, lPath := filepath.Join(dir, "b.npy"), filepath.Join(dir, "l.npy")
	code, out, errOut := lrmCLI(t, "--workload", "wrelated:m=128,s=16", "--n", "128", "--eps", "1",
		"--out-b", bPath, "--out-l", lPath, "--json", "--quiet")
	require.Equal(t, 0, code, errOut)
	var o struct {
		Objective        float64 `json:"objective"`
		RelaxedObjective float64 `json:"relaxed_objective"`
		IdentityError    float64 `json:"identity_error"`
		ExpectedError    float64 `json:"expected_error"`
		Rank             int     `json:"rank"`
		Identity         bool    `json:"identity"`
		Fallback         bool    `json:"fallback"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	assert.True(t, o.Identity)
	assert.False(t, o.Fallback)
	assert.Equal(t, 128, o.Rank)
	assert.Greater(t, o.RelaxedObjective, o.Objective)
	assert.InDelta(t, o.IdentityError, o.ExpectedError, 1e-12*o.IdentityError)
	l, err := matio.ReadMatrix(lPath)
	require.NoError(t, err)
	r, c := l.Dims()
	require.Equal(t, []int{128, 128}, []int{r, c})
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			require.Equal(t, want, l.At(i, j))
		}
	}

	code, out, errOut = lrmCLI(t, "--workload", "wrelated:m=128,s=16", "--n", "128", "--eps", "1", "--quiet")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "returned Identity")
}
