package basis

import (
	"math"
)

// GaussLegendre returns the m nodes (increasing) and weights of the Gauss–Legendre
// rule on [−1, 1], exact for polynomials of degree ≤ 2m − 1. Nodes are the roots
// of P_m found by Newton's method from the Tricomi initial guesses
// cos(π(i − 1/4)/(m + 1/2)), weights 2/((1 − t²) P′_m(t)²).
func GaussLegendre(m int) (nodes, weights []float64, err error) {
	if m <= 0 || m > 4096 {
		return nil, nil, inputErrorf("number of Gauss–Legendre nodes must be in [1, 4096], got %d", m)
	}
	nodes = make([]float64, m)
	weights = make([]float64, m)
	for i := 0; i < (m+1)/2; i++ {
		t := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(m) + 0.5))
		var dp float64
		for it := 0; it < 100; it++ {
			p, d := legendreValDeriv(m, t)
			dp = d
			dt := p / d
			t -= dt
			if math.Abs(dt) <= 1e-16*math.Max(1, math.Abs(t)) {
				break
			}
		}
		_, dp = legendreValDeriv(m, t)
		w := 2 / ((1 - t*t) * dp * dp)
		nodes[i], nodes[m-1-i] = -t, t
		weights[i], weights[m-1-i] = w, w
	}
	if m%2 == 1 {
		nodes[m/2] = 0 // exact by symmetry
	}
	return nodes, weights, nil
}

// legendreValDeriv returns P_m(t) and P′_m(t).
func legendreValDeriv(m int, t float64) (p, dp float64) {
	p0, p1 := 1.0, t
	if m == 0 {
		return 1, 0
	}
	for n := 1; n < m; n++ {
		fn := float64(n)
		p0, p1 = p1, ((2*fn+1)*t*p1-fn*p0)/(fn+1)
	}
	// P′_m = m (t P_m − P_{m−1}) / (t² − 1), valid at interior nodes.
	dp = float64(m) * (t*p1 - p0) / (t*t - 1)
	return p1, dp
}

// Grid is a tensor Gauss–Legendre quadrature rule on a box: Points[q] (length d)
// with weight Weights[q]; Σ_q Weights[q] g(Points[q]) ≈ ∫_D g dx, exactly for
// polynomials of degree ≤ 2m − 1 in each variable.
type Grid struct {
	Points  [][]float64
	Weights []float64
}

// QuadratureGrid returns the tensor Gauss–Legendre rule with m nodes per axis on
// box. Its size is mᵈ.
func QuadratureGrid(box Box, m int) (*Grid, error) {
	if _, err := NewBox(box.Lo, box.Hi); err != nil {
		return nil, err
	}
	t, w, err := GaussLegendre(m)
	if err != nil {
		return nil, err
	}
	d := box.Dim()
	total := 1
	for i := 0; i < d; i++ {
		total *= m
		if total > 1<<24 {
			return nil, inputErrorf("quadrature grid with %d nodes per axis in dimension %d is too large", m, d)
		}
	}
	g := &Grid{Points: make([][]float64, total), Weights: make([]float64, total)}
	idx := make([]int, d)
	for q := 0; q < total; q++ {
		x := make([]float64, d)
		wt := 1.0
		for i := 0; i < d; i++ {
			half := (box.Hi[i] - box.Lo[i]) / 2
			x[i] = box.Lo[i] + half*(t[idx[i]]+1)
			wt *= w[idx[i]] * half
		}
		g.Points[q], g.Weights[q] = x, wt
		for i := d - 1; i >= 0; i-- { // odometer, last axis fastest
			idx[i]++
			if idx[i] < m {
				break
			}
			idx[i] = 0
		}
	}
	return g, nil
}

// Coefficients returns cₖ = ∫_D f φₖ dx for every basis function, by the tensor
// Gauss–Legendre rule with m nodes per axis. For a polynomial f of total degree
// ≤ K (the basis degree) any m ≥ K+1 is exact; for smooth non-polynomial f the
// error decays with m like the tail of f's Legendre series beyond degree 2m−K.
// An error is returned if f is nil or returns NaN or ±Inf at any node.
func (b *Basis) Coefficients(f func(x []float64) float64, m int) ([]float64, error) {
	if f == nil {
		return nil, inputErrorf("nil function")
	}
	g, err := QuadratureGrid(b.box, m)
	if err != nil {
		return nil, err
	}
	vals := make([]float64, len(g.Points))
	for q, x := range g.Points {
		v := f(append([]float64(nil), x...))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, inputErrorf("function value at %v is %v", x, v)
		}
		vals[q] = v
	}
	return b.CoefficientsFromValues(g, vals)
}

// CoefficientsFromValues returns cₖ = Σ_q Weights[q]·vals[q]·φₖ(Points[q]) for
// values of a function already computed at the nodes of grid g (which must be a
// rule on b's box).
func (b *Basis) CoefficientsFromValues(g *Grid, vals []float64) ([]float64, error) {
	if g == nil || len(vals) != len(g.Points) || len(g.Weights) != len(g.Points) {
		return nil, inputErrorf("values do not match the quadrature grid")
	}
	c := make([]float64, b.Len())
	phi := make([]float64, b.Len())
	w := b.NewWorkspace()
	for q, x := range g.Points {
		v := vals[q]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, inputErrorf("function value at %v is %v", x, v)
		}
		if err := b.Values(w, x, phi); err != nil {
			return nil, err
		}
		s := g.Weights[q] * v
		for k, p := range phi {
			c[k] += s * p
		}
	}
	return c, nil
}
