package newton_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/progress"
)

func gram(t *testing.T, name string, n int) *mat.SymDense {
	t.Helper()
	w, err := workload.Builtin(name, n)
	require.NoError(t, err)
	return w.Gram()
}

// checkFeasible asserts the invariants every returned strategy must satisfy:
// unit diagonal to 1e-12, X positive definite, A upper triangular with
// ‖AᵀA − X‖ ≤ 1e-10·‖X‖ (Frobenius).
func checkFeasible(t *testing.T, r *newton.Result) {
	t.Helper()
	n := r.X.SymmetricDim()
	for i := 0; i < n; i++ {
		require.InDelta(t, 1, r.X.At(i, i), 1e-12, "diag(X)[%d]", i)
	}
	var ch mat.Cholesky
	require.True(t, ch.Factorize(r.X), "X must be positive definite")
	var ata mat.Dense
	ata.Mul(r.A.T(), r.A)
	var diff mat.Dense
	diff.Sub(&ata, r.X)
	require.LessOrEqual(t, mat.Norm(&diff, 2), 1e-10*mat.Norm(r.X, 2), "AᵀA = X")
	require.LessOrEqual(t, r.LowerBound, r.Objective*(1+1e-12), "bound ≤ objective")
}

// TestReferenceOptima compares with the certified optima of
// internal/reference (each with its provenance there). The objective is at
// most the certified gap (≤ 1e-8) above the optimum, so it must match to
// 1e-8 relative, plus 1e-12 for the constants' 13-digit rounding.
func TestReferenceOptima(t *testing.T) {
	for _, tc := range []struct {
		workload string
		n        int
		want     float64
	}{
		{"prefix", 32, reference.PrefixN32},
		{"prefix", 64, reference.PrefixN64},
		{"prefix", 256, reference.PrefixN256},
		{"allrange", 256, reference.AllRangeN256},
	} {
		r, err := newton.Solve(context.Background(), gram(t, tc.workload, tc.n), nil)
		require.NoError(t, err)
		t.Logf("%s n=%d: %v", tc.workload, tc.n, r)
		assert.Equal(t, newton.Converged, r.Status)
		assert.InEpsilon(t, tc.want, r.Objective, 1e-8+1e-12)
		assert.LessOrEqual(t, r.Gap, 1e-8)
		checkFeasible(t, r)
		// The independent certificate, recomputed from scratch at the
		// returned X, must agree on the objective and certify the gap too.
		// (The solver may report the bound of an earlier dual point — the
		// fixed-point phase certifies its new X with the previous y — so
		// the two bounds are both valid but need not coincide.)
		obj, bound, err := newton.Certificate(gram(t, tc.workload, tc.n), r.X)
		require.NoError(t, err)
		assert.InEpsilon(t, r.Objective, obj, 1e-10)
		assert.LessOrEqual(t, (obj-bound)/obj, 1e-8)
		assert.LessOrEqual(t, r.LowerBound, obj)
	}
}

// TestIdentityWorkload: for V = I the optimum is X = I with objective n, by
// the arithmetic–harmonic mean inequality on the eigenvalues of X.
func TestIdentityWorkload(t *testing.T) {
	for _, n := range []int{1, 2, 17, 100} {
		r, err := newton.Solve(context.Background(), gram(t, "identity", n), nil)
		require.NoError(t, err)
		require.InDelta(t, float64(n), r.Objective, 1e-12*float64(n))
		require.InDelta(t, float64(n), r.LowerBound, 1e-12*float64(n))
		checkFeasible(t, r)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				require.InDelta(t, want, r.X.At(i, j), 1e-12)
			}
		}
	}
}

// TestSVDBound: the SVD bound (Σσᵢ(W))²/n is a lower bound (Li & Miklau),
// so SVDBound ≤ LowerBound ≤ Objective; for Prefix its value is known in
// closed form from W's singular values σₖ = 1/(2 sin((2k−1)π/(4n+2))).
func TestSVDBound(t *testing.T) {
	n := 64
	r, err := newton.Solve(context.Background(), gram(t, "prefix", n), nil)
	require.NoError(t, err)
	s := 0.0
	for k := 1; k <= n; k++ {
		s += 1 / (2 * math.Sin(float64(2*k-1)*math.Pi/float64(4*n+2)))
	}
	// Each computed eigenvalue is shrunk by E = n·ε·μ_max before its square
	// root (so rounding can never inflate the bound); at n = 64 that lowers
	// √μ of the smallest eigenvalues (≈ 0.25) by about E/(2√μ), a relative
	// 1.5e-11 of the sum. So: never above the closed form beyond rounding
	// (1e-13), and at most 1e-10 below it.
	want := s * s / float64(n)
	assert.LessOrEqual(t, r.SVDBound, want*(1+1e-13))
	assert.GreaterOrEqual(t, r.SVDBound, want*(1-1e-10))
	assert.LessOrEqual(t, r.SVDBound, r.LowerBound)
}

func randomSPD(r *rand.Rand, n, rank int) *mat.SymDense { return newton.RandomLowRank(r, n, rank) }

// randomFeasible returns a random correlation matrix: B·Bᵀ scaled to unit
// diagonal, B with a random column count so conditioning varies widely.
func randomFeasible(r *rand.Rand, n int) *mat.SymDense {
	k := n + r.IntN(3*n)
	b := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			b.Set(i, j, r.NormFloat64())
		}
	}
	x := mat.NewSymDense(n, nil)
	x.SymOuterK(1, b)
	d := make([]float64, n)
	for i := range d {
		d[i] = 1 / math.Sqrt(x.At(i, i))
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x.SetSym(i, j, x.At(i, j)*d[i]*d[j])
		}
		x.SetSym(i, i, 1)
	}
	return x
}

// TestCertificateIsLowerBound is the weak-duality property: for random
// positive (semi)definite V and random feasible X, the bound at X never
// exceeds the optimum, hence never exceeds the objective at the solver's
// optimum nor at X itself.
func TestCertificateIsLowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 60; trial++ {
		n := 2 + r.IntN(30)
		rank := n + r.IntN(n)
		if trial%3 == 0 {
			rank = 1 + r.IntN(n) // rank deficient V
		}
		v := randomSPD(r, n, rank)
		x := randomFeasible(r, n)
		obj, bound, err := newton.Certificate(v, x)
		require.NoError(t, err)
		require.LessOrEqual(t, bound, obj*(1+1e-12), "trial %d", trial)
		if rank >= n {
			opt, err := newton.Solve(context.Background(), v, nil)
			require.NoError(t, err)
			require.LessOrEqual(t, bound, opt.Objective*(1+1e-10), "trial %d: bound at a random X must not exceed the optimum", trial)
			require.LessOrEqual(t, opt.Gap, 1e-8)
			checkFeasible(t, opt)
		}
	}
}

// TestBackendsAgree: the OpenBLAS and pure-Go backends give the same
// optimum to 1e-9 relative (the optimum is unique and well conditioned here;
// each backend converges to gap ≤ 1e-10 so their objectives differ by less).
func TestBackendsAgree(t *testing.T) {
	backends := blas.Backends()
	if len(backends) < 2 {
		t.Skip("only one backend compiled in (purego build)")
	}
	defer blas.Use(blas.Current())
	v := gram(t, "prefix", 48)
	var results []*newton.Result
	for _, b := range backends {
		blas.Use(b)
		r, err := newton.Solve(context.Background(), v, &newton.Options{Tol: 1e-10})
		require.NoError(t, err)
		results = append(results, r)
	}
	a, b := results[0], results[1]
	assert.InEpsilon(t, a.Objective, b.Objective, 1e-9)
	var d mat.Dense
	d.Sub(a.X, b.X)
	assert.Less(t, mat.Norm(&d, math.Inf(1)), 1e-6, "X agrees (X is determined to about √gap)")
}

func TestCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	r, err := newton.Solve(ctx, gram(t, "prefix", 128), &newton.Options{Progress: func(e progress.Event) {
		if !e.Done {
			calls++
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled, "the rule: the best result AND ctx.Err()")
	require.NotNil(t, r)
	require.Equal(t, newton.Cancelled, r.Status)
	require.Equal(t, 1, calls)
	checkFeasible(t, r)
	require.Greater(t, r.Gap, 0.0)
	obj, bound, err := newton.Certificate(gram(t, "prefix", 128), r.X)
	require.NoError(t, err)
	require.InEpsilon(t, r.Objective, obj, 1e-9)
	require.LessOrEqual(t, r.LowerBound, obj*(1+1e-12))
	require.LessOrEqual(t, bound, obj*(1+1e-12))

	// The same rule on the singular path.
	ctx2, cancel2 := context.WithCancel(context.Background())
	v := parsed(t, "wrange:m=256", 128)
	r, err = newton.Solve(ctx2, v, &newton.Options{Progress: func(progress.Event) { cancel2() }})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, r)
	require.Equal(t, newton.Cancelled, r.Status)
	require.Less(t, r.Rank, 128)
	checkPSDStrategy(t, v, r)
	require.LessOrEqual(t, r.LowerBound, r.Objective)
	obj, _, err = newton.Certificate(v, r.X)
	require.NoError(t, err)
	require.InEpsilon(t, r.Objective, obj, 1e-9)
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	nan := mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})
	inf := mat.NewSymDense(2, []float64{1, 0, 0, math.Inf(1)})
	indef := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	zeroCol := mat.NewSymDense(3, []float64{1, 0, 0, 0, 0, 0, 0, 0, 1})
	for name, v := range map[string]*mat.SymDense{"NaN": nan, "Inf": inf, "indefinite": indef, "zero column": zeroCol} {
		_, err := newton.Solve(ctx, v, nil)
		require.ErrorIs(t, err, newton.ErrInput, name)
		t.Logf("%s: %v", name, err)
	}
	_, err := newton.Solve(ctx, nil, nil)
	require.ErrorIs(t, err, newton.ErrInput)
	_, err = newton.Solve(ctx, &mat.SymDense{}, nil)
	require.ErrorIs(t, err, newton.ErrInput)
	_, err = newton.Solve(ctx, mat.NewSymDense(1, []float64{1}), &newton.Options{Method: newton.Method(99)})
	require.ErrorContains(t, err, "unknown method")
	_, err = newton.Solve(ctx, mat.NewSymDense(1, []float64{1}), &newton.Options{Tol: -1})
	require.ErrorIs(t, err, newton.ErrInput)

	// Gram and W files are validated by workload.Load (workload's tests).

	x := mat.NewSymDense(2, []float64{2, 0, 0, 1})
	_, _, err = newton.Certificate(mat.NewSymDense(2, []float64{1, 0, 0, 1}), x)
	require.ErrorContains(t, err, "unit diagonal")
}

// TestCertificateFormula recomputes the bound independently with gonum's
// symmetric eigensolver: y = diag(X⁻¹VX⁻¹), T = tr((D^{1/2}VD^{1/2})^{1/2}),
// bound = T²/Σy (the dual function at its best multiple of y), which is at
// least the unscaled g(y) = 2T − Σy; at X = I with V = I·c it is exact.
func TestCertificateFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 10; trial++ {
		n := 3 + r.IntN(12)
		v := randomSPD(r, n, n+2)
		x := randomFeasible(r, n)
		_, bound, err := newton.Certificate(v, x)
		require.NoError(t, err)

		var xi mat.Dense
		require.NoError(t, xi.Inverse(x))
		var p mat.Dense
		p.Product(&xi, v, &xi)
		sy, T := 0.0, 0.0
		s := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			sy += p.At(i, i)
			for j := i; j < n; j++ {
				s.SetSym(i, j, math.Sqrt(p.At(i, i))*v.At(i, j)*math.Sqrt(p.At(j, j)))
			}
		}
		var eig mat.EigenSym
		require.True(t, eig.Factorize(s, false))
		for _, l := range eig.Values(nil) {
			T += math.Sqrt(math.Max(l, 0))
		}
		assert.InEpsilon(t, T*T/sy, bound, 1e-9, "trial %d", trial)
		assert.GreaterOrEqual(t, bound, 2*T-sy-1e-9*math.Abs(bound))
	}
	c := mat.NewSymDense(4, []float64{3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3})
	obj, bound, err := newton.Certificate(c, gram(t, "identity", 4))
	require.NoError(t, err)
	assert.InDelta(t, 12, obj, 1e-12)
	assert.InDelta(t, 12, bound, 1e-12)
}

// TestRankDeficientWorkload: all ranges of width 8 over 64 cells have rank
// 57 < 64. The solver returns the exact infimum with no regularization,
// certified to 1e-8 on the caller's V and re-certified from scratch; a
// solve with an explicit regularization θ = 1e-6 returns a feasible X too,
// whose raw objective can only be above the infimum.
func TestRankDeficientWorkload(t *testing.T) {
	w, err := workload.Parse("width:k=8", 64)
	require.NoError(t, err)
	r, err := newton.Solve(context.Background(), w.Gram(), nil)
	require.NoError(t, err)
	t.Logf("%v (rank %d)", r, r.Rank)
	require.Equal(t, newton.Converged, r.Status)
	require.Zero(t, r.Regularization)
	require.Equal(t, 57, r.Rank)
	require.LessOrEqual(t, r.Gap, 1e-8)
	checkPSDStrategy(t, w.Gram(), r)
	obj, bound, err := newton.Certificate(w.Gram(), r.X)
	require.NoError(t, err)
	assert.InEpsilon(t, r.Objective, obj, 1e-9)
	assert.LessOrEqual(t, (obj-bound)/obj, 1e-8)

	reg, err := newton.Solve(context.Background(), w.Gram(), &newton.Options{Regularization: 1e-6})
	require.NoError(t, err)
	require.Equal(t, 1e-6, reg.Regularization)
	checkFeasible(t, reg)
	assert.Greater(t, reg.Objective, r.Objective*(1+1e-6), "a regularized X is not the infimum")
	assert.LessOrEqual(t, reg.LowerBound, r.Objective*(1+1e-10))
}

// TestStartDecision: before the fixed-point phase, the certified gap at the
// V^{1/2} start decides. Identity's start is its optimum (X = I, objective
// n): one iteration, certified, no Newton step. Prefix starts 3.5e-3 from
// its optimum (above fpStartGap): the first history entry is the start's
// certified bound with no step taken, and Newton converges from there.
func TestStartDecision(t *testing.T) {
	const n = 96
	r, err := newton.Solve(context.Background(), gram(t, "identity", n), nil)
	require.NoError(t, err)
	require.Equal(t, newton.Converged, r.Status)
	require.Equal(t, 1, r.Iterations)
	require.InEpsilon(t, float64(n), r.Objective, 1e-12, "tr(I·I⁻¹) = n")
	require.LessOrEqual(t, r.Gap, 1e-12)
	checkFeasible(t, r)

	v := gram(t, "prefix", n)
	r, err = newton.Solve(context.Background(), v, nil)
	require.NoError(t, err)
	require.Equal(t, newton.Converged, r.Status)
	first := r.History[0]
	require.Zero(t, first.Step, "no fixed-point step from Prefix's start")
	require.Greater(t, first.Gap, 1.5e-3, "the start's certified gap is what made the decision")
	require.Less(t, first.LowerBound, r.Objective*(1+1e-12), "the start's bound is a valid bound")
	obj, bound, err := newton.Certificate(v, r.X)
	require.NoError(t, err)
	require.InEpsilon(t, r.Objective, obj, 1e-10)
	require.LessOrEqual(t, (obj-bound)/obj, 1e-8)
}

// TestLineSearchInterpolates: Prefix's first Newton step from V^{1/2} is
// too long (F along it is minimal near α = 0.8, where the quadratic
// through F, its slope and F(X+D) puts it), and the line search takes the
// interpolated α instead of the full step: the step recorded is neither 1
// nor a halving, and the solve needs three Newton steps (five history
// entries with the start's and the final certificates) where full steps
// took four.
func TestLineSearchInterpolates(t *testing.T) {
	r, err := newton.Solve(context.Background(), gram(t, "prefix", 256), nil)
	require.NoError(t, err)
	require.Equal(t, newton.Converged, r.Status)
	step := r.History[1].Step
	require.Greater(t, step, 0.6, "the first Newton step's length")
	require.Less(t, step, 0.95, "the first Newton step's length")
	require.NotEqual(t, 0.5, step)
	require.LessOrEqual(t, r.Iterations, 5)
	require.LessOrEqual(t, r.Gap, 1e-8)
}
