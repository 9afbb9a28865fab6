package tables

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
)

// twoStepThreshold against bisection on its defining equation
// Σ dᵢ·max(uᵢ − τ, 0) = total, whatever the hint (below τ*, above it, far
// off, −Inf), and its sort rule alone.
func TestTwoStepThresholdAgainstBisection(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(400)
		u, cls := make([]float64, n), make([]float64, n)
		scale := 0.0
		for i := range u {
			u[i] = rng.NormFloat64() * 10
			if trial%3 == 0 {
				u[i] = math.Exp(rng.NormFloat64() * 6)
			}
			if rng.IntN(4) == 0 {
				cls[i] = 1
			}
			scale = math.Max(scale, math.Abs(u[i]))
		}
		pos, other := math.Exp(rng.NormFloat64()), math.Exp(rng.NormFloat64())
		total := rng.Float64() * 100
		d := func(i int) float64 {
			if cls[i] > 0 {
				return pos
			}
			return other
		}
		phi := func(tau float64) float64 {
			s := 0.0
			for i, x := range u {
				s += d(i) * math.Max(x-tau, 0)
			}
			return s
		}
		lo, hi := -scale-total/math.Min(pos, other)-1, scale
		for i := 0; i < 200; i++ {
			if mid := (lo + hi) / 2; phi(mid) > total {
				lo = mid
			} else {
				hi = mid
			}
		}
		want := (lo + hi) / 2
		// τ to a few ulps of the largest |u| and of total/min d (the
		// scales of the roots' arithmetic).
		tol := 1e-12 * (1 + scale + total/math.Min(pos, other))
		require.InDelta(t, want, twoStepSortThreshold(u, cls, pos, other, total), tol, "trial %d sort", trial)
		for _, hint := range []float64{math.Inf(-1), want - 1, want, want + 1e-9, want + 3, want + 1e6, -1e6} {
			got := twoStepThreshold(u, cls, pos, other, total, make([]float64, n), hint)
			require.InDelta(t, want, got, tol, "trial %d hint %g", trial, hint)
		}
	}
}

// metricInstance is a 9×8×5 histogram (360 cells, a sixth of them
// positive) measured by a Kronecker product of p-identity-like factors
// [I; Θᵢ] with random non-negative Θᵢ (dense, ill-conditioned Grams like
// a kron plan's), with seeded unit Gaussian noise (simulation only).
func metricInstance(t *testing.T, seed uint64) (*histogramLS, *mat.Dense) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	dims := []int{9, 8, 5}
	var fs []*mat.Dense
	var ms []mat.Matrix
	for _, d := range dims {
		p := 2 + rng.IntN(3)
		f := mat.NewDense(d+p, d, nil)
		for j := 0; j < d; j++ {
			f.Set(j, j, 1)
			for i := 0; i < p; i++ {
				f.Set(d+i, j, 3*rng.Float64())
			}
		}
		fs = append(fs, f)
		ms = append(ms, f)
	}
	a, err := kron.New(ms...)
	require.NoError(t, err)
	x := make([]float64, 360)
	for i := range x {
		if rng.IntN(6) == 0 {
			x[i] = float64(1 + rng.IntN(20))
		}
	}
	y, err := a.MulVec(x)
	require.NoError(t, err)
	for i := range y {
		y[i] += rng.NormFloat64()
	}
	p, err := a.PseudoInverse()
	require.NoError(t, err)
	xh, err := p.MulVec(y)
	require.NoError(t, err)
	h := &histogramLS{a: []*kron.Product{a}, w: []float64{1}, y: [][]float64{y}, xhat: [][]float64{xh}}
	h.lsTotal([]*kron.Product{p}, 1)
	return h, denseOf(fs...)
}

// plainFISTA is the reference: FISTA with gradient restarts in the plain
// metric (step 1/L, L the dense λ_max of AᵀA, an exact bound), its
// gradient by the dense matrix, its projection by the sort rule (tested
// against bisection in TestProjectSimplexAgainstBisection), stopping when
// a step moves no cell by more than tol — the estimator before the
// variable metric, on a different route.
func plainFISTA(h *histogramLS, a *mat.Dense, tol float64, maxIter int) ([]float64, int) {
	var g mat.SymDense
	g.SymOuterK(1, a.T())
	var eig mat.EigenSym
	if !eig.Factorize(&g, false) {
		panic("eigen")
	}
	vals := eig.Values(nil)
	lip := vals[len(vals)-1]
	n := g.SymmetricDim()
	yv := mat.NewVecDense(len(h.y[0]), h.y[0])
	var bv mat.VecDense
	bv.MulVec(a.T(), yv)
	work := make([]float64, n)
	proj := func(v []float64) []float64 {
		tau := sortThreshold(v, h.total, work)
		out := make([]float64, n)
		for i, x := range v {
			out[i] = math.Max(x-tau, 0)
		}
		return out
	}
	x := proj(h.xhat[0])
	z := append([]float64(nil), x...)
	t := 1.0
	for it := 1; it <= maxIter; it++ {
		var gz mat.VecDense
		gz.MulVec(&g, mat.NewVecDense(n, z))
		v := make([]float64, n)
		for i := range v {
			v[i] = z[i] - (gz.AtVec(i)-bv.AtVec(i))/lip
		}
		xn := proj(v)
		step, dir := 0.0, 0.0
		for i := range xn {
			step = math.Max(step, math.Abs(xn[i]-z[i]))
			dir -= (xn[i] - z[i]) * (xn[i] - x[i])
		}
		if step <= tol {
			return xn, it
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		beta := (t - 1) / tn
		if dir > 0 {
			tn, beta = 1, 0
		}
		for i := range z {
			z[i] = xn[i] + beta*(xn[i]-x[i])
		}
		x, t = xn, tn
	}
	return x, maxIter
}

// The variable-metric estimator reaches the optimum the plain FISTA
// reference reaches run to a much tighter tolerance (objective to 1e-9
// relative: both stop where no cell moves by 1e-11, and the objective's
// error is second order in that), satisfies the KKT conditions densely (a
// gradient constant, μ, on the positive cells and ≥ μ on the zero ones,
// to 1e-6 of the gradient's scale), and at the default tolerance stops no
// higher than the reference at the same tolerance.
func TestNNLSVariableMetricMatchesPlainFISTA(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h, a := metricInstance(t, seed)
		neg := 0
		for _, v := range h.xhat[0] {
			if v < 0 {
				neg++
			}
		}
		require.Greater(t, neg, 50, "the instance must make the least-squares histogram negative")
		dense := []*mat.Dense{a}
		nr, err := h.nnls(context.Background(), h.xhat[0], NNLSOptions{Tol: 1e-11, MaxIter: 1000000})
		require.NoError(t, err)
		require.True(t, nr.converged)
		ref, refIt := plainFISTA(h, a, 1e-11, 1000000)
		f, g := nnlsObjective(h, dense, nr.x)
		fRef, _ := nnlsObjective(h, dense, ref)
		t.Logf("seed %d: variable metric %d iterations, objective %.12g; plain FISTA %d iterations, %.12g", seed, nr.iterations, f, refIt, fRef)
		assert.InDelta(t, fRef, f, 1e-9*math.Abs(fRef))
		s, mu, np, scale := 0.0, 0.0, 0, 0.0
		for i, v := range nr.x {
			require.GreaterOrEqual(t, v, 0.0)
			s += v
			scale = math.Max(scale, math.Abs(g[i]))
			if v > 1e-7 {
				mu += g[i]
				np++
			}
		}
		require.InDelta(t, h.total, s, 1e-9*h.total)
		mu /= float64(np)
		for i, v := range nr.x {
			if v > 1e-7 {
				assert.InDelta(t, mu, g[i], 1e-6*scale, "seed %d: positive cell %d", seed, i)
			} else {
				assert.GreaterOrEqual(t, g[i], mu-1e-6*scale, "seed %d: zero cell %d", seed, i)
			}
		}
		def, err := h.nnls(context.Background(), h.xhat[0], NNLSOptions{})
		require.NoError(t, err)
		refDef, refDefIt := plainFISTA(h, a, 1e-3, 3000)
		fDef, _ := nnlsObjective(h, dense, def.x)
		fRefDef, _ := nnlsObjective(h, dense, refDef)
		t.Logf("seed %d at tolerance 1e-3: variable metric %d iterations, %.4f above the optimum; plain %d, %.4f above", seed, def.iterations, fDef-fRef, refDefIt, fRefDef-fRef)
		assert.LessOrEqual(t, fDef, fRefDef)
	}
}

// The estimator is deterministic: two runs give bit-identical histograms.
func TestNNLSDeterministic(t *testing.T) {
	h, _ := metricInstance(t, 4)
	a, err := h.nnls(context.Background(), h.xhat[0], NNLSOptions{})
	require.NoError(t, err)
	b, err := h.nnls(context.Background(), h.xhat[0], NNLSOptions{})
	require.NoError(t, err)
	require.Equal(t, a.iterations, b.iterations)
	for i := range a.x {
		require.Equal(t, math.Float64bits(a.x[i]), math.Float64bits(b.x[i]), "cell %d", i)
	}
}
