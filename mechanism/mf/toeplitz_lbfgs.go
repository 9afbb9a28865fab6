package mf

import (
	"context"
	"math"
	"time"
)

// optimizeBandedToeplitzLBFGS is the previous OptimizeBandedToeplitz, kept
// for more than newtonMaxBands coefficients (where the Newton method's
// bands² Hessian would cost too much memory: this one holds O(n + bands))
// and as the tests' reference. It finds a banded Toeplitz strategy with the given
// number of coefficients for n steps of the workload under the schema:
// L-BFGS on log(sens²) + log(error) with the exact gradient, over
// cⱼ = cⱼ₋₁·ρⱼ with ρⱼ = 1/(1 + e^{−pⱼ}) ∈ (0, 1), so every iterate is
// positive and non-increasing (its sensitivity exact), started from
// the coefficients of (1 − z)^(−1/2). Each evaluation costs O(n·bands):
// the inverse series r (forward substitution), the decoder s = a ∗ r, and
// for the gradient u = C⁻¹s, since ∂s/∂cₘ = −(s ∗ r) shifted by m.
func optimizeBandedToeplitzLBFGS(ctx context.Context, w ToeplitzWorkload, n, bands int, s Schema, max bool) (*ToeplitzResult, error) {
	if err := s.validate(n, MaxToeplitzSteps); err != nil {
		return nil, err
	}
	if bands < 1 || bands > n {
		return nil, inputErr("bands %d outside [1, n = %d]", bands, n)
	}
	start := time.Now()
	k, per := s.Participations(n), s.Period(n)
	weight := func(j int) float64 { return float64(n-j) / float64(n) }
	if max {
		weight = func(int) float64 { return 1 }
	}
	c := make([]float64, bands)
	grad := make([]float64, bands)
	coefs := func(p []float64) {
		c[0] = 1
		for j := 1; j < bands; j++ {
			c[j] = c[j-1] / (1 + math.Exp(-p[j-1]))
		}
	}
	var evalErr error
	f := func(p, gp []float64) float64 {
		if evalErr == nil {
			evalErr = ctx.Err()
		}
		coefs(p)
		// sens² = Σ_t y_t², y_t = Σ_{uses u ≤ t} c_{t−u}; ∂/∂c_j = 2 Σ_uses y_{u+j}.
		y := make([]float64, n)
		for i := 0; i < k && i*per < n; i++ {
			for j := 0; j < bands && i*per+j < n; j++ {
				y[i*per+j] += c[j]
			}
		}
		S := 0.0
		for _, v := range y {
			S += v * v
		}
		r, _ := InverseSeries(c, n)
		sd := w.decoder(r)
		E := 0.0
		for j, v := range sd {
			E += weight(j) * v * v
		}
		if !(S > 0 && E > 0) || !finite(S, E) {
			return math.Inf(1)
		}
		if gp == nil {
			return math.Log(S) + math.Log(E)
		}
		u, _ := forwardSolve(c, sd)
		for m := range grad {
			gs := 0.0
			for i := 0; i < k && i*per+m < n; i++ {
				gs += 2 * y[i*per+m]
			}
			ge := 0.0
			for j := m; j < n; j++ {
				ge += weight(j) * sd[j] * u[j-m]
			}
			grad[m] = gs/S - 2*ge/E
		}
		// Chain to p: c_m depends on ρ_i for i ≤ m, ∂c_m/∂p_i = c_m·(1 − ρ_i).
		suffix := 0.0
		for m := bands - 1; m >= 1; m-- {
			suffix += c[m] * grad[m]
			rho := c[m] / c[m-1]
			gp[m-1] = (1 - rho) * suffix
		}
		return math.Log(S) + math.Log(E)
	}
	p0 := make([]float64, max0(bands-1))
	for j := 1; j < bands; j++ {
		rho := float64(2*j-1) / float64(2*j)
		p0[j-1] = math.Log(rho / (1 - rho))
	}
	res := &ToeplitzResult{}
	if bands > 1 {
		x, it := lbfgs(f, p0, 15, 3000, 1e-10)
		if evalErr != nil {
			return nil, evalErr
		}
		p0, res.Iterations = x, it
	}
	coefs(p0)
	res.Coefs = append([]float64(nil), c...)
	res.Loss = math.Exp(f(p0, nil))
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func max0(v int) int {
	if v < 0 {
		return 0
	}
	return v
}

// lbfgs minimizes f (value; gradient into g when g != nil) from x0 by
// L-BFGS with memory m and a backtracking (Armijo) line search, until the
// gradient's largest entry is below tol, a step stops decreasing f, or
// maxIter iterations; it returns the final point and the iterations.
func lbfgs(f func(x, g []float64) float64, x0 []float64, m, maxIter int, tol float64) ([]float64, int) {
	p := len(x0)
	x := append([]float64(nil), x0...)
	g := make([]float64, p)
	fx := f(x, g)
	var ss, ys [][]float64
	var rhos []float64
	dir := make([]float64, p)
	xt, gt := make([]float64, p), make([]float64, p)
	alpha := make([]float64, m)
	it := 0
	for ; it < maxIter; it++ {
		gmax := 0.0
		for _, v := range g {
			gmax = math.Max(gmax, math.Abs(v))
		}
		if gmax < tol {
			break
		}
		// Two-loop recursion: dir = −H·g.
		for i := range dir {
			dir[i] = -g[i]
		}
		for j := len(ss) - 1; j >= 0; j-- {
			alpha[j] = rhos[j] * dotv(ss[j], dir)
			axpyv(-alpha[j], ys[j], dir)
		}
		if n := len(ss); n > 0 {
			scale := dotv(ss[n-1], ys[n-1]) / dotv(ys[n-1], ys[n-1])
			for i := range dir {
				dir[i] *= scale
			}
		} else {
			for i := range dir {
				dir[i] /= math.Max(gmax, 1)
			}
		}
		for j := range ss {
			beta := rhos[j] * dotv(ys[j], dir)
			axpyv(alpha[j]-beta, ss[j], dir)
		}
		slope := dotv(g, dir)
		if slope >= 0 {
			for i := range dir {
				dir[i] = -g[i]
			}
			slope = dotv(g, dir)
			ss, ys, rhos = nil, nil, nil
		}
		step, ok := 1.0, false
		var ft float64
		for ls := 0; ls < 50; ls++ {
			for i := range x {
				xt[i] = x[i] + step*dir[i]
			}
			ft = f(xt, gt)
			if ft <= fx+1e-4*step*slope {
				ok = true
				break
			}
			step /= 2
		}
		if !ok || fx-ft <= 1e-15*math.Abs(fx) {
			if ok {
				copy(x, xt)
			}
			break
		}
		s := make([]float64, p)
		y := make([]float64, p)
		for i := range s {
			s[i] = xt[i] - x[i]
			y[i] = gt[i] - g[i]
		}
		if sy := dotv(s, y); sy > 1e-300 {
			if len(ss) == m {
				ss, ys, rhos = ss[1:], ys[1:], rhos[1:]
			}
			ss, ys, rhos = append(ss, s), append(ys, y), append(rhos, 1/sy)
		}
		copy(x, xt)
		copy(g, gt)
		fx = ft
	}
	return x, it
}
