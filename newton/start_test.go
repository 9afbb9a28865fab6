package newton_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/newton"
)

// TestStartAtOptimum: a warm start from a certified optimum converges in at
// most 2 iterations (the fixed-point phase's first dual point already
// certifies it, or one Newton step does) to the same certified optimum: both
// objectives are within the certified gap of each other (tol 1e-12 relative,
// the block tolerance mechanism/plan asks for). The reference is the
// duality certificate of the cold solve, which bounds every strategy's
// objective from below.
func TestStartAtOptimum(t *testing.T) {
	const tol = 1e-12
	for _, spec := range []string{"prefix", "allrange", "wrange:m=200"} {
		v := parsed(t, spec, 96)
		cold, err := newton.Solve(context.Background(), v, &newton.Options{Tol: tol})
		require.NoError(t, err)
		require.Equal(t, newton.Converged, cold.Status, spec)
		x0 := mat.NewSymDense(cold.X.SymmetricDim(), nil)
		x0.CopySym(cold.X)
		warm, err := newton.Solve(context.Background(), v, &newton.Options{Tol: tol, Start: cold.X})
		require.NoError(t, err)
		require.Equal(t, newton.Converged, warm.Status, spec)
		t.Logf("%s: cold %d iterations, warm %d", spec, cold.Iterations, warm.Iterations)
		require.LessOrEqual(t, warm.Iterations, 2, spec)
		require.LessOrEqual(t, warm.Gap, tol, spec)
		// Each objective is at least the other's certified bound, up to
		// the rounding of evaluating either (a few n·ε ≈ 2e-14 relative at
		// n = 96; observed 1.2e-15 with the pure-Go kernels).
		require.GreaterOrEqual(t, warm.Objective, cold.LowerBound*(1-1e-13), spec)
		require.GreaterOrEqual(t, cold.Objective, warm.LowerBound*(1-1e-13), spec)
		require.InDelta(t, cold.Objective, warm.Objective, tol*cold.Objective, spec)
		// The caller's start is read, never written.
		require.True(t, mat.Equal(x0, cold.X), spec)
	}
}

// TestStartNearby: block coordinate descent's case — the start is the
// optimum of a nearby Gram (V₂ = V₁ + 5% of another workload's Gram). The
// warm solve is certified to the tolerance on V₂, agrees with V₂'s cold solve
// within the certified gaps, and takes no more iterations than it.
func TestStartNearby(t *testing.T) {
	const tol = 1e-12
	n := 80
	v1 := parsed(t, "prefix", n)
	v2 := mat.NewSymDense(n, nil)
	v2.AddSym(v1, scaledSym(parsed(t, "allrange", n), 0.05*mat.Trace(v1)/mat.Trace(parsed(t, "allrange", n))))
	s := newton.NewSolver(&newton.Options{Tol: tol})
	var r1, cold, warm newton.Result
	require.NoError(t, s.Solve(context.Background(), v1, &r1))
	require.NoError(t, s.Solve(context.Background(), v2, &cold))
	s.Options.Start = r1.X
	require.NoError(t, s.Solve(context.Background(), v2, &warm))
	require.Equal(t, newton.Converged, warm.Status)
	t.Logf("V₂: cold %d iterations, warm from V₁'s optimum %d", cold.Iterations, warm.Iterations)
	require.LessOrEqual(t, warm.Iterations, cold.Iterations)
	require.LessOrEqual(t, warm.Gap, tol)
	require.GreaterOrEqual(t, warm.Objective, cold.LowerBound*(1-1e-13))
	require.GreaterOrEqual(t, cold.Objective, warm.LowerBound*(1-1e-13))
}

// TestStartFallbacks: a start that is not positive definite falls back to
// V^{1/2}, and a singular V ignores the start (the dual method has its own):
// both give the cold solve's result exactly, iterations and bits. A start of
// the wrong size is bad input.
func TestStartFallbacks(t *testing.T) {
	n := 48
	ones := mat.NewSymDense(n, nil) // J = 11ᵀ: unit diagonal, rank 1
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			ones.SetSym(i, j, 1)
		}
	}
	for _, spec := range []string{"prefix", "width:k=8"} { // definite, singular
		v := parsed(t, spec, n)
		cold, err := newton.Solve(context.Background(), v, nil)
		require.NoError(t, err)
		warm, err := newton.Solve(context.Background(), v, &newton.Options{Start: ones})
		require.NoError(t, err)
		sameResult(t, cold, warm, spec)
	}
	_, err := newton.Solve(context.Background(), parsed(t, "prefix", n), &newton.Options{Start: mat.NewSymDense(n+1, nil)})
	require.True(t, errors.Is(err, newton.ErrInput), "wrong-size start: %v", err)
}

func scaledSym(a *mat.SymDense, c float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.ScaleSym(c, a)
	return out
}
