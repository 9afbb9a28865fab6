package lrm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// On a convex quadratic ½xᵀQx − cᵀx over x ≥ 0 the KKT conditions certify
// the global minimum: ∇f = 0 on the free variables, ∇f ≥ 0 at the bound. A
// separable instance has the closed form x = max(c/q, 0).
func TestNonnegLBFGSOnQuadratics(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	const n = 60
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var q mat.SymDense
	q.SymOuterK(1, a) // AAᵀ: condition number ~1e3–1e4
	for i := 0; i < n; i++ {
		q.SetSym(i, i, q.At(i, i)+1)
	}
	c := make([]float64, n)
	for i := range c {
		c[i] = 10 * rng.NormFloat64()
	}
	fg := func(x, g []float64) float64 {
		if g == nil { // value only (the line search's trial points)
			g = make([]float64, n)
		}
		gv := mat.NewVecDense(n, g)
		gv.MulVec(&q, mat.NewVecDense(n, x))
		var f float64
		for i := range x {
			f += 0.5*x[i]*g[i] - c[i]*x[i]
			g[i] -= c[i]
		}
		return f
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Float64()
	}
	o := &nonnegLBFGS{mem: 10, maxIter: 5000, relTol: 1e-15, window: 20}
	_, its, err := o.minimize(context.Background(), fg, x)
	require.NoError(t, err)
	g := make([]float64, n)
	fg(x, g)
	var active int
	for i := range x {
		require.GreaterOrEqual(t, x[i], 0.0)
		if x[i] > 0 {
			// |c| ~ 10 and ‖Q‖ ~ 4n: 1e-6·n is about 1e-8 relative.
			assert.InDelta(t, 0, g[i], 1e-6*float64(n), "free %d", i)
		} else {
			active++
			assert.GreaterOrEqual(t, g[i], -1e-6*float64(n), "bound %d", i)
		}
	}
	assert.Positive(t, active, "the instance must have active bounds")
	assert.Less(t, active, n)
	t.Logf("%d iterations, %d of %d variables at the bound", its, active, n)

	// Separable: x = max(c/q, 0) exactly.
	qd := make([]float64, n)
	for i := range qd {
		qd[i] = 1 + rng.Float64()*100
	}
	sep := func(x, g []float64) float64 {
		var f float64
		for i := range x {
			f += 0.5*qd[i]*x[i]*x[i] - c[i]*x[i]
			if g != nil {
				g[i] = qd[i]*x[i] - c[i]
			}
		}
		return f
	}
	for i := range x {
		x[i] = rng.Float64()
	}
	_, _, err = o.minimize(context.Background(), sep, x)
	require.NoError(t, err)
	for i := range x {
		assert.InDelta(t, math.Max(c[i]/qd[i], 0), x[i], 1e-8, "%d", i)
	}

	// Cancellation and a non-finite start are errors.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = o.minimize(ctx, sep, x)
	assert.True(t, errors.Is(err, context.Canceled))
	_, _, err = o.minimize(context.Background(), func(x, g []float64) float64 { return math.NaN() }, x)
	assert.ErrorIs(t, err, errNonFinite)
}
