package mf

import (
	"context"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
)

// ToeplitzResult is an optimized banded Toeplitz strategy.
type ToeplitzResult struct {
	// Coefs are C's coefficients c₀ = 1 ≥ c₁ ≥ … ≥ 0 (len = bands).
	Coefs []float64
	// Loss is the mean (or max) per-step squared error × sens² per unit σ².
	Loss       float64
	Iterations int
	Seconds    float64
}

// OptimizeBandedToeplitz finds a banded Toeplitz strategy with the given
// number of coefficients for n steps of the workload under the schema,
// minimizing F = log(sens²) + log(error) (the loss's logarithm) by a
// projected Newton method with the exact gradient and Hessian (bandedLoss,
// O(n·bands) each). The variables are the drops eⱼ = cⱼ − cⱼ₊₁ ≥ 0 (the
// last coefficient itself for j = bands − 1), so every iterate is
// non-negative and non-increasing: its sensitivity is exact (trailing
// coefficients may be 0 where the schema's separation is below bands).
// Drops at the bound 0 whose gradient pushes out of the feasible set are
// held there (the active set); the others take the Newton step of the
// reduced Hessian (its eigenvalues replaced by their absolute values where
// it is not positive definite). It starts from the coefficients of
// (1 − z)^(−1/2) (SqrtBands) and stops when the Newton decrement λ²/2 —
// the predicted decrease of F, i.e. the loss's relative distance to the
// local optimum — is below bandedDecrementTol (1e-14), or a step no longer
// lowers F. Each iteration costs O(n·bands + bands³) time and O(n + bands²)
// memory; above newtonMaxBands (1024) coefficients the previous method,
// L-BFGS on log-ratios of consecutive coefficients to a 1e-10 gradient
// with the exact O(n·bands) gradient, runs instead.
func OptimizeBandedToeplitz(ctx context.Context, w ToeplitzWorkload, n, bands int, s Schema, max bool) (*ToeplitzResult, error) {
	if err := s.validate(n, MaxToeplitzSteps); err != nil {
		return nil, err
	}
	if bands < 1 || bands > n {
		return nil, inputErr("bands %d outside [1, n = %d]", bands, n)
	}
	if bands > newtonMaxBands {
		return optimizeBandedToeplitzLBFGS(ctx, w, n, bands, s, max)
	}
	start := time.Now()
	l := newBandedLoss(w, n, bands, s, max)
	c := SqrtBands(bands, n)
	res := &ToeplitzResult{}
	if bands > 1 {
		var err error
		c, res.Iterations, err = l.projectedNewton(ctx, c, 200)
		if err != nil {
			return nil, err
		}
	}
	f, _, _ := l.eval(c, false)
	if math.IsInf(f, 1) {
		return nil, inputErr("banded Toeplitz loss is not finite at n = %d, %d bands", n, bands)
	}
	res.Coefs = c
	res.Loss = math.Exp(f)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// newtonMaxBands is the most coefficients OptimizeBandedToeplitz gives
// the Newton method: its Hessian and Gram take ~8 bands² floats (64 MB
// at 1024) and each iteration O(bands³) flops. Above it, the L-BFGS method
// (O(n + bands) memory, O(n·bands) per iteration) runs instead.
var newtonMaxBands = 1024 // a variable so that a test can lower it

// bandedDecrementTol is the stopping threshold on the Newton decrement
// λ²/2 of F = log(loss): near the optimum F − F* ≈ λ²/2, so the returned
// loss is within a relative 1e-14 of the local optimum's (1e-9 would do
// for the loss; Newton's quadratic convergence makes the extra digits
// about one more iteration, and they make the KKT conditions hold to
// ~1e-7 of the gradient's scale).
const bandedDecrementTol = 1e-14

// projectedNewton minimizes l over non-negative, non-increasing c from c0
// (c₀ = 1); it returns the final c (c₀ = 1) and the iterations. The
// variables are the drops eⱼ = cⱼ − cⱼ₊₁ (e_{b−1} = c_{b−1}), so c_m =
// Σ_{j≥m} eⱼ and the feasible set is the orthant e ≥ 0. F is scale free,
// so its Hessian is singular along c; the method minimizes
// F + (c₀ − 1)²/2 instead (same minimum value, attained with c₀ = 1: any c
// rescaled to c₀ = 1 keeps F and zeroes the penalty) and rescales every
// accepted iterate to c₀ = 1.
func (l *bandedLoss) projectedNewton(ctx context.Context, c0 []float64, maxIter int) ([]float64, int, error) {
	b := l.b
	e := make([]float64, b)
	toDrops := func(c []float64) {
		for j := 0; j < b; j++ {
			e[j] = c[j]
			if j+1 < b {
				e[j] -= c[j+1]
			}
		}
	}
	toC := func(e, c []float64) {
		acc := 0.0
		for j := b - 1; j >= 0; j-- {
			acc += e[j]
			c[j] = acc
		}
	}
	c := append([]float64(nil), c0...)
	toDrops(c)
	f, gc, hc := l.eval(c, true)
	if math.IsInf(f, 1) {
		return nil, 0, inputErr("banded Toeplitz start has a non-finite loss")
	}
	ge := make([]float64, b)
	he := make([]float64, b*b)
	trial, ct := make([]float64, b), make([]float64, b)
	dir := make([]float64, b)
	active := make([]bool, b)
	it := 0
	for ; it < maxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, it, err
		}
		// At c₀ = 1 the penalty adds nothing to the gradient and 1 to
		// every entry of the Hessian in e (c₀ = Σ eⱼ).
		bandedToDrops(gc, hc, b, ge, he)
		for i := range he {
			he[i]++
		}
		free := activeSet(e, ge, active)
		dec := newtonDirection(he, ge, b, free, dir)
		moveActive := false
		for j := range e {
			if active[j] && e[j] > 0 {
				dir[j] = -e[j] // to the bound
				moveActive = true
			}
		}
		if dec/2 < bandedDecrementTol && !moveActive {
			break
		}
		// Backtracking on the projected arc, Armijo on F + (c₀ − 1)²/2.
		step, accepted := 1.0, false
		var ft float64
		for ls := 0; ls < 60; ls++ {
			lin := 0.0
			for j := range e {
				trial[j] = math.Max(0, e[j]+step*dir[j])
				lin += ge[j] * (trial[j] - e[j])
			}
			toC(trial, ct)
			if ct[0] > 0 {
				fv, _, _ := l.eval(ct, false)
				ft = fv + (ct[0]-1)*(ct[0]-1)/2
				if ft <= f+1e-4*lin {
					accepted = true
					break
				}
			}
			step /= 2
		}
		if !accepted {
			break
		}
		for j := range ct {
			c[j] = ct[j] / ct[0]
		}
		toDrops(c)
		fNew, gNew, hNew := l.eval(c, true)
		progress := f - fNew
		f, gc, hc = fNew, gNew, hNew
		if progress <= 1e-15*math.Abs(f) && !moveActive {
			it++
			break
		}
	}
	return c, it, nil
}

// activeSet marks in active the drops held at their bound (Bertsekas): those
// within eps of 0 whose gradient is positive, eps the projected gradient's
// size (at most 1e-8); it returns the others, the free variables.
func activeSet(e, ge []float64, active []bool) []int {
	eps := 0.0
	for j := range e {
		v := e[j] - math.Max(0, e[j]-ge[j])
		eps += v * v
	}
	eps = math.Min(1e-8, math.Sqrt(eps))
	var free []int
	for j := range e {
		active[j] = e[j] <= eps && ge[j] > 0
		if !active[j] {
			free = append(free, j)
		}
	}
	return free
}

// bandedToDrops maps the gradient and Hessian in c (b, b×b) to those in
// the drops eⱼ = cⱼ − cⱼ₊₁ (c_m = Σ_{j≥m} eⱼ): gₑⱼ = Σ_{m≤j} g_m and
// Hₑⱼₖ = Σ_{m≤j, l≤k} H_ml.
func bandedToDrops(g, h []float64, b int, ge, he []float64) {
	acc := 0.0
	for m := 0; m < b; m++ {
		acc += g[m]
		ge[m] = acc
	}
	tmp := make([]float64, b*b)
	for m := 0; m < b; m++ {
		a := 0.0
		for k := 0; k < b; k++ {
			a += h[m*b+k]
			tmp[m*b+k] = a
		}
	}
	for k := 0; k < b; k++ {
		a := 0.0
		for m := 0; m < b; m++ {
			a += tmp[m*b+k]
			he[m*b+k] = a
		}
	}
}

// newtonDirection sets dir on the free coordinates to −H_FF⁻¹·g_F (by
// Cholesky; where H_FF is not positive definite, its eigenvalues replaced
// by their absolute values, floored at 1e-10 of the largest) and returns
// the decrement −g_F·dir_F. Coordinates outside free are left 0.
func newtonDirection(h, g []float64, p int, free []int, dir []float64) float64 {
	for i := range dir {
		dir[i] = 0
	}
	nf := len(free)
	if nf == 0 {
		return 0
	}
	hf := mat.NewSymDense(nf, nil)
	gf := mat.NewVecDense(nf, nil)
	for a, i := range free {
		gf.SetVec(a, g[i])
		for bb := a; bb < nf; bb++ {
			hf.SetSym(a, bb, h[i*p+free[bb]])
		}
	}
	var x mat.VecDense
	var ch mat.Cholesky
	if ch.Factorize(hf) && ch.SolveVecTo(&x, gf) == nil {
		dec := 0.0
		for a, i := range free {
			dir[i] = -x.AtVec(a)
			dec += g[i] * x.AtVec(a)
		}
		if dec > 0 {
			return dec
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(hf, true) {
		for _, i := range free {
			dir[i] = -g[i]
		}
		return dotv(g, g)
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := 0.0
	for _, v := range vals {
		top = math.Max(top, math.Abs(v))
	}
	floor := math.Max(1e-10*top, 1e-300)
	dec := 0.0
	for e, lam := range vals {
		cv := 0.0
		for a := range free {
			cv += vecs.At(a, e) * gf.AtVec(a)
		}
		den := math.Max(math.Abs(lam), floor)
		dec += cv * cv / den
		for a, i := range free {
			dir[i] -= vecs.At(a, e) * cv / den
		}
	}
	return dec
}

// forwardSolve returns u with c ∗ u = s (C·u = s, C banded Toeplitz).
func forwardSolve(c, s []float64) ([]float64, error) {
	u := make([]float64, len(s))
	for t := range s {
		v := s[t]
		for j := 1; j < len(c) && j <= t; j++ {
			v -= c[j] * u[t-j]
		}
		u[t] = v / c[0]
	}
	return u, nil
}

func dotv(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func axpyv(a float64, x, y []float64) {
	for i := range x {
		y[i] += a * x[i]
	}
}
