package lrm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bisectionL1 is an independent reference for the ℓ1-ball projection: the
// projection is sign(v)·max(|v| − θ, 0) with θ ≥ 0 the root of the
// decreasing function h(θ) = Σ max(|vᵢ| − θ, 0) − 1 (Duchi et al. 2008,
// Lemma 3), found here by 200 bisection steps on [0, max|vᵢ|] — to the
// resolution of float64 — instead of by sorting.
func bisectionL1(v []float64) []float64 {
	out := append([]float64(nil), v...)
	var s, mx float64
	for _, x := range v {
		s += math.Abs(x)
		mx = math.Max(mx, math.Abs(x))
	}
	if s <= 1 {
		return out
	}
	lo, hi := 0.0, mx
	for it := 0; it < 200; it++ {
		mid := (lo + hi) / 2
		var h float64
		for _, x := range v {
			h += math.Max(math.Abs(x)-mid, 0)
		}
		if h > 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	theta := (lo + hi) / 2
	for i, x := range v {
		out[i] = math.Copysign(math.Max(math.Abs(x)-theta, 0), x)
	}
	return out
}

// checkProjectionOptimal verifies w = P(v) by the optimality condition of a
// projection onto a convex set, ⟨v − w, y − w⟩ ≤ 0 for every y in the ball.
// The ball is the convex hull of its vertices ±eᵢ, so it suffices to check
// them: max_i |vᵢ − wᵢ| ≤ ⟨v − w, w⟩ (up to tol). Together with feasibility
// this characterizes the projection exactly, independently of any algorithm.
func checkProjectionOptimal(t *testing.T, v, w []float64, tol float64) {
	t.Helper()
	var l1, inner, maxd float64
	for i := range v {
		l1 += math.Abs(w[i])
		inner += (v[i] - w[i]) * w[i]
		maxd = math.Max(maxd, math.Abs(v[i]-w[i]))
	}
	require.LessOrEqual(t, l1, 1.0+1e-15, "projection outside the ℓ1 ball")
	require.LessOrEqual(t, maxd, inner+tol, "variational inequality fails at a vertex")
}

func randomVector(rng *rand.Rand, r int) []float64 {
	v := make([]float64, r)
	scale := math.Pow(10, rng.Float64()*4-2) // 1e-2 … 1e2
	for i := range v {
		switch rng.IntN(4) {
		case 0:
			v[i] = 0
		default:
			v[i] = scale * rng.NormFloat64()
		}
	}
	return v
}

func TestProjectL1MatchesBisectionAndOptimality(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 2000; trial++ {
		r := 1 + rng.IntN(60)
		v := randomVector(rng, r)
		want := bisectionL1(v)
		got := append([]float64(nil), v...)
		ProjectL1(got, nil)
		fast := append([]float64(nil), v...)
		projectL1(fast, make([]int, r))
		scale := 0.0
		for _, x := range v {
			scale = math.Max(scale, math.Abs(x))
		}
		// Bisection pins θ to ~1e-16·max|v|; every coordinate inherits it.
		tol := 1e-13 * math.Max(scale, 1)
		for i := range v {
			require.InDelta(t, want[i], got[i], tol, "trial %d coordinate %d", trial, i)
			require.InDelta(t, got[i], fast[i], tol, "Michelot vs sort, trial %d coordinate %d", trial, i)
		}
		checkProjectionOptimal(t, v, got, 1e-12*math.Max(scale, 1))
		checkProjectionOptimal(t, v, fast, 1e-12*math.Max(scale, 1))
	}
}

func TestProjectL1EdgeCases(t *testing.T) {
	idx := make([]int, 8)
	run := func(v []float64) ([]float64, []float64) {
		a := append([]float64(nil), v...)
		b := append([]float64(nil), v...)
		ProjectL1(a, nil)
		projectL1(b, idx)
		return a, b
	}

	// Zero vector and vectors inside or on the ball are unchanged.
	for _, v := range [][]float64{
		{0, 0, 0, 0},
		{0.25, -0.25, 0.5},
		{1, 0, 0},
		{-0.5, 0.5},
	} {
		a, b := run(v)
		assert.Equal(t, v, a)
		assert.Equal(t, v, b)
	}

	// Ties: equal magnitudes share the excess equally.
	a, b := run([]float64{1, -1, 1, -1})
	for _, w := range [][]float64{a, b} {
		assert.InDeltaSlice(t, []float64{0.25, -0.25, 0.25, -0.25}, w, 1e-16)
	}
	// Ties at the threshold: |v| = (3, 3, 1, 1) → θ = 2.5, (0.5, 0.5, 0, 0).
	a, b = run([]float64{3, -3, 1, 1})
	for _, w := range [][]float64{a, b} {
		assert.InDeltaSlice(t, []float64{0.5, -0.5, 0, 0}, w, 1e-16)
	}
	// A small entry dropping out: |v| = (2, 1.5, 0.5). With all three
	// θ would be (4−1)/3 = 1 > 0.5, so the third leaves the support; the top
	// two give θ = (3.5−1)/2 = 1.25 and w = (0.75, 0.25, 0).
	a, b = run([]float64{2, 1.5, -0.5})
	for _, w := range [][]float64{a, b} {
		assert.InDeltaSlice(t, []float64{0.75, 0.25, 0}, w, 1e-15)
	}
	// A single coordinate far outside: the vertex.
	a, b = run([]float64{0, -7, 0})
	for _, w := range [][]float64{a, b} {
		assert.Equal(t, []float64{0, -1, 0}, w)
	}
	// Hand example: v = (0.8, 0.6, −0.4), θ = (0.8+0.6+0.4−1)/3 = 0.2667
	// is below every |vᵢ|, so all three stay.
	a, b = run([]float64{0.8, 0.6, -0.4})
	for _, w := range [][]float64{a, b} {
		th := 0.8 / 3
		assert.InDeltaSlice(t, []float64{0.8 - th, 0.6 - th, -(0.4 - th)}, w, 1e-15)
	}
}

func TestProjectL1LargeMagnitudesStayInBall(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for trial := 0; trial < 200; trial++ {
		r := 500 + rng.IntN(800)
		v := make([]float64, r)
		for i := range v {
			v[i] = 1e6 * rng.NormFloat64()
		}
		w := append([]float64(nil), v...)
		projectL1(w, make([]int, r))
		var l1 float64
		for _, x := range w {
			l1 += math.Abs(x)
		}
		// Feasible in floating point, not merely to rounding.
		require.LessOrEqual(t, l1, 1.0)
		require.Greater(t, l1, 1-1e-12)
	}
}

func TestProjectL2(t *testing.T) {
	v := []float64{3, 4}
	ProjectL2(v)
	assert.InDeltaSlice(t, []float64{0.6, 0.8}, v, 1e-16)
	in := []float64{0.3, -0.4}
	ProjectL2(in)
	assert.Equal(t, []float64{0.3, -0.4}, in)
	zero := []float64{0, 0, 0}
	ProjectL2(zero)
	assert.Equal(t, []float64{0, 0, 0}, zero)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		w := randomVector(rng, 1+rng.IntN(300))
		orig := append([]float64(nil), w...)
		ProjectL2(w)
		var s, so float64
		for i := range w {
			s += w[i] * w[i]
			so += orig[i] * orig[i]
		}
		require.LessOrEqual(t, s, 1.0)
		if so > 1 {
			// Same direction, unit length.
			require.InDelta(t, 1, math.Sqrt(s), 1e-15)
			for i := range w {
				require.InDelta(t, orig[i]/math.Sqrt(so), w[i], 1e-15)
			}
		}
	}
}
