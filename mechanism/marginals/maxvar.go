package marginals

import (
	"context"
	"fmt"
	"math"
)

// centred and tGrowth steer the barrier method: centring at one t ends when
// half the squared Newton decrement is below centred, and t then grows by
// tGrowth. Measured on Adult ≤3-way, 50 binary attributes ≤3-way and a mixed
// 5-attribute domain (Newton steps to gap 1e-8, for centred 1e-10…1e-1 and
// tGrowth 10…100): 1e-3 and 100 took 60/19/43 steps against 90/60/72 for
// the textbook 1e-10 and 10. Loose centring is safe because the stopping
// test is the certificate, not the central path.
const centred, tGrowth = 1e-3, 100.0

// maxProblem is min f(v) = Σ_T Δ_T²/v_T subject to (A v)_S ≤ 1, v > 0, with
// A_{S,T} = w_S² p_{S,T} over the positive-weight marginals S (rows) and the
// residuals T (columns). Its optimal value equals the smallest achievable
// max_S w_S² var_S at unit sensitivity (see the package documentation).
type maxProblem struct {
	nT, nS int
	d2     []float64 // Δ_T²
	// rows (CSR) and columns (CSC) of A
	rptr, ridx []int32
	rval       []float64
	cptr, cidx []int32
	cval       []float64
}

func (p *Plan) newMaxProblem() *maxProblem {
	l := p.lat
	mp := &maxProblem{nT: len(p.Residuals), d2: make([]float64, len(p.Residuals))}
	for i, r := range p.Residuals {
		mp.d2[i] = r.Sensitivity2
	}
	mp.rptr = []int32{0}
	for i, s := range p.Sets {
		if s.Weight == 0 {
			continue
		}
		w := s.Weight * s.Weight
		for q := l.lo[i]; q < l.hi[i]; q++ {
			mp.ridx = append(mp.ridx, l.idx[q])
			mp.rval = append(mp.rval, w*l.coef[q])
		}
		mp.rptr = append(mp.rptr, int32(len(mp.ridx)))
	}
	mp.nS = len(mp.rptr) - 1
	// Transpose to CSC.
	mp.cptr = make([]int32, mp.nT+1)
	for _, t := range mp.ridx {
		mp.cptr[t+1]++
	}
	for t := 0; t < mp.nT; t++ {
		mp.cptr[t+1] += mp.cptr[t]
	}
	mp.cidx = make([]int32, len(mp.ridx))
	mp.cval = make([]float64, len(mp.ridx))
	next := append([]int32(nil), mp.cptr[:mp.nT]...)
	for s := 0; s < mp.nS; s++ {
		for q := mp.rptr[s]; q < mp.rptr[s+1]; q++ {
			t := mp.ridx[q]
			mp.cidx[next[t]] = int32(s)
			mp.cval[next[t]] = mp.rval[q]
			next[t]++
		}
	}
	return mp
}

// mulA sets dst = A·v (length nS).
func (mp *maxProblem) mulA(dst, v []float64) {
	for s := 0; s < mp.nS; s++ {
		acc := 0.0
		for q := mp.rptr[s]; q < mp.rptr[s+1]; q++ {
			acc += mp.rval[q] * v[mp.ridx[q]]
		}
		dst[s] = acc
	}
}

// mulAT sets dst = Aᵀ·u (length nT).
func (mp *maxProblem) mulAT(dst, u []float64) {
	for t := 0; t < mp.nT; t++ {
		acc := 0.0
		for q := mp.cptr[t]; q < mp.cptr[t+1]; q++ {
			acc += mp.cval[q] * u[mp.cidx[q]]
		}
		dst[t] = acc
	}
}

// upper returns the certified upper bound max_S (A v)_S · f(v): the largest
// variance of v rescaled to unit sensitivity. av is A·v.
func (mp *maxProblem) upper(v, av []float64) float64 {
	f := 0.0
	for t, x := range v {
		f += mp.d2[t] / x
	}
	m := 0.0
	for _, x := range av {
		m = math.Max(m, x)
	}
	return m * f
}

// lower returns the dual bound (Σ_T Δ_T √(Aᵀμ)_T)² / Σ_S μ_S, valid for
// every μ ≥ 0, μ ≠ 0. atmu is Aᵀμ.
func (mp *maxProblem) lower(mu, atmu []float64) float64 {
	phi, sum := 0.0, 0.0
	for t, g := range atmu {
		phi += math.Sqrt(mp.d2[t] * math.Max(g, 0))
	}
	for _, m := range mu {
		sum += m
	}
	return phi * phi / sum
}

// planMax solves the max-variance problem by the barrier method (Boyd &
// Vandenberghe, ch. 11): for increasing t it minimizes
//
//	B_t(v) = t·Σ_T Δ_T²/v_T − Σ_S log(1 − (A v)_S)
//
// by Newton's method with a backtracking (Armijo) line search, which
// converges for every t because B_t is smooth and strictly convex on its
// domain, and is invariant under rescaling of the variables and constraints
// — the coefficients here span many orders of magnitude (1/d² per attribute
// outside a residual). The Hessian t·diag(2Δ²/v³) + Aᵀdiag(1/s²)A, s = 1 − Av,
// is inverted through the Woodbury identity on the multipliers' side:
// (diag(s²) + A D⁻¹ Aᵀ) y = A D⁻¹ g, solved by preconditioned conjugate
// gradients. Every iterate is certified
// independently: μ_S = 1/(t·s_S) ≥ 0 gives the dual bound lower(μ) and the
// iterate rescaled to unit sensitivity the primal value upper(v); the
// method stops when their relative gap is at most o.Tol. It sets the residual
// variances (normalised to unit sensitivity) and returns the lower bound and
// the number of Newton steps.
func (p *Plan) planMax(ctx context.Context, o Options) (float64, int, error) {
	mp := p.newMaxProblem()
	p.planSum()
	b := newMaxBarrier(mp, p.Residuals)
	steps := 0
	gap := math.Inf(1)
	for steps < o.MaxIter {
		if gap = b.certify(); gap <= o.Tol {
			break
		}
		if err := ctx.Err(); err != nil {
			return 0, steps, fmt.Errorf("marginals: max-variance plan cancelled after %d Newton steps at gap %.3g: %w", steps, gap, err)
		}
		steps++
		dec := b.newtonDirection()
		b.stepBound()
		if dec/2 <= centred {
			b.tt *= tGrowth // centred: follow the central path
			continue
		}
		if !b.lineSearch(dec) {
			b.tt *= tGrowth // no progress possible at this t (rounding): move on
		}
	}
	if !(gap <= o.Tol) {
		return 0, steps, fmt.Errorf("marginals: the max-variance solver stopped after %d Newton steps at relative gap %.3g (wanted %.3g)", steps, gap, o.Tol)
	}
	f := 0.0
	for t, x := range b.bestV {
		f += mp.d2[t] / x
	}
	for t := range p.Residuals {
		p.Residuals[t].Variance = b.bestV[t] * f
	}
	return b.bestLB, steps, nil
}

// maxBarrier is the state of planMax's barrier method: the barrier
// parameter tt, the iterate v with A v and the slacks s = 1 − A v, the
// best certified primal and dual values so far, and the work vectors of a
// Newton step (allocated once: a plan takes hundreds of steps).
type maxBarrier struct {
	mp             *maxProblem
	tt             float64
	v, av, sl      []float64
	mu, atmu       []float64
	bestUB, bestLB float64
	bestV          []float64
	// Newton step: gradient g, D⁻¹, direction dv, A dv, the line search's
	// trial point nv, and scratch.
	g, dinv, dv, nv, adv []float64
	tmpT, rhs, y, tmpS   []float64
	solver               *pcg
}

// newMaxBarrier starts from the sum plan's variances scaled to
// max_S (A v)_S = 1/2, with t such that the central point's duality gap
// nS/t equals the objective.
func newMaxBarrier(mp *maxProblem, sum []Residual) *maxBarrier {
	nT, nS := mp.nT, mp.nS
	v := make([]float64, nT)
	for t, r := range sum {
		v[t] = r.Variance
	}
	av := make([]float64, nS)
	mp.mulA(av, v)
	amax := 0.0
	for _, x := range av {
		amax = math.Max(amax, x)
	}
	for t := range v {
		v[t] *= 0.5 / amax
	}
	fv := 0.0
	for t, x := range v {
		fv += mp.d2[t] / x
	}
	return &maxBarrier{
		mp: mp, tt: float64(nS) / fv, v: v, av: av, sl: make([]float64, nS),
		mu: make([]float64, nS), atmu: make([]float64, nT),
		bestUB: math.Inf(1), bestV: make([]float64, nT),
		g: make([]float64, nT), dinv: make([]float64, nT), dv: make([]float64, nT), nv: make([]float64, nT),
		adv: make([]float64, nS), tmpT: make([]float64, nT), rhs: make([]float64, nS), y: make([]float64, nS),
		tmpS: make([]float64, nS), solver: newPCG(nS),
	}
}

// certify sets the slacks and the central multipliers μ_S = 1/(t·s_S) at
// v, updates the best primal value upper(v) and dual bound lower(μ), and
// returns their relative gap.
func (b *maxBarrier) certify() float64 {
	mp := b.mp
	mp.mulA(b.av, b.v)
	for k := range b.sl {
		b.sl[k] = 1 - b.av[k]
		b.mu[k] = 1 / (b.tt * b.sl[k])
	}
	mp.mulAT(b.atmu, b.mu)
	if ub := mp.upper(b.v, b.av); ub < b.bestUB {
		b.bestUB = ub
		copy(b.bestV, b.v)
	}
	b.bestLB = math.Max(b.bestLB, mp.lower(b.mu, b.atmu))
	return (b.bestUB - b.bestLB) / b.bestUB
}

// newtonDirection sets dv to the Newton direction of B_t at v (through the
// Woodbury identity, see planMax) and returns the Newton decrement
// λ² = −gᵀdv.
func (b *maxBarrier) newtonDirection() float64 {
	mp, tt := b.mp, b.tt
	// Gradient g = −tΔ²/v² + Aᵀ(1/s) = t(−Δ²/v² + Aᵀμ); D = t·2Δ²/v³.
	for t, x := range b.v {
		b.g[t] = tt * (-mp.d2[t]/(x*x) + b.atmu[t])
		b.dinv[t] = x * x * x / (2 * tt * mp.d2[t])
		b.tmpT[t] = b.dinv[t] * b.g[t]
	}
	mp.mulA(b.rhs, b.tmpT)
	// (diag(s²) + A D⁻¹ Aᵀ) y = A D⁻¹ g, passing s/μ = s² as the diagonal.
	for k := range b.mu {
		b.mu[k] = 1 / b.sl[k]
	}
	b.solver.solve(mp, b.y, b.rhs, b.dinv, b.sl, b.mu)
	mp.mulAT(b.tmpT, b.y)
	dec := 0.0 // Newton decrement λ² = −gᵀdv
	for t := range b.dv {
		b.dv[t] = -b.dinv[t] * (b.g[t] - b.tmpT[t])
		dec -= b.g[t] * b.dv[t]
	}
	if !(dec > 0) { // an inexact solve lost descent: fall back to D⁻¹g
		dec = 0
		for t := range b.dv {
			b.dv[t] = -b.dinv[t] * b.g[t]
			dec += b.dinv[t] * b.g[t] * b.g[t]
		}
	}
	return dec
}

// stepBound sets adv = A dv and tightens the dual bound with the Newton
// step's multiplier estimate μ_S = (1 + (A dv)_S/s_S)/(t s_S) (clamped at
// 0; every μ ≥ 0 gives a valid bound), which is much closer to the optimal
// multipliers than 1/(t s) away from the central path.
func (b *maxBarrier) stepBound() {
	mp := b.mp
	mp.mulA(b.adv, b.dv)
	for k := range b.mu {
		b.mu[k] = math.Max(0, 1+b.adv[k]/b.sl[k]) / (b.tt * b.sl[k])
	}
	mp.mulAT(b.atmu, b.mu)
	b.bestLB = math.Max(b.bestLB, mp.lower(b.mu, b.atmu))
}

// lineSearch backtracks (Armijo) along dv from inside the domain and moves
// v there; false when no step is accepted.
//
// B_t(v + α·dv) − B_t(v) is evaluated term by term
// (t·Σ Δ²·(−α dv)/(v(v+α dv)) − Σ log1p(−α (A dv)/s)): at large t
// B_t itself is too large for its change to survive rounding.
func (b *maxBarrier) lineSearch(dec float64) bool {
	mp, tt, v, dv := b.mp, b.tt, b.v, b.dv
	alpha := math.Min(1, 0.99*boundaryStep(v, dv))
	if a := 0.99 * boundaryStep(b.sl, negate(b.tmpS, b.adv)); a < alpha {
		alpha = a
	}
	for tries := 0; tries < 60; tries++ {
		diff := 0.0
		for t, x := range v {
			b.nv[t] = x + alpha*dv[t]
			diff -= tt * mp.d2[t] * alpha * dv[t] / (x * b.nv[t])
		}
		for k, s := range b.sl {
			diff -= math.Log1p(-alpha * b.adv[k] / s)
		}
		if diff <= -0.25*alpha*dec {
			b.v, b.nv = b.nv, b.v
			return true
		}
		alpha /= 2
	}
	return false
}

// negate sets dst = −x and returns it.
func negate(dst, x []float64) []float64 {
	for i, v := range x {
		dst[i] = -v
	}
	return dst
}

// boundaryStep returns the largest α with x + α·dx ≥ 0 (+Inf when dx ≥ 0).
func boundaryStep(x, dx []float64) float64 {
	a := math.Inf(1)
	for i := range x {
		if dx[i] < 0 {
			a = math.Min(a, -x[i]/dx[i])
		}
	}
	return a
}

// pcg solves (A H⁻¹ Aᵀ + diag(s/μ)) x = b matrix-free by conjugate
// gradients with the Jacobi preconditioner, to a relative residual of 1e-12
// or 1000 iterations. Each iteration costs two passes over A's nonzeros, so
// on Adult's 470 marginals a Newton step costs ~0.5 ms where a dense
// Cholesky through cgo took ~15 ms (30× slower over a whole plan, measured
// with the same 60 steps). An inexact solution only weakens a step: the
// caller keeps descent, and the certificate decides when to stop.
type pcg struct {
	r, z, p, q, diag []float64
	tT               []float64
}

func newPCG(n int) *pcg {
	return &pcg{r: make([]float64, n), z: make([]float64, n), p: make([]float64, n), q: make([]float64, n), diag: make([]float64, n)}
}

func (c *pcg) solve(mp *maxProblem, x, b, hinv, s, mu []float64) {
	if c.tT == nil {
		c.tT = make([]float64, mp.nT)
	}
	n := mp.nS
	for k := 0; k < n; k++ {
		d := s[k] / mu[k]
		for q := mp.rptr[k]; q < mp.rptr[k+1]; q++ {
			a := mp.rval[q]
			d += a * a * hinv[mp.ridx[q]]
		}
		c.diag[k] = d
	}
	apply := func(dst, src []float64) {
		mp.mulAT(c.tT, src)
		for t := range c.tT {
			c.tT[t] *= hinv[t]
		}
		mp.mulA(dst, c.tT)
		for k := range dst {
			dst[k] += s[k] / mu[k] * src[k]
		}
	}
	bn := 0.0
	for k := 0; k < n; k++ {
		x[k] = b[k] / c.diag[k]
		bn += b[k] * b[k]
	}
	apply(c.q, x)
	rz := 0.0
	for k := 0; k < n; k++ {
		c.r[k] = b[k] - c.q[k]
		c.z[k] = c.r[k] / c.diag[k]
		c.p[k] = c.z[k]
		rz += c.r[k] * c.z[k]
	}
	for it := 0; it < 1000; it++ {
		rn := 0.0
		for _, v := range c.r {
			rn += v * v
		}
		if rn <= 1e-24*bn {
			return
		}
		apply(c.q, c.p)
		pq := 0.0
		for k := 0; k < n; k++ {
			pq += c.p[k] * c.q[k]
		}
		if !(pq > 0) {
			return
		}
		a := rz / pq
		nrz := 0.0
		for k := 0; k < n; k++ {
			x[k] += a * c.p[k]
			c.r[k] -= a * c.q[k]
			c.z[k] = c.r[k] / c.diag[k]
			nrz += c.r[k] * c.z[k]
		}
		beta := nrz / rz
		rz = nrz
		for k := 0; k < n; k++ {
			c.p[k] = c.z[k] + beta*c.p[k]
		}
	}
}
