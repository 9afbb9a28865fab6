package lrm

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/status"
)

// dpbench loads a DPBench 1-D histogram (n = 4096) from ../shared beside
// the repository root and coarsens it to n cells by summing runs of
// adjacent cells.
func dpbench(t *testing.T, name string, n int) []float64 {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test directory")
		dir = parent
	}
	path := filepath.Join(dir, "..", "shared", "data", "dpbench", "1D", name+".n4096.npy")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") == "true" { // CI has the data: a missing file is a broken checkout, not a skip
			t.Fatalf("real data %s is absent under CI=true (expected ../shared beside the repository root)", path)
		}
		t.Skipf("real data %s is absent (expected ../shared beside the repository root)", path)
	}
	raw, err := matio.ReadVector(path)
	require.NoError(t, err)
	require.Len(t, raw, 4096)
	require.Zero(t, 4096%n)
	g := 4096 / n
	x := make([]float64, n)
	for i, v := range raw {
		x[i/g] += v
	}
	return x
}

// quadVariance returns Var(‖Bz + s‖²) for z with i.i.d. zero-mean symmetric
// coordinates of variance v and fourth moment kurt·v²: with M = BᵀB,
// Var(zᵀMz) = (kurt − 3)v²·Σ Mᵢᵢ² + 2v²·tr(M²), plus 4v·‖Bᵀs‖² from the
// cross term (odd moments vanish, so the two parts are uncorrelated).
func quadVariance(b *mat.Dense, s []float64, v, kurt float64) float64 {
	var m mat.SymDense
	m.SymOuterK(1, b.T())
	r := m.SymmetricDim()
	var diag2, tr2 float64
	for i := 0; i < r; i++ {
		diag2 += m.At(i, i) * m.At(i, i)
		for j := 0; j < r; j++ {
			tr2 += m.At(i, j) * m.At(i, j)
		}
	}
	var bs mat.VecDense
	bs.MulVec(b.T(), mat.NewVecDense(len(s), s))
	nbs := mat.Norm(&bs, 2)
	return (kurt-3)*v*v*diag2 + 2*v*v*tr2 + 4*v*nbs*nbs
}

// TestEmpiricalErrorMatchesExpected runs the mechanism many times on a real
// histogram (the LRM paper's SEARCHLOGS and NETTRACE data from DPBench) and
// checks that the mean squared error of the answers matches the expected
// error, noise plus the exactly computed structural part, within a 99%
// confidence interval built from the exact variance of a trial's error.
func TestEmpiricalErrorMatchesExpected(t *testing.T) {
	const n, trials = 128, 400
	wr, err := workload.NewWRange(n, 96, 2)
	require.NoError(t, err)
	w := wr.Matrix()
	cases := []struct {
		data string
		ball ball
		bud  calibrate.Budget
		kurt float64 // fourth moment / variance²: Laplace 6, Gaussian 3
		// relaxed keeps the iteration's W ≈ BL, whose answers carry the
		// structural error; otherwise the pair is exact.
		relaxed bool
	}{
		{"SEARCHLOGS", l1, budgettest.PureDP(0.5), 6, false},
		{"NETTRACE", l1, budgettest.PureDP(2), 6, true},
		{"NETTRACE", l2, budgettest.ApproxDP(1, 1e-6), 3, false},
	}
	for ci, c := range cases {
		x := dpbench(t, c.data, n)
		res, err := Solve(context.Background(), w, &Options{Noise: c.ball.noise(), Relaxed: c.relaxed})
		require.NoError(t, err)
		require.Equal(t, status.Converged, res.Status)
		require.Equal(t, !c.relaxed, res.Polished)

		truth := mat.NewVecDense(96, nil)
		truth.MulVec(w, mat.NewVecDense(n, x))
		// Structural vector s = (BL − W)x, independent of the noise.
		var lx, blx mat.VecDense
		lx.MulVec(res.L, mat.NewVecDense(n, x))
		blx.MulVec(res.B, &lx)
		sv := make([]float64, 96)
		var structural float64
		for i := range sv {
			sv[i] = blx.AtVec(i) - truth.AtVec(i)
			structural += sv[i] * sv[i]
		}
		gotStruct, err := res.StructuralError(x)
		require.NoError(t, err)
		require.InDelta(t, structural, gotStruct, 1e-9*math.Max(structural, 1))
		bound, err := res.StructuralBound()
		require.NoError(t, err)
		require.LessOrEqual(t, structural, bound*mat.Dot(mat.NewVecDense(n, x), mat.NewVecDense(n, x))*(1+1e-12))
		if c.relaxed {
			// The relaxed pair has a real bias (its size depends on the run).
			require.Greater(t, structural, 1e-6*res.Objective)
		} else {
			// The exact pair has none beyond rounding.
			require.Less(t, structural, 1e-12*res.Objective)
		}

		s := noise.NewSeededInsecure(uint64(100 + ci))
		var sum float64
		var variance float64
		for trial := 0; trial < trials; trial++ {
			rel, err := res.Answer(x, c.bud, s)
			require.NoError(t, err)
			variance = rel.Variance
			var e float64
			for i, a := range rel.Answers {
				d := a - truth.AtVec(i)
				e += d * d
			}
			sum += e
		}
		mean := sum / trials
		expected := variance*res.Objective + structural
		planned, err := res.ExpectedError(c.bud, x)
		require.NoError(t, err)
		// Snapping inflates the scale by a relative ≤ 2⁻⁴⁰·r.
		require.InDelta(t, planned, expected, 1e-9*expected)
		half := 2.576 * math.Sqrt(quadVariance(res.B, sv, variance, c.kurt)/trials)
		t.Logf("%s %v ε=%g: mean squared error %.6g, expected %.6g (noise %.6g + structural %.3g), 99%% half-width %.3g",
			c.data, c.ball, c.bud.Epsilon(), mean, expected, variance*res.Objective, structural, half)
		require.InDelta(t, expected, mean, half)
	}
}

// countingReader counts the bytes drawn from crypto/rand.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := rand.Read(p)
	c.n += k
	return k, err
}

func TestAnswerUsesTheGivenSecureSource(t *testing.T) {
	pf, err := workload.NewPrefix(16)
	require.NoError(t, err)
	res, err := Solve(context.Background(), pf.Matrix(), nil)
	require.NoError(t, err)
	x := make([]float64, 16)
	for i := range x {
		x[i] = float64(10 * i)
	}
	cr := &countingReader{}
	s := noise.NewSecureReader(cr)
	require.True(t, s.Private())
	rel, err := res.Answer(x, budgettest.PureDP(1), s)
	require.NoError(t, err)
	assert.Greater(t, cr.n, 0, "noise must be drawn from the supplied reader")
	assert.Equal(t, "laplace", rel.Mechanism)
	assert.Len(t, rel.Measurements, res.Rank)
	assert.Len(t, rel.Answers, 16)
	// Calibrated to L's own sensitivity (plus the snapping allowance).
	assert.InDelta(t, res.Sensitivity, rel.Sensitivity, 1e-9)
	assert.GreaterOrEqual(t, rel.Sensitivity, res.Sensitivity)
	assert.InDelta(t, rel.Sensitivity/1, rel.Scale, 1e-9*rel.Scale)

	// A failing source is an error, never a silent fallback.
	_, err = res.Answer(x, budgettest.PureDP(1), noise.NewSecureReader(io.LimitReader(bytes.NewReader(nil), 0)))
	require.Error(t, err)
}

func TestAnswerBadInput(t *testing.T) {
	pf, err := workload.NewPrefix(8)
	require.NoError(t, err)
	l1, err := Solve(context.Background(), pf.Matrix(), nil)
	require.NoError(t, err)
	l2, err := Solve(context.Background(), pf.Matrix(), &Options{Noise: calibrate.Gaussian})
	require.NoError(t, err)
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	s := noise.NewSeededInsecure(1)
	cases := []struct {
		name string
		res  *Result
		x    []float64
		b    calibrate.Budget
		s    noise.Source
	}{
		{"no budget", l1, x, calibrate.Budget{}, s},
		{"δ with Laplace", l1, x, budgettest.ApproxDP(1, 1e-6), s},
		{"no δ with Gaussian", l2, x, budgettest.PureDP(1), s},
		{"short data", l1, x[:5], budgettest.PureDP(1), s},
		{"NaN data", l1, []float64{1, 2, 3, math.NaN(), 5, 6, 7, 8}, budgettest.PureDP(1), s},
		{"negative count", l1, []float64{1, 2, 3, -4, 5, 6, 7, 8}, budgettest.PureDP(1), s},
		{"nil sampler", l1, x, budgettest.PureDP(1), nil},
		{"typed nil sampler", l1, x, budgettest.PureDP(1), (*noise.Sampler)(nil)},
	}
	for _, c := range cases {
		rel, err := c.res.Answer(c.x, c.b, c.s)
		require.Error(t, err, c.name)
		assert.Nil(t, rel, c.name)
		assert.ErrorIs(t, err, ErrInput, c.name)
	}
	// A bad ε or δ cannot be built into a budget (calibrate's tests cover
	// each); the zero Budget is refused.
	for _, eps := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err = calibrate.PureDP(eps)
		assert.ErrorIs(t, err, ErrInput, "ε = %v", eps)
	}
	_, err = calibrate.ApproxDP(1, 1)
	assert.ErrorIs(t, err, ErrInput, "δ ≥ 1")
	_, err = l1.ExpectedNoiseError(calibrate.Budget{})
	assert.ErrorIs(t, err, ErrInput)
	_, err = l1.ExpectedError(budgettest.PureDP(1), x[:3])
	assert.ErrorIs(t, err, ErrInput)
	// A Result not built by Solve has no workload to measure bias against.
	_, err = (&Result{Noise: calibrate.Laplace, ball: l1.ball, L: l1.L, B: l1.B}).StructuralError(x)
	assert.ErrorIs(t, err, ErrInput)
}
