package marginals

import (
	"math"
	"math/rand/v2"
)

// HDMM's OPT_M search for the pure family (McKenna et al., VLDB 2018),
// our own formulation: the scale-free error F(θ) = (Σθ)²·E(θ) over θ ≥ 0
// (E as in familyopt.go with ℓ_T = Σ_{S⊇T} θ_S²γ_S; F is homogeneous of
// degree 0, so no simplex constraint is needed) from θ_S uniform in [0,1)
// on every subset, HDMM's start. ∂F/∂θ_S = 2sE − 2s²θ_S g_S, s = Σθ. The
// minimizer is the spectral projected gradient method (Birgin, Martínez
// and Raydan, SIAM J. Optim. 2000): x ← max(0, x − α∇F) with the
// Barzilai–Borwein step α and a nonmonotone Armijo test against the
// largest of the last 10 values. Unlike the multiplicative steps it moves
// weights off 0 and on, and its random starts reach other local minima.

// randomSeeds is the number of random starts (HDMM's experiments use 4).
const randomSeeds = 4

// randomStarts runs the search from randomSeeds seeded random starts for at
// most maxIter iterations each and returns the lowest E on the simplex, its
// θ (Σθ = 1) and the iterations.
func (f *family) randomStarts(o *mm, maxIter int) (value float64, theta []float64, iters int) {
	value = math.Inf(1)
	g := make([]float64, f.n)
	fg := func(x, grad []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		e := o.eval(x, g)
		if math.IsInf(e, 1) || !(s > 0) {
			return math.Inf(1)
		}
		for m, v := range x {
			grad[m] = 2*s*e - 2*s*s*v*g[m]
		}
		return s * s * e
	}
	for seed := uint64(0); seed < randomSeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed+1, 0x0b7a))
		x := make([]float64, f.n)
		for m := range x {
			x[m] = rng.Float64()
		}
		it := spg(fg, x, maxIter)
		iters += it
		s := 0.0
		for _, v := range x {
			s += v
		}
		if !(s > 0) {
			continue
		}
		for m := range x {
			x[m] /= s
		}
		if v := o.eval(x, o.gx); v < value {
			value, theta = v, x
		}
	}
	return value, theta, iters
}

// spg minimizes fg over x ≥ 0 from x (overwritten) by the spectral
// projected gradient method; it returns the iterations taken. It stops
// after maxIter iterations, when the projected step vanishes, or when the
// best value has fallen by less than 1e-10 relative over 50 iterations.
func spg(fg func(x, g []float64) float64, x []float64, maxIter int) int {
	n := len(x)
	g, xn, gn := make([]float64, n), make([]float64, n), make([]float64, n)
	f := fg(x, g)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	const memory = 10
	recent := []float64{f}
	best := []float64{f}
	gmax := 0.0
	for _, v := range g {
		gmax = math.Max(gmax, math.Abs(v))
	}
	alpha := 1 / math.Max(gmax, 1e-300) // first step moves ≤ 1 in any coordinate
	it := 0
	for ; it < maxIter; it++ {
		fmax := recent[0]
		for _, v := range recent {
			fmax = math.Max(fmax, v)
		}
		lambda, fn := 1.0, math.Inf(1)
		moved := false
		for tries := 0; tries < 40; tries++ {
			dec := 0.0
			moved = false
			for i := range x {
				xn[i] = math.Max(x[i]-lambda*alpha*g[i], 0)
				d := xn[i] - x[i]
				dec += g[i] * d
				if d != 0 {
					moved = true
				}
			}
			if !moved {
				break
			}
			fn = fg(xn, gn)
			if fn <= fmax+1e-4*dec {
				break
			}
			lambda /= 2
			fn = math.Inf(1)
		}
		if !moved || math.IsInf(fn, 0) {
			break
		}
		ss, sy := 0.0, 0.0
		for i := range x {
			s, y := xn[i]-x[i], gn[i]-g[i]
			ss += s * s
			sy += s * y
		}
		copy(x, xn)
		copy(g, gn)
		f = fn
		if sy > 0 {
			alpha = ss / sy
		} else {
			alpha *= 10
		}
		recent = append(recent, f)
		if len(recent) > memory {
			recent = recent[1:]
		}
		best = append(best, math.Min(best[len(best)-1], f))
		if w := len(best) - 51; w >= 0 && best[w]-best[len(best)-1] <= 1e-10*best[len(best)-1] {
			break
		}
	}
	return it
}
