package basis

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/integrate/quad"
)

func mustBox(t *testing.T, lo, hi []float64) Box {
	t.Helper()
	b, err := NewBox(lo, hi)
	require.NoError(t, err)
	return b
}

func TestSizeAndOrdering(t *testing.T) {
	// The three truncations of Nozari et al.'s experiment in 2-D.
	assert.Equal(t, 15, Size(2, 4))
	assert.Equal(t, 28, Size(2, 6))
	assert.Equal(t, 120, Size(2, 14))
	assert.Equal(t, 35, Size(3, 4))
	box := mustBox(t, []float64{-5, -5}, []float64{5, 5})
	for _, K := range []int{4, 6, 14} {
		b, err := New(box, K)
		require.NoError(t, err)
		require.Equal(t, Size(2, K), b.Len())
		seen := map[[2]int]bool{}
		prev := 0
		for k := 0; k < b.Len(); k++ {
			a := b.MultiIndex(k)
			g := a[0] + a[1]
			require.GreaterOrEqual(t, g, prev, "ordered by total degree")
			require.LessOrEqual(t, g, K)
			prev = g
			key := [2]int{a[0], a[1]}
			require.False(t, seen[key], "duplicate multi-index %v", a)
			seen[key] = true
		}
	}
	b, _ := New(box, 2)
	want := [][]int{{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}, {0, 2}}
	for k, w := range want {
		assert.Equal(t, w, b.MultiIndex(k))
	}
}

// Gauss–Legendre nodes and weights against gonum's independent implementation
// (tabulated/asymptotic formulas of Hale & Townsend). 1e-14: both are accurate to
// a few ulps of O(1) numbers.
func TestGaussLegendreAgainstGonum(t *testing.T) {
	for _, m := range []int{1, 2, 3, 7, 15, 30, 61, 120} {
		x, w, err := GaussLegendre(m)
		require.NoError(t, err)
		gx := make([]float64, m)
		gw := make([]float64, m)
		quad.Legendre{}.FixedLocations(gx, gw, -1, 1)
		sort.Sort(byNode{gx, gw}) // gonum lists nodes in decreasing order
		for i := 0; i < m; i++ {
			assert.InDelta(t, gx[i], x[i], 1e-14, "m=%d node %d", m, i)
			assert.InDelta(t, gw[i], w[i], 1e-14, "m=%d weight %d", m, i)
		}
	}
	// Exactness on monomials: ∫₋₁¹ t^j dt = 2/(j+1) for even j, 0 for odd, j ≤ 2m−1.
	x, w, _ := GaussLegendre(8)
	for j := 0; j <= 15; j++ {
		s := 0.0
		for i := range x {
			s += w[i] * math.Pow(x[i], float64(j))
		}
		want := 0.0
		if j%2 == 0 {
			want = 2 / float64(j+1)
		}
		assert.InDelta(t, want, s, 1e-14, "moment %d", j)
	}
}

// The basis is orthonormal in L²(D): the Gram matrix computed by quadrature
// (exact for these polynomial integrands with m = K+1 nodes per axis) is the
// identity to 1e-10 (the tolerance; rounding is ~1e-14 here).
func TestOrthonormal(t *testing.T) {
	cases := []struct {
		lo, hi []float64
		K      int
	}{
		{[]float64{-5, -5}, []float64{5, 5}, 14},
		{[]float64{-1, 2}, []float64{3, 2.5}, 6},
		{[]float64{0, -2, 1}, []float64{1, 2, 4}, 4},
		{[]float64{-3}, []float64{7}, 20},
	}
	for _, c := range cases {
		b, err := New(mustBox(t, c.lo, c.hi), c.K)
		require.NoError(t, err)
		g, err := QuadratureGrid(b.Box(), c.K+1)
		require.NoError(t, err)
		n := b.Len()
		gram := make([]float64, n*n)
		phi := make([]float64, n)
		for q, x := range g.Points {
			require.NoError(t, b.Values(nil, x, phi))
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					gram[i*n+j] += g.Weights[q] * phi[i] * phi[j]
				}
			}
		}
		worst := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				worst = math.Max(worst, math.Abs(gram[i*n+j]-want))
			}
		}
		assert.Less(t, worst, 1e-10, "box %v–%v K=%d", c.lo, c.hi, c.K)
	}
}

// monomialPoly is p(x) = Σ a_α Π ((xᵢ−cᵢ)/sᵢ)^{αᵢ} with random a: an independent
// closed form for the value, gradient and Hessian.
type monomialPoly struct {
	c, s []float64
	alph [][]int
	a    []float64
}

func newMonomialPoly(rng *rand.Rand, box Box, K int) *monomialPoly {
	d := box.Dim()
	p := &monomialPoly{c: make([]float64, d), s: make([]float64, d)}
	for i := 0; i < d; i++ {
		p.c[i] = (box.Lo[i] + box.Hi[i]) / 2
		p.s[i] = (box.Hi[i] - box.Lo[i]) / 2
	}
	for g := 0; g <= K; g++ {
		for _, a := range multiIndices(d, g) {
			p.alph = append(p.alph, a)
			p.a = append(p.a, rng.NormFloat64())
		}
	}
	return p
}

func powd(u float64, n, der int) float64 { // d^der/du^der u^n
	if der > n {
		return 0
	}
	f := 1.0
	for j := 0; j < der; j++ {
		f *= float64(n - j)
	}
	return f * math.Pow(u, float64(n-der))
}

// eval returns the value, gradient and Hessian (row-major) of p at x, and the
// sum of absolute values of the terms (the scale for relative tolerances).
func (p *monomialPoly) eval(x []float64) (val float64, grad, hess []float64, scale float64) {
	d := len(x)
	grad = make([]float64, d)
	hess = make([]float64, d*d)
	u := make([]float64, d)
	for i := range x {
		u[i] = (x[i] - p.c[i]) / p.s[i]
	}
	for t, a := range p.alph {
		term := p.a[t]
		for i := 0; i < d; i++ {
			term *= powd(u[i], a[i], 0)
		}
		val += term
		scale += math.Abs(term)
		for i := 0; i < d; i++ {
			g := p.a[t] * powd(u[i], a[i], 1) / p.s[i]
			for j := 0; j < d; j++ {
				if j != i {
					g *= powd(u[j], a[j], 0)
				}
			}
			grad[i] += g
			for j := 0; j < d; j++ {
				var h float64
				if i == j {
					h = p.a[t] * powd(u[i], a[i], 2) / (p.s[i] * p.s[i])
				} else {
					h = p.a[t] * powd(u[i], a[i], 1) * powd(u[j], a[j], 1) / (p.s[i] * p.s[j])
				}
				for l := 0; l < d; l++ {
					if l != i && l != j {
						h *= powd(u[l], a[l], 0)
					}
				}
				hess[i*d+j] += h
			}
		}
	}
	return
}

// A polynomial of total degree ≤ K is reproduced exactly by its K-truncated
// expansion: value, gradient and Hessian at random points agree with the closed
// form to 1e-10 relative to the size of the polynomial's terms (the sum of
// |a_α| Π|uᵢ|^αᵢ, and that scale times K²/sᵢ per derivative order).
func TestPolynomialReproduction(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		lo, hi []float64
		K      int
	}{
		{[]float64{-5, -5}, []float64{5, 5}, 4},
		{[]float64{-5, -5}, []float64{5, 5}, 14},
		{[]float64{-1, 2}, []float64{3, 2.5}, 6},
		{[]float64{0, -2, 1}, []float64{1, 2, 4}, 5},
	}
	for _, c := range cases {
		box := mustBox(t, c.lo, c.hi)
		b, err := New(box, c.K)
		require.NoError(t, err)
		p := newMonomialPoly(rng, box, c.K)
		coef, err := b.Coefficients(func(x []float64) float64 { v, _, _, _ := p.eval(x); return v }, c.K+1)
		require.NoError(t, err)
		e, err := NewExpansion(b, coef)
		require.NoError(t, err)
		ev := e.Evaluator()
		d := box.Dim()
		g := make([]float64, d)
		h := make([]float64, d*d)
		minS := math.Inf(1)
		for _, s := range p.s {
			minS = math.Min(minS, s)
		}
		k2 := float64(c.K * c.K)
		for trial := 0; trial < 50; trial++ {
			x := make([]float64, d)
			for i := range x {
				x[i] = box.Lo[i] + rng.Float64()*(box.Hi[i]-box.Lo[i])
			}
			if trial == 0 {
				copy(x, box.Hi) // a corner, where Legendre derivatives peak
			}
			v, err := ev.Eval(x, g, h)
			require.NoError(t, err)
			g2 := make([]float64, d)
			require.NoError(t, ev.Gradient(x, g2))
			assert.Equal(t, g, g2)
			wv, wg, wh, scale := p.eval(x)
			tol := 1e-10 * math.Max(1, scale)
			assert.InDelta(t, wv, v, tol, "value K=%d x=%v", c.K, x)
			for i := range g {
				assert.InDelta(t, wg[i], g[i], tol*k2/minS, "grad K=%d", c.K)
			}
			for i := range h {
				assert.InDelta(t, wh[i], h[i], tol*k2*k2/(minS*minS), "hess K=%d", c.K)
			}
		}
	}
}

// Coefficients of a smooth non-polynomial function converge as the quadrature
// grows: exp(x+y/2) on a box, truncation K=10, reference by 60 nodes per axis;
// 25 nodes already agree to 1e-12.
func TestCoefficientsConverge(t *testing.T) {
	b, err := New(mustBox(t, []float64{-1, 0}, []float64{1, 2}), 10)
	require.NoError(t, err)
	f := func(x []float64) float64 { return math.Exp(x[0] + x[1]/2) }
	ref, err := b.Coefficients(f, 60)
	require.NoError(t, err)
	c, err := b.Coefficients(f, 25)
	require.NoError(t, err)
	for k := range c {
		assert.InDelta(t, ref[k], c[k], 1e-12)
	}
	// The 1-D factorization gives an independent closed form for the constant term:
	// c₀ = ∫ e^x dx ∫ e^{y/2} dy / √area.
	want := (math.E - 1/math.E) * 2 * (math.E - 1) / math.Sqrt(4)
	assert.InDelta(t, want, c[0], 1e-12)
}

// GradientBound is attained at the corner and dominates |∇h(x)|/‖c‖ everywhere.
func TestGradientBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	box := mustBox(t, []float64{-5, -1}, []float64{5, 3})
	b, err := New(box, 8)
	require.NoError(t, err)
	M := b.GradientBound()
	require.Greater(t, M, 0.0)
	grad := make([]float64, b.Len()*2)
	for trial := 0; trial < 500; trial++ {
		x := []float64{box.Lo[0] + 10*rng.Float64(), box.Lo[1] + 4*rng.Float64()}
		require.NoError(t, b.Derivatives(nil, x, nil, grad, nil))
		s := 0.0
		for _, g := range grad {
			s += g * g
		}
		require.LessOrEqual(t, math.Sqrt(s), M*(1+1e-12))
		c := make([]float64, b.Len())
		nc := 0.0
		for k := range c {
			c[k] = rng.NormFloat64()
			nc += c[k] * c[k]
		}
		e, _ := NewExpansion(b, c)
		g, err := e.Gradient(x)
		require.NoError(t, err)
		require.LessOrEqual(t, math.Hypot(g[0], g[1]), M*math.Sqrt(nc)*(1+1e-12))
	}
}

func TestBadInput(t *testing.T) {
	_, err := NewBox([]float64{0, 1}, []float64{1, 1})
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "degenerate")
	_, err = NewBox([]float64{0}, []float64{1, 2})
	require.ErrorIs(t, err, ErrInput)
	_, err = NewBox([]float64{math.NaN()}, []float64{1})
	require.ErrorIs(t, err, ErrInput)
	_, err = Cube(0, -1, 1)
	require.ErrorIs(t, err, ErrInput)
	_, err = New(Box{Lo: []float64{0}, Hi: []float64{0}}, 3)
	require.ErrorIs(t, err, ErrInput)
	box := mustBox(t, []float64{-1, -1}, []float64{1, 1})
	_, err = New(box, -1)
	require.ErrorIs(t, err, ErrInput)
	b, err := New(box, 3)
	require.NoError(t, err)
	_, err = b.Coefficients(func(x []float64) float64 {
		if x[0] > 0.5 {
			return math.NaN()
		}
		return 1
	}, 6)
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "NaN")
	_, err = b.Coefficients(nil, 4)
	require.ErrorIs(t, err, ErrInput)
	_, err = b.Coefficients(func([]float64) float64 { return 0 }, 0)
	require.ErrorIs(t, err, ErrInput)
	_, err = NewExpansion(b, make([]float64, 3))
	require.ErrorIs(t, err, ErrInput)
	_, err = NewExpansion(b, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, math.Inf(1)})
	require.ErrorIs(t, err, ErrInput)
	e, err := NewExpansion(b, make([]float64, b.Len()))
	require.NoError(t, err)
	_, err = e.Value([]float64{0})
	require.ErrorIs(t, err, ErrInput)
	_, err = e.Value([]float64{0, math.NaN()})
	require.ErrorIs(t, err, ErrInput)
	_, _, err = GaussLegendre(0)
	require.True(t, errors.Is(err, ErrInput))
}

type byNode struct{ x, w []float64 }

func (b byNode) Len() int           { return len(b.x) }
func (b byNode) Less(i, j int) bool { return b.x[i] < b.x[j] }
func (b byNode) Swap(i, j int) {
	b.x[i], b.x[j] = b.x[j], b.x[i]
	b.w[i], b.w[j] = b.w[j], b.w[i]
}
