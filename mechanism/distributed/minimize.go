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
	x, err := minimizeStart(fs, X, x0, tol)
	if err != nil {
		return nil, err
	}
	d := X.Dim()
	F := newSum(fs, d)
	xt := make([]float64, d)
	dir := make([]float64, d)
	for it := 0; it < 500; it++ {
		fx := F.eval(x, true)
		if math.IsNaN(fx) || math.IsInf(fx, 0) {
			return nil, fmt.Errorf("distributed: objective is not finite at %v", x)
		}
		pg := projectedGradient(x, F.g, X)
		if pg <= tol*(1+F.gscale) {
			return x, nil
		}
		F.newtonDirection(x, X, pg, dir)
		accepted := F.lineSearch(x, X, dir, fx, xt)
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
			if pg <= 1e4*tol*(1+F.gscale) {
				return x, nil
			}
			return nil, fmt.Errorf("distributed: line search failed at %v (projected gradient %.3g)", x, pg)
		}
		copy(x, xt)
	}
	return nil, fmt.Errorf("distributed: projected Newton did not converge in 500 iterations")
}

// minimizeStart checks Minimize's arguments and returns the starting
// point: x0 clamped to X, or the centre of X.
func minimizeStart(fs []Objective, X basis.Box, x0 []float64, tol float64) ([]float64, error) {
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
		return x, nil
	}
	if len(x0) != d {
		return nil, inputErrorf("start has length %d, want %d", len(x0), d)
	}
	X.Clamp(x, x0)
	return x, nil
}

// sum is F = Σᵢ fs[i] with its gradient g and Hessian H (row-major d×d) at
// the last point evaluated.
type sum struct {
	fs     []Objective
	d      int
	g, H   []float64
	gi, Hi []float64 // one term's derivatives
	// gscale = Σᵢ |∇fᵢ(x)|: the size of the rounding error in ∇F(x), which
	// sets how small the projected gradient can be made.
	gscale float64
}

func newSum(fs []Objective, d int) *sum {
	return &sum{fs: fs, d: d, g: make([]float64, d), H: make([]float64, d*d), gi: make([]float64, d), Hi: make([]float64, d*d)}
}

// eval returns F(x), with g, H and gscale at x when withDerivs. Without
// derivatives g and H are cleared all the same (so a line-search trial
// leaves them zero; lineSearch's comment says what that implies).
func (F *sum) eval(x []float64, withDerivs bool) float64 {
	v := 0.0
	if withDerivs {
		F.gscale = 0
	}
	g, H := F.g, F.H
	for i := range g {
		g[i] = 0
	}
	for i := range H {
		H[i] = 0
	}
	for _, f := range F.fs {
		if !withDerivs {
			v += f.Eval(x, nil, nil)
			continue
		}
		v += f.Eval(x, F.gi, F.Hi)
		n := 0.0
		for i := range g {
			g[i] += F.gi[i]
			n += F.gi[i] * F.gi[i]
		}
		F.gscale += math.Sqrt(n)
		for i := range H {
			H[i] += F.Hi[i]
		}
	}
	return v
}

// projectedGradient is |x − Π_X(x − g)|, zero exactly at a minimizer of a
// convex F over the box.
func projectedGradient(x, g []float64, X basis.Box) float64 {
	pg := 0.0
	for i := range x {
		v := x[i] - math.Min(math.Max(x[i]-g[i], X.Lo[i]), X.Hi[i])
		pg += v * v
	}
	return math.Sqrt(pg)
}

// newtonDirection sets dir to the Newton step on the free coordinates and
// 0 on the active ones: those at (or within ε of) a bound with the gradient
// pushing out, ε shrinking with the projected gradient pg (Bertsekas 1982).
// A Hessian that is not positive definite on the free set falls back to
// steepest descent there.
func (F *sum) newtonDirection(x []float64, X basis.Box, pg float64, dir []float64) {
	g, H, d := F.g, F.H, F.d
	eps := math.Min(1e-8, pg)
	var free []int
	for i := range x {
		atLo := x[i] <= X.Lo[i]+eps && g[i] > 0
		atHi := x[i] >= X.Hi[i]-eps && g[i] < 0
		if !atLo && !atHi {
			free = append(free, i)
		}
		dir[i] = 0
	}
	if len(free) == 0 {
		return
	}
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
		return
	}
	for _, i := range free {
		dir[i] = -g[i]
	}
}

// lineSearch is Armijo's rule along the projection arc from x (value fx):
// xt = Π_X(x + t·dir) for t = 1, 1/2, …; the active coordinates move by the
// projected gradient step so that the iteration cannot stall on them. It
// reports whether a trial was accepted (xt holds the last trial either
// way). Each trial's eval clears g, so from the second trial on the
// sufficient-decrease term and the active coordinates' step are zero and
// the test is plain decrease. That is how this search has always behaved;
// making later trials use the gradient at x would change the iterates.
func (F *sum) lineSearch(x []float64, X basis.Box, dir []float64, fx float64, xt []float64) bool {
	g := F.g
	t := 1.0
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
		ft := F.eval(xt, false)
		if ft <= fx+1e-4*dec || math.Abs(ft-fx) <= 1e-15*math.Abs(fx) && ls > 30 {
			return true
		}
		t /= 2
	}
	return false
}
