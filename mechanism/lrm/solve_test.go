package lrm

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/accounting"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

func mustMatrix(t *testing.T, w workload.Explicit, err error) *mat.Dense {
	t.Helper()
	require.NoError(t, err)
	return w.Matrix()
}

// singularValues returns the singular values of a, computed independently of
// Solve's own SVD path (values only).
func singularValues(t *testing.T, a mat.Matrix) []float64 {
	t.Helper()
	var svd mat.SVD
	require.True(t, svd.Factorize(a, mat.SVDNone))
	return svd.Values(nil)
}

// checkResult verifies a converged run from scratch: the residual and the
// objective recomputed from the returned B and L, every column of L inside
// its ball, and the objective between the seed's SVD upper bound and the SVD
// lower bound of the matrix it actually factors.
func checkResult(t *testing.T, name string, w *mat.Dense, res *Result, ball ball) {
	t.Helper()
	m, n := w.Dims()
	r := res.Rank
	require.Equal(t, ball, res.ball, name)
	if res.Identity {
		// Only when Identity beats (or ties to 1e-9) both the optimizer and
		// the SVD decomposition; it is returned exactly.
		require.Equal(t, n, r, name)
		require.GreaterOrEqual(t, res.SVDObjective, (1-1e-9)*res.FrobeniusW2, name)
		require.Equal(t, status.Converged, res.Status, name)
		require.True(t, mat.Equal(w, res.B), name)
		var id mat.Dense
		id.Mul(res.L, res.L.T())
		require.True(t, mat.Equal(&id, res.L), "%s: L must be the identity", name)
		require.Equal(t, res.FrobeniusW2, res.Objective, name)
		require.Equal(t, 1.0, res.Sensitivity, name)
		require.Zero(t, res.Residual, name)
		return
	}
	require.Equal(t, []int{m, r}, dims(res.B), name)
	// Never worse than Identity, which Solve would have returned.
	require.LessOrEqual(t, res.Objective, res.FrobeniusW2, name)
	require.Equal(t, []int{r, n}, dims(res.L), name)
	if !res.PIdentity {
		// (The exact p-Identity start is returned also when a capped
		// iteration from it did not converge.)
		require.Equal(t, status.Converged, res.Status, name)
		require.LessOrEqual(t, res.ALResidual, 1e-3, "%s: the iteration itself must converge", name)
	}
	if res.Fallback {
		// Only when the exact SVD decomposition is at least as good as what
		// the optimizer found (e.g. W = I, where it is optimal).
		require.GreaterOrEqual(t, res.RelaxedObjective, (1-5e-3)*res.SVDObjective, name)
		require.InDelta(t, res.SVDObjective, res.Objective, 1e-9*res.Objective, name)
	} else if res.PIdentity {
		// Only when the exact p-Identity start was at least as good as the
		// iteration's polished result; it is returned as is.
		require.Equal(t, StartPIdentity, res.Start, name)
		require.InDelta(t, res.PIdentityObjective, res.Objective, 1e-9*res.Objective, name)
	} else {
		require.True(t, res.Polished, name)
		// Polishing changes Φ by a relative O(residual) (measured ≤ 4%).
		require.InDelta(t, res.RelaxedObjective, res.Objective, 0.1*res.Objective, name)
	}

	var bl, d mat.Dense
	bl.Mul(res.B, res.L)
	d.Sub(w, &bl)
	resid := mat.Norm(&d, 2) / mat.Norm(w, 2)
	// The returned pair is exact (polished or the SVD fallback) to rounding.
	require.LessOrEqual(t, resid, 1e-12, "%s: ‖W − BL‖_F/‖W‖_F", name)
	require.InDelta(t, resid, res.Residual, 1e-14, name)

	nb := mat.Norm(res.B, 2)
	require.InDelta(t, nb*nb, res.Objective, 1e-9*res.Objective, "%s: objective = tr(BᵀB)", name)

	col := make([]float64, r)
	var maxNorm float64
	for j := 0; j < n; j++ {
		mat.Col(col, j, res.L)
		var s float64
		for _, x := range col {
			if ball == l1 {
				s += math.Abs(x)
			} else {
				s += x * x
			}
		}
		if ball == l2 {
			s = math.Sqrt(s)
		}
		require.LessOrEqual(t, s, 1+1e-12, "%s: column %d of L outside the %v ball", name, j, ball)
		maxNorm = math.Max(maxNorm, s)
	}
	require.InDelta(t, maxNorm, res.Sensitivity, 1e-15, name)

	// Up to rounding in the last bits (both sides are sums of squares
	// computed along different paths).
	require.LessOrEqual(t, res.Objective, res.Bounds.SVDUpper*(1+1e-12), "%s: above the seed's SVD upper bound", name)
	require.LessOrEqual(t, res.Objective, res.SVDObjective*(1+1e-12), "%s: above the exact SVD decomposition", name)
	// The SVD bound holds for every exact decomposition of BL (and Δ ≤ 1),
	// so it is a proven lower bound for what was actually computed.
	var s1 float64
	for _, s := range singularValues(t, &bl) {
		s1 += s
	}
	require.GreaterOrEqual(t, res.Objective, (1-1e-9)*s1*s1/float64(n), "%s: below the SVD lower bound of BL", name)
	require.GreaterOrEqual(t, res.Objective, (1-1e-9)*res.Bounds.Lower, name)
}

func dims(a *mat.Dense) []int {
	r, c := a.Dims()
	return []int{r, c}
}

func TestSolveConvergedRunsSatisfyConstraintsAndBounds(t *testing.T) {
	id, err := workload.NewIdentity(32)
	wID := mustMatrix(t, id, err)
	pf, err := workload.NewPrefix(48)
	wPrefix := mustMatrix(t, pf, err)
	rg, err := workload.NewWRange(64, 48, 3)
	wRange := mustMatrix(t, rg, err)
	rl, err := workload.NewWRelated(96, 64, 12, 4)
	wRel := mustMatrix(t, rl, err)
	ds, err := workload.NewWDiscrete(40, 60, 0.1, 0.1, 5)
	wDisc := mustMatrix(t, ds, err)
	tot, err := workload.NewTotal(30)
	wTot := mustMatrix(t, tot, err)
	cases := []struct {
		name string
		w    *mat.Dense
	}{
		{"identity", wID}, {"prefix", wPrefix}, {"wrange", wRange},
		{"wrelated", wRel}, {"wdiscrete", wDisc}, {"total", wTot},
	}
	for _, ball := range []ball{l1, l2} {
		for _, c := range cases {
			res, err := Solve(context.Background(), c.w, &Options{Noise: ball.noise()})
			require.NoError(t, err, c.name)
			checkResult(t, c.name+"/"+ball.String(), c.w, res, ball)
			t.Logf("%s/%v: Φ/‖W‖² = %.4f, lower/Φ = %.3f, residual %.1e, %d outer, %d L-steps",
				c.name, ball, res.Objective/res.FrobeniusW2, res.Bounds.Lower/res.Objective,
				res.Residual, res.Iterations, res.InnerIterations)
		}
	}
}

func TestSeedBoundsAgainstClosedFormsAndAccounting(t *testing.T) {
	// W = diag(3, 4): k = 2, Σλ² = 25, Σλ = 7.
	w := mat.NewDense(2, 2, []float64{3, 0, 0, 4})
	b := seedBounds([]float64{4, 3}, 2, l1)
	assert.InDelta(t, 2*25.0, b.SVDUpper, 1e-12) // k·Σλ²
	assert.InDelta(t, 49.0/2, b.Lower, 1e-12)    // (Σλ)²/n
	// (2²/2!·3·4)^{2/2}·2³ = 24·8.
	assert.InDelta(t, 192.0, b.HardtTalwar, 1e-9)
	assert.InDelta(t, 25.0, seedBounds([]float64{4, 3}, 2, l2).SVDUpper, 1e-12)

	// The optimum is Φ = 25 for both balls (L = I; for ℓ2 the diagonal V
	// makes X = I optimal, and ℓ1 ≥ ℓ2 with L = I feasible for both).
	for _, ball := range []ball{l1, l2} {
		res, err := Solve(context.Background(), w, &Options{Noise: ball.noise()})
		require.NoError(t, err)
		checkResult(t, "diag", w, res, ball)
		assert.InDelta(t, 25, res.Objective, 25*1e-9, ball.String())
		assert.InDelta(t, 25, res.RelaxedObjective, 25*2e-3, ball.String())
	}

	// The Total query: the SVD lower bound (√n)²/n = 1 is attained (L = 1ᵀ).
	tot, err := workload.NewTotal(50)
	wt := mustMatrix(t, tot, err)
	res, err := Solve(context.Background(), wt, nil)
	require.NoError(t, err)
	checkResult(t, "total", wt, res, l1)
	assert.InDelta(t, 1, res.Objective, 1e-9)
	assert.InDelta(t, 1, res.RelaxedObjective, 2e-3)
	assert.Equal(t, 1, res.WorkloadRank)
	assert.Equal(t, 2, res.Rank) // ⌈1.2·1⌉

	// The lower bound agrees with package accounting's independent SVD bound
	// (eigenvalues of the Gram rather than singular values of W).
	pf, err := workload.NewPrefix(40)
	wp := mustMatrix(t, pf, err)
	res, err = Solve(context.Background(), wp, nil)
	require.NoError(t, err)
	want, err := accounting.SVDBound(pf.Gram())
	require.NoError(t, err)
	assert.InDelta(t, want, res.Bounds.Lower, 1e-9*want)
	assert.InDelta(t, mat.Norm(wp, 2)*mat.Norm(wp, 2), res.FrobeniusW2, 1e-9)
}

// For the ℓ2 ball with r ≥ n the problem is the (ε,δ) matrix-mechanism
// problem min tr(V X⁻¹), diag X ≤ 1, which package newton solves with a
// duality certificate: an independent reference for the optimizer.
func TestSolveL2MatchesCertifiedNewtonOptimum(t *testing.T) {
	for _, n := range []int{32, 64} {
		pf, err := workload.NewPrefix(n)
		w := mustMatrix(t, pf, err)
		res, err := Solve(context.Background(), w, &Options{Noise: calibrate.Gaussian})
		require.NoError(t, err)
		checkResult(t, "prefix/l2", w, res, l2)
		nr, err := newton.Solve(context.Background(), pf.Gram(), nil)
		require.NoError(t, err)
		if n == 32 {
			// The certified reference optimum (internal/reference); newton
			// certifies a relative gap ≤ 1e-8, so the objective is within
			// 1e-8 of it.
			require.InEpsilon(t, reference.PrefixN32, nr.Objective, 1e-8)
		}
		// Never below the certified optimum of the matrix BL actually
		// factored (Φ ≥ tr(V' X⁻¹) ≥ newton's bound for V' = (BL)ᵀBL).
		var bl mat.Dense
		bl.Mul(res.B, res.L)
		var vbl mat.SymDense
		vbl.SymOuterK(1, bl.T())
		nb, err := newton.Solve(context.Background(), &vbl, nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, res.Objective, nb.LowerBound*(1-1e-9))
		// And close to the optimum: the first-order method ends within 1%
		// (measured 0.09% at n = 32, 0.23% at n = 64).
		require.LessOrEqual(t, res.Objective, 1.01*nr.Objective, "n=%d", n)
		t.Logf("prefix n=%d: ℓ2 LRM Φ = %.6f, certified optimum %.6f (+%.3f%%)", n, res.Objective, nr.Objective, 100*(res.Objective/nr.Objective-1))
	}
}

// For W = I the optimum is Φ = n (the SVD bound (Σσ)²/n = n is attained by
// Identity). The returned pair cannot be worse than Identity by
// construction (Solve's safeguard), so the test checks what can fail: the
// augmented-Lagrangian iteration's own result, before any safeguard, ends
// within 10% of the optimum, and the expected error is computed for the
// pair actually returned (2Φ/ε² with Φ = n).
func TestIdentityWorkloadIterationNearOptimum(t *testing.T) {
	for _, n := range []int{64, 128} {
		id, err := workload.NewIdentity(n)
		w := mustMatrix(t, id, err)
		// The SVD start, so that the iteration runs (the default p-Identity
		// start is exact and returned without iterating).
		res, err := Solve(context.Background(), w, &Options{Start: StartSVD})
		require.NoError(t, err)
		checkResult(t, "identity", w, res, l1)
		require.Positive(t, res.Iterations, "n=%d: the iteration ran", n)
		require.LessOrEqual(t, res.RelaxedObjective, 1.1*float64(n), "n=%d: the iteration's own Φ", n)
		bud := budgettest.PureDP(0.5)
		got, err := res.ExpectedNoiseError(bud)
		require.NoError(t, err)
		want := 2 * res.Objective / (bud.Epsilon() * bud.Epsilon()) // Laplace variance 2b², b = Δ₁/ε, Δ₁ = 1
		require.InEpsilon(t, want*res.Sensitivity*res.Sensitivity, got, 1e-12)
		require.InEpsilon(t, float64(n), res.Objective, 1e-9, "n=%d: the optimum", n)
	}
}

// wrelatedErrors solves WRelated(n, m = n, s) and returns LRM's expected
// error with those of Identity, H2 and Haar wavelet under the same noise
// (package accounting, independent code).
func wrelatedErrors(t *testing.T, n, s int, ball ball) (lrm, identity, h2, wavelet float64) {
	t.Helper()
	wl, err := workload.NewWRelated(n, n, s, 11)
	require.NoError(t, err)
	w := wl.Matrix()
	res, err := Solve(context.Background(), w, &Options{Noise: ball.noise()})
	require.NoError(t, err)
	checkResult(t, "wrelated", w, res, ball)
	var nz accounting.Noise
	bud := budgettest.PureDP(1)
	if ball == l1 {
		nz, err = accounting.LaplaceNoise(1)
	} else {
		bud = budgettest.ApproxDP(1, 1e-6)
		nz, err = accounting.GaussianNoise(1, 1e-6, accounting.Analytic)
	}
	require.NoError(t, err)
	lrm, err = res.ExpectedNoiseError(bud)
	require.NoError(t, err)
	v := wl.Gram()
	eval := func(st strategy.Matrix, err error) float64 {
		require.NoError(t, err)
		rep, err := accounting.Evaluate(v, n, st, nz)
		require.NoError(t, err)
		return rep.TotalError
	}
	identity = eval(strategy.NewIdentity(n))
	h2 = eval(strategy.NewH2(n))
	wavelet = eval(strategy.NewWavelet(n))
	return
}

func TestWRelatedAgainstBaselines(t *testing.T) {
	for _, n := range []int{128, 256} {
		// s = n/8, the setting. ε-DP: far below H2 and the wavelet
		// (measured 25–35× and 14–19×). Identity's Laplace error is NOT 5×
		// above the optimizer's here (measured ratio 0.91 at n = 128, 0.51
		// at 256): a
		// rank-s Gaussian workload costs an ε-DP factorization about s³ per
		// query (s base queries with column ℓ1 norms ≈ s), Identity n·s, so
		// LRM wins only for s ≲ √n — checked below with s = ⌈√n/4⌉.
		// The optimizer's own result is above Identity (by 1.1× at n = 128,
		// 2× at 256), so Solve returns Identity: never worse than it.
		s := n / 8
		l, id, h2, wav := wrelatedErrors(t, n, s, l1)
		assert.InDelta(t, 1, id/l, 1e-9, "n=%d: ε-DP LRM at s = n/8 returns Identity", n)
		assert.Less(t, l, h2, "n=%d: LRM vs H2 (ε-DP)", n)
		assert.Less(t, l, wav, "n=%d: LRM vs wavelet (ε-DP)", n)
		t.Logf("n=%d s=%d ε-DP: identity/LRM %.2f, H2/LRM %.1f, wavelet/LRM %.1f", n, s, id/l, h2/l, wav/l)

		// (ε,δ)-DP (ℓ2 ball, Gaussian): at least 5× below Identity, and
		// below H2 and wavelet (measured 5.9× and 6.7× below Identity).
		l, id, h2, wav = wrelatedErrors(t, n, s, l2)
		assert.GreaterOrEqual(t, id/l, 5.0, "n=%d: (ε,δ) LRM vs Identity", n)
		assert.Less(t, l, h2, "n=%d", n)
		assert.Less(t, l, wav, "n=%d", n)
		t.Logf("n=%d s=%d (ε,δ)-DP: identity/LRM %.2f, H2/LRM %.1f, wavelet/LRM %.1f", n, s, id/l, h2/l, wav/l)

		// Few base queries (the seed's low-rank regime): ε-DP at least 5×
		// below Identity (measured 6.5× at n = 128, s = 3; 9.0× at 256, s = 4).
		s = int(math.Ceil(math.Sqrt(float64(n)) / 4))
		l, id, h2, wav = wrelatedErrors(t, n, s, l1)
		assert.GreaterOrEqual(t, id/l, 5.0, "n=%d s=%d: ε-DP LRM vs Identity", n, s)
		assert.Less(t, l, h2)
		assert.Less(t, l, wav)
		t.Logf("n=%d s=%d ε-DP: identity/LRM %.2f, H2/LRM %.1f, wavelet/LRM %.1f", n, s, id/l, h2/l, wav/l)
	}
}

func TestSolveIsDeterministic(t *testing.T) {
	rg, err := workload.NewWRange(40, 40, 9)
	w := mustMatrix(t, rg, err)
	a, err := Solve(context.Background(), w, &Options{Seed: 5})
	require.NoError(t, err)
	b, err := Solve(context.Background(), w, &Options{Seed: 5})
	require.NoError(t, err)
	require.True(t, mat.Equal(a.B, b.B))
	require.True(t, mat.Equal(a.L, b.L))
	require.Equal(t, a.InnerIterations, b.InnerIterations)
	c, err := Solve(context.Background(), w, &Options{Seed: 6})
	require.NoError(t, err)
	checkResult(t, "seed 6", w, c, l1)
}

func TestSolveOptionsAndProgress(t *testing.T) {
	pf, err := workload.NewPrefix(24)
	w := mustMatrix(t, pf, err)
	var its []Iteration
	// outerIters keeps the events that end an outer iteration (their
	// Detail is the Iteration).
	outerIters := func(e progress.Event) {
		if it, ok := e.Detail.(Iteration); ok {
			its = append(its, it)
		}
	}
	res, err := Solve(context.Background(), w, &Options{Start: StartSVD, Rank: 30, Progress: outerIters})
	require.NoError(t, err)
	assert.Equal(t, 30, res.Rank)
	assert.Equal(t, 24, res.WorkloadRank)
	require.Len(t, its, res.Iterations)
	assert.Equal(t, res.InnerIterations, its[len(its)-1].Inner)
	assert.LessOrEqual(t, its[len(its)-1].Residual, 1e-3)

	// In-progress events come every StepProgressEvery L-steps, in order,
	// within the outer iteration that runs them.
	var steps, outers []int
	res, err = Solve(context.Background(), w, &Options{
		Start: StartSVD,
		Progress: func(e progress.Event) {
			if e.Detail == nil && !e.Done {
				assert.False(t, progress.Known(e.Objective), "no objective inside an outer iteration")
				outers, steps = append(outers, e.Step), append(steps, e.Inner)
			}
		},
	})
	require.NoError(t, err)
	require.NotEmpty(t, steps)
	for i, n := range steps {
		assert.Zero(t, n%StepProgressEvery, n)
		assert.Less(t, n, res.InnerIterations)
		if i > 0 {
			assert.Greater(t, n, steps[i-1])
			assert.GreaterOrEqual(t, outers[i], outers[i-1])
		}
		assert.LessOrEqual(t, outers[i], res.Iterations)
	}
	assert.Equal(t, 1, outers[0])

	// An iteration cap too small to converge returns the better of the two
	// exact safeguards, flagged: for Prefix, Identity (Φ = ‖W‖²_F = 300)
	// beats the scaled SVD decomposition (Φ ≈ 5954) ...
	capped := &Options{Start: StartSVD, MaxOuter: 1, MaxInner: 1, FirstInner: 1}
	res, err = Solve(context.Background(), w, capped)
	require.NoError(t, err)
	assert.Equal(t, status.IterationLimit, res.Status)
	assert.Greater(t, res.ALResidual, 1e-3)
	require.Less(t, res.FrobeniusW2, res.SVDObjective)
	assert.True(t, res.Identity)
	assert.False(t, res.Fallback)
	assert.Equal(t, 24, res.Rank)
	assert.Equal(t, res.FrobeniusW2, res.Objective)
	assert.Zero(t, res.Residual)
	assert.Equal(t, 1.0, res.Sensitivity)

	// ... and for a low-rank workload the SVD decomposition beats Identity.
	rl, err := workload.NewWRelated(64, 48, 3, 2)
	w = mustMatrix(t, rl, err)
	res, err = Solve(context.Background(), w, capped)
	require.NoError(t, err)
	assert.Equal(t, status.IterationLimit, res.Status)
	require.Less(t, res.SVDObjective, res.FrobeniusW2)
	assert.True(t, res.Fallback)
	assert.False(t, res.Identity)
	assert.InDelta(t, res.SVDObjective, res.Objective, 1e-9*res.Objective)
	assert.Less(t, res.Residual, 1e-12)
	assert.LessOrEqual(t, res.Objective, res.Bounds.SVDUpper)
	assert.LessOrEqual(t, res.Sensitivity, 1+1e-12)
}

// The problem scales as Φ(cW) = c²·Φ(W) (B scales, L does not), and Solve
// normalizes W, so extreme but representable scales give the same L. c is a
// power of two so that scaling is exact in floating point: the iteration is
// non-convex and a rounding-level change of its input can lead it to a
// different local optimum.
func TestSolveScaleInvariance(t *testing.T) {
	rg, err := workload.NewWRange(24, 30, 8)
	w := mustMatrix(t, rg, err)
	a, err := Solve(context.Background(), w, nil)
	require.NoError(t, err)
	for _, c := range []float64{0x1p-300, 0x1p300} {
		wc := mat.DenseCopyOf(w)
		wc.Scale(c, wc)
		b, err := Solve(context.Background(), wc, nil)
		require.NoError(t, err)
		checkResult(t, "scaled", wc, b, l1)
		assert.InDelta(t, 1, b.Objective/(c*c*a.Objective), 1e-9)
		assert.True(t, mat.EqualApprox(a.L, b.L, 1e-9))
	}
}

// Cancellation returns the best exact decomposition so far AND ctx.Err()
// (dpsolve's one rule, as newton): before the start, during the p-Identity
// start, and in the middle of the iteration. The returned pair must be an
// exact W = BL (relative residual ≤ 1e-12, far below any iterate's) and say
// it did not converge.
func TestSolveCancelled(t *testing.T) {
	pf, err := workload.NewPrefix(32)
	w := mustMatrix(t, pf, err)
	exact := func(name string, res *Result, err error) {
		t.Helper()
		require.True(t, errors.Is(err, context.Canceled), "%s: got %v", name, err)
		require.NotNil(t, res, name)
		assert.Equal(t, status.Cancelled, res.Status, name)
		var bl mat.Dense
		bl.Mul(res.B, res.L)
		bl.Sub(w, &bl)
		assert.LessOrEqual(t, mat.Norm(&bl, 2)/mat.Norm(w, 2), 1e-12, name)
		assert.Equal(t, sensitivity(res.L, res.ball), res.Sensitivity, name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Solve(ctx, w, nil)
	exact("before the start", res, err)
	res, err = Solve(ctx, w, &Options{Start: StartPIdentity, Rank: 40})
	exact("p-Identity start", res, err)

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	res, err = Solve(ctx, w, &Options{Noise: calibrate.Gaussian, Progress: func(e progress.Event) {
		if _, ok := e.Detail.(Iteration); ok && e.Step == 2 {
			cancel()
		}
	}})
	exact("mid-iteration", res, err)
	assert.GreaterOrEqual(t, res.Iterations, 2)
}

func TestSolveBadInput(t *testing.T) {
	ctx := context.Background()
	good := mat.NewDense(2, 3, []float64{1, 0, 1, 0, 1, 1})
	nan := mat.NewDense(2, 2, []float64{1, math.NaN(), 0, 1})
	inf := mat.NewDense(2, 2, []float64{1, 0, math.Inf(-1), 1})
	zero := mat.NewDense(3, 4, nil)
	cases := []struct {
		name string
		w    *mat.Dense
		opt  *Options
		want string
	}{
		{"nil W", nil, nil, "empty workload"},
		{"empty W", &mat.Dense{}, nil, "empty workload"},
		{"NaN", nan, nil, "not finite"},
		{"Inf", inf, nil, "not finite"},
		{"rank 0", zero, nil, "rank 0"},
		{"too small", mat.NewDense(1, 2, []float64{1e-200, 0}), nil, "too small"},
		{"too large", mat.NewDense(1, 2, []float64{0, 1e200}), nil, "too large"},
		{"rank below rank(W)", good, &Options{Rank: 1}, "below rank(W)"},
		{"unknown noise", good, &Options{Noise: "pure"}, "unknown noise"},
		{"negative tol", good, &Options{Tol: -1}, "tolerance"},
		{"tol ≥ 1", good, &Options{Tol: 1}, "tolerance"},
		{"NaN beta", good, &Options{Beta0: math.NaN()}, "initial penalty"},
		{"rank factor < 1", good, &Options{RankFactor: 0.5}, "rank factor"},
		{"growth < 1", good, &Options{BetaGrowth: 0.5}, "penalty growth"},
		{"negative cap", good, &Options{MaxOuter: -1}, "negative"},
	}
	for _, c := range cases {
		res, err := Solve(ctx, c.w, c.opt)
		require.Error(t, err, c.name)
		assert.Nil(t, res, c.name)
		assert.ErrorIs(t, err, ErrInput, c.name)
		assert.Contains(t, err.Error(), c.want, c.name) // the message names the offending option in words, not its Go field
	}
}

func TestGramFactor(t *testing.T) {
	rg, err := workload.NewWRange(30, 80, 4)
	require.NoError(t, err)
	w := rg.Matrix()
	f, err := GramFactor(rg.Gram())
	require.NoError(t, err)
	var ftf, wtw mat.Dense
	ftf.Mul(f.T(), f)
	wtw.Mul(w.T(), w)
	require.True(t, mat.EqualApprox(&ftf, &wtw, 1e-9*mat.Norm(&wtw, 2)))
	// The same problem: W and F have the same bounds, and an L found for F
	// serves W with the same objective (W = QF, so W·L⁺ = Q·F·L⁺).
	a, err := Solve(context.Background(), w, nil)
	require.NoError(t, err)
	b, err := Solve(context.Background(), f, nil)
	require.NoError(t, err)
	checkResult(t, "from W", w, a, l1)
	checkResult(t, "from F", f, b, l1)
	assert.Equal(t, a.WorkloadRank, b.WorkloadRank)
	assert.InDelta(t, a.Bounds.Lower, b.Bounds.Lower, 1e-9*a.Bounds.Lower)
	assert.InDelta(t, a.Bounds.SVDUpper, b.Bounds.SVDUpper, 1e-9*a.Bounds.SVDUpper)
	require.GreaterOrEqual(t, b.Rank, 30) // r ≥ n: L has full column rank
	var ltl mat.SymDense
	ltl.SymOuterK(1, b.L.T())
	var ch mat.Cholesky
	require.True(t, ch.Factorize(&ltl))
	var x, bw, d mat.Dense
	require.NoError(t, ch.SolveTo(&x, w.T())) // (LᵀL)⁻¹Wᵀ
	bw.Mul(x.T(), b.L.T())                    // W(LᵀL)⁻¹Lᵀ = W·L⁺
	d.Mul(&bw, b.L)
	d.Sub(w, &d)
	assert.Less(t, mat.Norm(&d, 2), 1e-9*mat.Norm(w, 2))
	nb := mat.Norm(&bw, 2)
	assert.InDelta(t, b.Objective, nb*nb, 1e-8*b.Objective)

	_, err = GramFactor(nil)
	require.Error(t, err)
	_, err = GramFactor(mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1}))
	require.Error(t, err)
	_, err = GramFactor(mat.NewSymDense(2, []float64{1, 0, 0, -1}))
	require.ErrorIs(t, err, ErrInput, "not positive semidefinite")
	_, err = GramFactor(mat.NewSymDense(2, nil))
	require.ErrorIs(t, err, ErrInput, "rank 0")
}
