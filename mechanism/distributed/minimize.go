package distributed

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
)

// Minimize returns the minimizer over the box X of F = Σᵢ fs[i], by projected
// Newton for bound constraints (Bertsekas 1982): Newton steps on the free
// coordinates, the active bounds held, Armijo search along the projection arc.
// It is the centralized reference the distributed algorithm converges to; it
// needs F strongly convex on X (true for the experiment's functions) and stops
// when the projected gradient |x − Π_X(x − ∇F(x))| ≤ tol·(1 + Σᵢ|∇fᵢ(x)|) (the
// second term is the scale of the rounding error in ∇F) or when a Newton step
// no longer changes x.
func Minimize(fs []Objective, X basis.Box, x0 []float64, tol float64) ([]float64, error) {
	if len(fs) == 0 {
		return nil, inputErrorf("no objectives")
	}
	d := X.Dim()
	for i, f := range fs {
		if f == nil || f.Dim() != d {
			return nil, inputErrorf("objective %d has the wrong dimension", i)
		}
	}
	if !(tol > 0) {
		return nil, inputErrorf("tolerance must be positive, got %v", tol)
	}
	x := make([]float64, d)
	if x0 == nil {
		for i := range x {
			x[i] = (X.Lo[i] + X.Hi[i]) / 2
		}
	} else {
		if len(x0) != d {
			return nil, inputErrorf("start has length %d, want %d", len(x0), d)
		}
		X.Clamp(x, x0)
	}
	g := make([]float64, d)
	H := make([]float64, d*d)
	gi := make([]float64, d)
	Hi := make([]float64, d*d)
	// gscale = Σᵢ |∇fᵢ(x)|: the size of the rounding error in ∇F(x), which sets
	// how small the projected gradient can be made.
	gscale := 0.0
	eval := func(x []float64, withDerivs bool) float64 {
		v := 0.0
		if withDerivs {
			gscale = 0
		}
		for i := range g {
			g[i] = 0
		}
		for i := range H {
			H[i] = 0
		}
		for _, f := range fs {
			if withDerivs {
				v += f.Eval(x, gi, Hi)
				n := 0.0
				for i := range g {
					g[i] += gi[i]
					n += gi[i] * gi[i]
				}
				gscale += math.Sqrt(n)
				for i := range H {
					H[i] += Hi[i]
				}
			} else {
				v += f.Eval(x, nil, nil)
			}
		}
		return v
	}
	xt := make([]float64, d)
	dir := make([]float64, d)
	for it := 0; it < 500; it++ {
		fx := eval(x, true)
		if math.IsNaN(fx) || math.IsInf(fx, 0) {
			return nil, fmt.Errorf("distributed: objective is not finite at %v", x)
		}
		pg := 0.0
		for i := range x {
			v := x[i] - math.Min(math.Max(x[i]-g[i], X.Lo[i]), X.Hi[i])
			pg += v * v
		}
		if math.Sqrt(pg) <= tol*(1+gscale) {
			return x, nil
		}
		// Active bounds: at (or within ε of) a bound with the gradient pushing out.
		eps := math.Min(1e-8, math.Sqrt(pg))
		var free []int
		for i := range x {
			atLo := x[i] <= X.Lo[i]+eps && g[i] > 0
			atHi := x[i] >= X.Hi[i]-eps && g[i] < 0
			if !atLo && !atHi {
				free = append(free, i)
			}
			dir[i] = 0
		}
		if len(free) > 0 {
			hf := mat.NewSymDense(len(free), nil)
			gf := mat.NewVecDense(len(free), nil)
			for a, i := range free {
				gf.SetVec(a, -g[i])
				for b, j := range free {
					if b >= a {
						hf.SetSym(a, b, H[i*d+j])
					}
				}
			}
			var ch mat.Cholesky
			var sol mat.VecDense
			if ch.Factorize(hf) && ch.SolveVecTo(&sol, gf) == nil {
				for a, i := range free {
					dir[i] = sol.AtVec(a)
				}
			} else {
				for _, i := range free {
					dir[i] = -g[i]
				}
			}
		}
		// Armijo along the projection arc; the active coordinates move by the
		// projected gradient step so that the iteration cannot stall on them.
		t := 1.0
		accepted := false
		for ls := 0; ls < 60; ls++ {
			for i := range x {
				step := dir[i]
				if step == 0 {
					step = -g[i]
				}
				xt[i] = math.Min(math.Max(x[i]+t*step, X.Lo[i]), X.Hi[i])
			}
			dec := 0.0
			for i := range x {
				dec += g[i] * (xt[i] - x[i])
			}
			ft := eval(xt, false)
			if ft <= fx+1e-4*dec || math.Abs(ft-fx) <= 1e-15*math.Abs(fx) && ls > 30 {
				accepted = true
				break
			}
			t /= 2
		}
		moved := 0.0
		for i := range x {
			moved = math.Max(moved, math.Abs(xt[i]-x[i])/(1+math.Abs(x[i])))
		}
		if accepted && moved <= 1e-15 {
			return xt, nil // converged to rounding
		}
		if !accepted {
			// No decrease representable in floating point: accept only if the
			// projected gradient is already near the tolerance.
			if math.Sqrt(pg) <= 1e4*tol*(1+gscale) {
				return x, nil
			}
			return nil, fmt.Errorf("distributed: line search failed at %v (projected gradient %.3g)", x, math.Sqrt(pg))
		}
		copy(x, xt)
	}
	return nil, fmt.Errorf("distributed: projected Newton did not converge in 500 iterations")
}
