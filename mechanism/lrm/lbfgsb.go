package lrm

import (
	"context"
	"math"

	"gonum.org/v1/gonum/floats"
)

// nonnegLBFGS minimizes a smooth f over x ≥ 0 by a projected limited-memory
// BFGS method in the manner of Kim, Sra and Dhillon ("Tackling
// box-constrained optimization via a new projected quasi-Newton approach",
// SIAM J. Sci. Comput. 2010): the variables at their bound with a gradient
// pushing outwards are held fixed, the L-BFGS direction is formed on the
// others, and a backtracking (Armijo) search runs along the projected path
// x(α) = max(0, x + α·d). Curvature pairs with sᵀy ≤ 0 are skipped.
//
// It replaces squaring an unconstrained variable (Θ = φ²), whose gradient
// 2φ·∂f/∂Θ vanishes at the bound, so that entries heading to zero converge
// only sublinearly: on WRange n = 1024 the squared form with gonum's L-BFGS
// ended 3% above scipy's L-BFGS-B after the same 500 iterations; this
// method ends 0.4% above it, in 20% less time.
type nonnegLBFGS struct {
	mem     int // stored curvature pairs
	maxIter int
	// Stop once the value has fallen by less than relTol·|f| over the last
	// window iterations.
	relTol float64
	window int
	// progress, when set, is called after every iteration.
	progress func(iter int, f float64)
}

// minimize runs from x (projected onto x ≥ 0 first), overwriting it with
// the result; fg returns f(x) and stores ∇f(x) in g, or returns f(x) only
// when g is nil. The line search evaluates its trial points without the
// gradient and asks for it only at the accepted one, by a second call at
// the same x, which fg should answer from the first (pIdentity.eval
// does). It returns f at the result and the iterations taken.
func (o *nonnegLBFGS) minimize(ctx context.Context, fg func(x, g []float64) float64, x []float64) (float64, int, error) {
	n := len(x)
	for i, v := range x {
		x[i] = math.Max(v, 0)
	}
	r := &lbfgsRun{o: o, x: x, g: make([]float64, n), d: make([]float64, n), xn: make([]float64, n),
		gn: make([]float64, n), alpha: make([]float64, o.mem), fixed: make([]bool, n)}
	r.f = fg(x, r.g)
	if math.IsInf(r.f, 0) || math.IsNaN(r.f) {
		return r.f, 0, errNonFinite
	}
	iter := 0
	for iter < o.maxIter {
		if err := ctx.Err(); err != nil {
			return r.f, iter, err
		}
		freeNorm := r.freeSet()
		if freeNorm == 0 {
			break // a KKT point
		}
		r.direction(freeNorm)
		fn, accepted := r.search(fg)
		iter++
		if !accepted {
			break // no decrease along the direction: as good as it gets
		}
		r.remember()
		copy(x, r.xn)
		copy(r.g, r.gn)
		r.f = fn
		if o.progress != nil {
			o.progress(iter, r.f)
		}
		r.history = append(r.history, r.f)
		if w := len(r.history) - 1 - o.window; w >= 0 && r.history[w]-r.f <= o.relTol*math.Abs(r.f) {
			break
		}
	}
	return r.f, iter, nil
}

// lbfgsRun is one minimize's state: the iterate x with f(x) and ∇f(x) = g,
// the direction d, the trial point xn with its gradient gn, and the
// curvature pairs, oldest first.
type lbfgsRun struct {
	o          *nonnegLBFGS
	x, g, d    []float64
	xn, gn     []float64
	f          float64
	ss, ys     [][]float64
	rho, alpha []float64
	history    []float64 // f after each iteration, for the stopping test
	fixed      []bool
}

// freeSet holds the variables at the bound whose gradient points outwards
// and returns the norm of the gradient on the others.
func (r *lbfgsRun) freeSet() float64 {
	freeNorm := 0.0
	for i := range r.x {
		r.fixed[i] = r.x[i] == 0 && r.g[i] > 0
		if !r.fixed[i] {
			freeNorm += r.g[i] * r.g[i]
		}
	}
	return math.Sqrt(freeNorm)
}

// direction sets d to the L-BFGS direction on the free variables (the
// two-loop recursion), or to −g scaled when that is not a descent
// direction, dropping the memory.
func (r *lbfgsRun) direction(freeNorm float64) {
	d, g, fixed, ss, ys := r.d, r.g, r.fixed, r.ss, r.ys
	for i := range d {
		if fixed[i] {
			d[i] = 0
		} else {
			d[i] = g[i]
		}
	}
	k := len(ss)
	for j := k - 1; j >= 0; j-- {
		r.alpha[j] = r.rho[j] * floats.Dot(ss[j], d)
		floats.AddScaled(d, -r.alpha[j], ys[j])
	}
	if k > 0 {
		floats.Scale(floats.Dot(ss[k-1], ys[k-1])/floats.Dot(ys[k-1], ys[k-1]), d)
	} else {
		// First step (or after a reset): a unit step moves by at most
		// 1 in any coordinate, the scale of Θ's uniform start.
		floats.Scale(1/math.Max(1, floats.Norm(g, math.Inf(1))), d)
	}
	for j := 0; j < k; j++ {
		b := r.rho[j] * floats.Dot(ys[j], d)
		floats.AddScaled(d, r.alpha[j]-b, ss[j])
	}
	var slope float64
	for i := range d {
		if fixed[i] {
			d[i] = 0
		} else {
			d[i] = -d[i]
		}
		slope += d[i] * g[i]
	}
	if !(slope < -1e-12*freeNorm*floats.Norm(d, 2)) {
		// Not a descent direction: drop the memory, step along −g.
		r.ss, r.ys, r.rho = ss[:0], ys[:0], r.rho[:0]
		s := 1 / math.Max(1, floats.Norm(g, math.Inf(1)))
		for i := range d {
			if fixed[i] {
				d[i] = 0
			} else {
				d[i] = -s * g[i]
			}
		}
	}
}

// search is the Armijo backtracking along the projected path
// x(α) = max(0, x + α·d), at most 40 halvings; the trial point is left in
// xn and, when it is accepted, its gradient in gn. Trial points are
// evaluated without the gradient: on HDMM's SF1 benchmark a third of the
// iterations backtrack, some of them 30 times, and rejected trials were
// most of the evaluations.
func (r *lbfgsRun) search(fg func(x, g []float64) float64) (fn float64, accepted bool) {
	step := 1.0
	fn = math.Inf(1)
	for tries := 0; tries < 40; tries++ {
		var dec float64
		for i, x := range r.x {
			// max(x + step·d, 0) as math.Max computes it (−0 and NaN
			// included), without its call: this loop was a tenth of
			// the planning time of HDMM's SF1.
			v := x + step*r.d[i]
			if v <= 0 {
				v = 0
			}
			r.xn[i] = v
			dec += r.g[i] * (v - x)
		}
		fn = fg(r.xn, nil)
		if fn <= r.f+1e-4*dec {
			return fg(r.xn, r.gn), true
		}
		step /= 2
	}
	return fn, false
}

// remember stores the curvature pair s = xn − x, y = gn − g (reusing the
// oldest pair's storage when the memory is full), skipping it when
// sᵀy ≤ 0 to rounding.
func (r *lbfgsRun) remember() {
	n := len(r.x)
	var s, y []float64
	if len(r.ss) == r.o.mem {
		s, y = r.ss[0], r.ys[0]
		r.ss, r.ys, r.rho = append(r.ss[:0], r.ss[1:]...), append(r.ys[:0], r.ys[1:]...), append(r.rho[:0], r.rho[1:]...)
	} else {
		s, y = make([]float64, n), make([]float64, n)
	}
	floats.SubTo(s, r.xn, r.x)
	floats.SubTo(y, r.gn, r.g)
	if sy := floats.Dot(s, y); sy > 1e-12*floats.Norm(s, 2)*floats.Norm(y, 2) {
		r.ss, r.ys, r.rho = append(r.ss, s), append(r.ys, y), append(r.rho, 1/sy)
	}
}
