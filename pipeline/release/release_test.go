package release

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

var gauss = budgettest.ApproxDP(1, 1e-6)

func h2Matrix(t testing.TB, n int) *mat.Dense {
	h, err := strategy.NewH2(n)
	require.NoError(t, err)
	return h.Matrix()
}

func TestBudgetValidation(t *testing.T) {
	nan := math.NaN()
	good := []calibrate.Budget{gauss, budgettest.PureDP(0.5), budgettest.ZCDP(0.1)}
	for _, b := range good {
		_, err := New(mat.NewDense(1, 1, []float64{1}), b)
		assert.NoError(t, err, b.String())
	}
	// The budget's own checks are calibrate's (tested there): a bad budget
	// cannot be built, with the shared ErrInput, so the only bad budget
	// release can be given is the zero one ("no budget"), which it refuses.
	second := func(_ calibrate.Budget, err error) error { return err }
	for _, err := range []error{
		second(calibrate.ApproxDP(0, 1e-6)), second(calibrate.ApproxDP(nan, 1e-6)), second(calibrate.ApproxDP(1, 1)),
		second(calibrate.New(calibrate.Pure, 1, 1e-6, 0)), second(calibrate.PureDP(0)), second(calibrate.ZCDP(-2)),
		second(calibrate.New(calibrate.Concentrated, 1, 0, 1)), second(calibrate.New("exponential", 1, 0, 0)),
	} {
		assert.ErrorIs(t, err, ErrInput)
	}
	_, err := New(mat.NewDense(1, 1, []float64{1}), calibrate.Budget{})
	assert.ErrorIs(t, err, ErrInput)
}

func TestBadStrategies(t *testing.T) {
	_, err := New(nil, gauss)
	assert.ErrorIs(t, err, ErrInput, "nil")
	_, err = New(mat.NewDense(2, 3, []float64{1, 0, 0, 0, 1, 0}), gauss)
	assert.ErrorIs(t, err, ErrInput, "fewer measurements")
	// Rank deficient (two equal columns; a singular triangular A): accepted —
	// such a strategy answers the workloads in its row space — but a
	// workload outside it (identity) is refused rather than answered with
	// bias, and one inside it (total) gets its closed-form error: A's row
	// space is span(1,1), X = AᵀA = c·11ᵀ with c = 5 (resp. 1), X⁺ = 11ᵀ/(4c),
	// tr(11ᵀ X⁺) = (1ᵀ1)²/(4c) = 1/c.
	for _, tc := range []struct {
		a *mat.Dense
		c float64
	}{
		{mat.NewDense(3, 2, []float64{1, 1, 2, 2, 0, 0}), 5},
		{mat.NewDense(2, 2, []float64{1, 1, 0, 0}), 1},
	} {
		m, err := New(tc.a, gauss)
		require.NoError(t, err)
		assert.Equal(t, 1, m.Rank())
		id, _ := workload.NewIdentity(2)
		_, err = m.ExpectedError(id)
		assert.ErrorIs(t, err, ErrInput, "identity outside the row space")
		tot, _ := workload.NewTotal(2)
		e, err := m.ExpectedError(tot)
		require.NoError(t, err)
		assert.InDelta(t, 1/tc.c, e.TraceVXinv, 1e-14, "tr(V X⁺) for the total")
	}
	_, err = New(mat.NewDense(2, 2, []float64{1, math.NaN(), 0, 1}), gauss)
	assert.ErrorIs(t, err, ErrInput, "NaN")
}

func TestBadData(t *testing.T) {
	m, err := New(h2Matrix(t, 4), gauss)
	require.NoError(t, err)
	s := noise.NewSeededInsecure(1)
	for frag, x := range map[string][]float64{
		"has 3 cells":  {1, 2, 3},
		"has 5 cells":  {1, 2, 3, 4, 5},
		"NaN":          {1, math.NaN(), 3, 4},
		"+Inf":         {1, 2, math.Inf(1), 4},
		"negative":     {1, 2, 3, -1},
		"cell 0 is -I": {math.Inf(-1), 2, 3, 4},
	} {
		_, err := m.Measure(x, s)
		assert.ErrorIs(t, err, ErrInput, frag)
	}
	_, err = m.Measure([]float64{1, 2, 3, 4}, nil)
	assert.ErrorIs(t, err, ErrInput, "sampler")
	_, err = m.Reconstruct([]float64{1, 2})
	assert.ErrorIs(t, err, ErrInput, "measurements")
	_, err = m.Reconstruct([]float64{1, 2, 3, 4, 5, 6, math.NaN()})
	assert.ErrorIs(t, err, ErrInput, "NaN")
}

// refColNorms computes max column norms by an independent loop.
func refColNorms(a mat.Matrix) (l1, l2 float64) {
	p, n := a.Dims()
	for j := 0; j < n; j++ {
		col := mat.Col(nil, j, a)
		var s1, s2 float64
		for i := 0; i < p; i++ {
			s1 += math.Abs(col[i])
			s2 += col[i] * col[i]
		}
		l1, l2 = math.Max(l1, s1), math.Max(l2, math.Sqrt(s2))
	}
	return l1, l2
}

func TestSensitivityAndCalibration(t *testing.T) {
	const n = 256
	h2, err := strategy.NewH2(n)
	require.NoError(t, err)
	w, _ := workload.NewPrefix(n)
	opt, err := strategy.Optimize(context.Background(), w.Gram(), nil)
	require.NoError(t, err)
	for _, s := range []strategy.Matrix{h2, opt} {
		a := s.Matrix()
		l1, l2 := refColNorms(a)
		p, _ := a.Dims()

		mg, err := New(a, gauss)
		require.NoError(t, err)
		assert.InDelta(t, l2, mg.Sensitivity(), 1e-12*l2, s.Name())
		assert.InDelta(t, s.L2Sensitivity(), mg.Sensitivity(), 1e-9, s.Name()) // structural value
		// σ is calibrated for the snapped sensitivity and sampled on the grid.
		sig, err := calibrate.GaussianSigma(1, 1e-6, l2+mg.Grid()*math.Sqrt(float64(p)))
		require.NoError(t, err)
		assert.GreaterOrEqual(t, mg.Scale(), sig)
		assert.LessOrEqual(t, mg.Scale(), sig+mg.Grid())
		assert.InDelta(t, mg.Scale()*mg.Scale(), mg.NoiseVariance(), 0)
		// Snapping's cost is negligible but positive.
		assert.Greater(t, mg.SnappedSensitivity(), mg.Sensitivity())
		assert.Less(t, mg.SnappedSensitivity()/mg.Sensitivity()-1, 1e-9)

		ml, err := New(a, budgettest.PureDP(0.5))
		require.NoError(t, err)
		assert.InDelta(t, l1, ml.Sensitivity(), 1e-12*l1, s.Name())
		assert.InDelta(t, s.L1Sensitivity(), ml.Sensitivity(), 1e-9*l1, s.Name())
		b := (l1 + ml.Grid()*float64(p)) / 0.5 // Laplace scale for the snapped L1 sensitivity
		assert.GreaterOrEqual(t, ml.Scale(), b)
		assert.LessOrEqual(t, ml.Scale(), b+ml.Grid())
		assert.InDelta(t, 2*ml.Scale()*ml.Scale(), ml.NoiseVariance(), 0)

		mz, err := New(a, budgettest.ZCDP(0.05))
		require.NoError(t, err)
		assert.InDelta(t, l2/math.Sqrt(2*0.05), mz.Scale(), 1e-9*l2)
	}
	// H2(256) has 9 levels and every cell lies in one node per level, each
	// with weight 1, so its column 2-norm is √9 = 3 (closed form).
	m, _ := New(h2.Matrix(), gauss)
	assert.InDelta(t, 3.0, m.Sensitivity(), 1e-12)
}

func TestReconstructIsExactWithoutNoise(t *testing.T) {
	// With y = A x exactly, least squares must return x: checks the
	// triangular path (optimized strategy) and the QR path (H2) against
	// the known answer.
	const n = 64
	x := make([]float64, n)
	for i := range x {
		x[i] = float64((i*37)%11) + 0.5
	}
	w, _ := workload.NewAllRange(n)
	opt, err := strategy.Optimize(context.Background(), w.Gram(), nil)
	require.NoError(t, err)
	for _, a := range []mat.Matrix{opt.A, opt.Matrix(), h2Matrix(t, n)} {
		m, err := New(a, gauss)
		require.NoError(t, err)
		p, _ := a.Dims()
		y := make([]float64, p)
		mat.NewVecDense(p, y).MulVec(a, mat.NewVecDense(n, x))
		got, err := m.Reconstruct(y)
		require.NoError(t, err)
		for i := range x {
			assert.InDelta(t, x[i], got[i], 1e-10*(1+x[i]))
		}
	}
}

func TestAnswerMatchesQueryMatrix(t *testing.T) {
	const n = 17
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(float64(i)) * 10
	}
	var ws []workload.Workload
	for _, name := range []string{"identity", "total", "prefix", "allrange"} {
		w, err := workload.Builtin(name, n)
		require.NoError(t, err)
		ws = append(ws, w)
	}
	wk, err := workload.NewWidthKRange(n, 4)
	require.NoError(t, err)
	wr, err := workload.NewWRange(n, 9, 3)
	require.NoError(t, err)
	ws = append(ws, wk, wr)
	for _, w := range ws {
		wm := w.(workload.Explicit).Matrix()
		m, _ := wm.Dims()
		want := make([]float64, m)
		mat.NewVecDense(m, want).MulVec(wm, mat.NewVecDense(n, x))
		got, err := Answer(w, x)
		require.NoError(t, err, w.Name())
		require.Len(t, got, m, w.Name())
		for i := range want {
			assert.InDelta(t, want[i], got[i], 1e-12*float64(n)*10, "%s query %d", w.Name(), i)
		}
	}
	g, err := workload.FromGram("g", (&workload.Prefix{N: n}).Gram(), n)
	require.NoError(t, err)
	_, err = Answer(g, x)
	assert.ErrorIs(t, err, ErrInput, "Gram")
	_, err = Answer(ws[0], x[:3])
	assert.ErrorIs(t, err, ErrInput, "domain")
	_, err = Answer(ws[0], append(x[:n-1:n-1], math.NaN()))
	assert.ErrorIs(t, err, ErrInput, "NaN")
}

func TestExpectedErrorMatchesDirectTrace(t *testing.T) {
	// Independent reference: tr(V (AᵀA)⁻¹) with an explicit inverse of AᵀA.
	const n = 32
	w, _ := workload.NewPrefix(n)
	opt, err := strategy.Optimize(context.Background(), w.Gram(), nil)
	require.NoError(t, err)
	for _, a := range []*mat.Dense{h2Matrix(t, n), opt.Matrix(), mat.DenseCopyOf(eye(n))} {
		m, err := New(a, gauss)
		require.NoError(t, err)
		var x, xinv, prod mat.Dense
		x.Mul(a.T(), a)
		require.NoError(t, xinv.Inverse(&x))
		prod.Mul(w.Gram(), &xinv)
		ref := mat.Trace(&prod)
		e, err := m.ExpectedError(w)
		require.NoError(t, err)
		assert.InDelta(t, ref, e.TraceVXinv, 1e-9*ref)
		assert.InDelta(t, m.NoiseVariance()*ref, e.Total, 1e-9*e.Total)
		assert.InDelta(t, e.Total/float64(n), e.PerQuery, 1e-12*e.PerQuery)
		assert.InDelta(t, math.Sqrt(e.PerQuery), e.RMSE, 1e-12*e.RMSE)
	}
	// Identity strategy on Prefix: tr(V) = Σ (n − i) = n(n+1)/2.
	m, _ := New(eye(n), gauss)
	e, err := m.ExpectedError(w)
	require.NoError(t, err)
	assert.InDelta(t, float64(n*(n+1)/2), e.TraceVXinv, 1e-9)
	_, err = m.ExpectedError(&workload.Prefix{N: n + 1})
	assert.ErrorIs(t, err, ErrInput, "domain")
}

func eye(n int) *mat.Dense {
	d := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		d.Set(i, i, 1)
	}
	return d
}

func TestPostProcess(t *testing.T) {
	v := []float64{-1.4, 2.6, -0.2, 3.5}
	Cleanup{}.Apply(v)
	assert.Equal(t, []float64{-1.4, 2.6, -0.2, 3.5}, v)
	Cleanup{Clamp: true}.Apply(v)
	assert.Equal(t, []float64{0, 2.6, 0, 3.5}, v)
	v = []float64{-1.4, 2.6, -0.2, 3.5}
	Cleanup{Round: true}.Apply(v)
	assert.Equal(t, []float64{-1, 3, 0, 4}, v)
	assert.False(t, math.Signbit(v[2]))
	v = []float64{-1.4, 2.6}
	Cleanup{Clamp: true, Round: true}.Apply(v)
	assert.Equal(t, []float64{0, 3}, v)
}

func TestMeasurementNoiseMoments(t *testing.T) {
	// The noise actually added by Measure (y − A x) has mean 0 and the
	// variance the expected-error formula uses: χ² test on the variance
	// (Gaussian; normal approximation with the Laplace kurtosis for
	// Laplace) and a t-test on the mean, all two-sided at 99%.
	const n, reps = 256, 100
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i % 13)
	}
	for _, b := range []calibrate.Budget{gauss, budgettest.PureDP(0.7)} {
		m, err := New(eye(n), b)
		require.NoError(t, err)
		s := noise.NewSeededInsecure(77)
		var z []float64
		for r := 0; r < reps; r++ {
			y, err := m.Measure(x, s)
			require.NoError(t, err)
			for i := range y {
				z = append(z, y[i]-x[i])
			}
		}
		N := float64(len(z))
		mean, variance := stat.MeanVariance(z, nil)
		v := m.NoiseVariance()
		if b.Noise() == calibrate.Gaussian {
			chi := distuv.ChiSquared{K: N - 1}
			st := (N - 1) * variance / v
			assert.Greater(t, st, chi.Quantile(0.005))
			assert.Less(t, st, chi.Quantile(0.995))
		} else {
			// Laplace: Var(s²) ≈ (μ₄ − v²)/N with μ₄ = 6v² (kurtosis 6).
			zs := (variance - v) / math.Sqrt(5*v*v/N)
			assert.Less(t, math.Abs(zs), 2.5758)
		}
		tt := mean / math.Sqrt(variance/N)
		assert.Less(t, math.Abs(tt), distuv.StudentsT{Mu: 0, Sigma: 1, Nu: N - 1}.Quantile(0.995))
	}
}
