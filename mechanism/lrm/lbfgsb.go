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
// the result; fg returns f(x) and stores ∇f(x) in g. It returns f at the
// result and the iterations taken.
func (o *nonnegLBFGS) minimize(ctx context.Context, fg func(x, g []float64) float64, x []float64) (float64, int, error) {
	n := len(x)
	for i, v := range x {
		x[i] = math.Max(v, 0)
	}
	g := make([]float64, n)
	f := fg(x, g)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f, 0, errNonFinite
	}
	var (
		ss, ys   [][]float64 // curvature pairs, oldest first
		rho      []float64
		d        = make([]float64, n)
		xn       = make([]float64, n)
		gn       = make([]float64, n)
		alpha    = make([]float64, o.mem)
		history  []float64 // f after each iteration, for the stopping test
		fixed    = make([]bool, n)
		freeNorm float64
	)
	iter := 0
	for iter < o.maxIter {
		if err := ctx.Err(); err != nil {
			return f, iter, err
		}
		// Hold the variables at the bound whose gradient points outwards.
		freeNorm = 0
		for i := range x {
			fixed[i] = x[i] == 0 && g[i] > 0
			if !fixed[i] {
				freeNorm += g[i] * g[i]
			}
		}
		freeNorm = math.Sqrt(freeNorm)
		if freeNorm == 0 {
			break // a KKT point
		}
		// Two-loop recursion on the free variables.
		for i := range d {
			if fixed[i] {
				d[i] = 0
			} else {
				d[i] = g[i]
			}
		}
		k := len(ss)
		for j := k - 1; j >= 0; j-- {
			alpha[j] = rho[j] * floats.Dot(ss[j], d)
			floats.AddScaled(d, -alpha[j], ys[j])
		}
		if k > 0 {
			floats.Scale(floats.Dot(ss[k-1], ys[k-1])/floats.Dot(ys[k-1], ys[k-1]), d)
		} else {
			// First step (or after a reset): a unit step moves by at most
			// 1 in any coordinate, the scale of Θ's uniform start.
			floats.Scale(1/math.Max(1, floats.Norm(g, math.Inf(1))), d)
		}
		for j := 0; j < k; j++ {
			b := rho[j] * floats.Dot(ys[j], d)
			floats.AddScaled(d, alpha[j]-b, ss[j])
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
			ss, ys, rho = ss[:0], ys[:0], rho[:0]
			s := 1 / math.Max(1, floats.Norm(g, math.Inf(1)))
			for i := range d {
				if fixed[i] {
					d[i] = 0
				} else {
					d[i] = -s * g[i]
				}
			}
		}
		// Armijo backtracking along the projected path.
		step, fn := 1.0, math.Inf(1)
		accepted := false
		for tries := 0; tries < 40; tries++ {
			var dec float64
			for i := range x {
				xn[i] = math.Max(x[i]+step*d[i], 0)
				dec += g[i] * (xn[i] - x[i])
			}
			fn = fg(xn, gn)
			if fn <= f+1e-4*dec {
				accepted = true
				break
			}
			step /= 2
		}
		iter++
		if !accepted {
			break // no decrease along the direction: as good as it gets
		}
		// Curvature pair s = xn − x, y = gn − g.
		var s, y []float64
		if len(ss) == o.mem {
			s, y = ss[0], ys[0]
			ss, ys, rho = append(ss[:0], ss[1:]...), append(ys[:0], ys[1:]...), append(rho[:0], rho[1:]...)
		} else {
			s, y = make([]float64, n), make([]float64, n)
		}
		floats.SubTo(s, xn, x)
		floats.SubTo(y, gn, g)
		if sy := floats.Dot(s, y); sy > 1e-12*floats.Norm(s, 2)*floats.Norm(y, 2) {
			ss, ys, rho = append(ss, s), append(ys, y), append(rho, 1/sy)
		}
		copy(x, xn)
		copy(g, gn)
		f = fn
		if o.progress != nil {
			o.progress(iter, f)
		}
		history = append(history, f)
		if w := len(history) - 1 - o.window; w >= 0 && history[w]-f <= o.relTol*math.Abs(f) {
			break
		}
	}
	return f, iter, nil
}
