package newton

import (
	"context"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
)

// maxFixedPoint caps the primal–dual fixed-point steps before Newton.
const maxFixedPoint = 4

// fastContraction: the fixed-point phase continues only if its first step
// closes this fraction of the gap estimated at the start (AllRange: 0.94 at
// n = 256 and 512, where the starting dual point is itself 6% of the gap
// below the optimum, 0.99 from n = 1024; Prefix: 0.65–0.78, where Newton is
// better).
const fastContraction = 0.9

// fpStartGap: the fixed-point phase is skipped when the relative gap at
// the start, estimated from the dual value at its dual point, exceeds
// this. Its first step then rarely closes fastContraction of the gap and
// was thrown away after costing an eigendecomposition with vectors and two
// Cholesky-whitenings (16 of Prefix n = 2048's 121 DGEMM-equivalents);
// deciding from S's eigenvalues alone costs a third of that. Measured
// starting gaps (n = 256 … 2048): Prefix 3.4e-3–3.5e-3 (first step closes
// 65–78%: skip), weighted discrete ranges 1.1e-4–6.6e-4 and AllRange
// 6.6e-5–1.2e-4 (the step closes > 99%: keep). Those are gaps of the
// V^{1/2} start; a caller's warm start (Options.Start) always gets the
// step: skipping it there cost mechanism/plan's warm-started census
// descent 81 Newton iterations instead of 64.
const fpStartGap = 1.5e-3

// fixedPoint runs at most maxFixedPoint primal–dual fixed-point steps
// before Newton's method: y = diag(X⁻¹VX⁻¹) at the current X, then
// X ← (D^{1/2}VD^{1/2})^{1/2} scaled to unit diagonal, D = diag(y) — the
// optimality conditions read as an iteration. Each step costs one
// eigendecomposition with vectors and a few triangular products (about
// half a Newton iteration), and its eigenvalues certify the bound
// (tr S^{1/2})²/Σy for free. Measured with numpy at n = 512 from the V^{1/2}
// start: AllRange gap 8e-5 → 3e-8 → 4e-11, Prefix 3e-3 → 3e-4 → 2e-5, then
// linear at ratio ≈ 0.13, where Newton takes over. Before the first step
// S's eigenvalues alone certify the start: optimal to the tolerance ends
// the solve there, a gap above fpStartGap (from the V^{1/2} start) hands
// over to Newton at once. Otherwise the phase stops when a step gains less
// than a factor 4 in objective gap (or fails to decrease F), and is
// converged if the certified gap already meets Options.Tol.
//
// It certifies as it goes, so its certify has nothing left to do; the
// dense Newton method reads its outcome.
type fixedPoint struct {
	s     *newtonState
	opt   Options
	start time.Time
	res   *Result
	warm  bool // X is the caller's warm start (Options.Start)

	iter     int
	best     float64 // the best bound certified at an earlier X
	prevDrop float64 // the previous step's relative decrease of F

	// The outcome: converged, with the certified bound and tr(X⁻¹) at the
	// final X; otherwise bound is −∞ and Newton's method takes over.
	bound, trXinv float64
	converged     bool
}

func (p *fixedPoint) prepare(context.Context) error {
	p.best, p.prevDrop, p.bound = math.Inf(-1), math.Inf(1), math.Inf(-1)
	return nil
}

// step takes one fixed-point step (before the first, certify the start).
func (p *fixedPoint) step(ctx context.Context) (bool, error) {
	s, opt := p.s, p.opt
	if !(p.iter < maxFixedPoint && p.iter < opt.MaxIter && ctx.Err() == nil) {
		return true, nil
	}
	// Dual point at the current X from U = chol(X), M = U⁻ᵀVU⁻¹.
	y, tr, ok := s.dualPoint()
	if !ok {
		return true, nil
	}
	// S = D^{1/2}(V+θI)D^{1/2} → Q, λ; X_new = normalize(Q·diag(√λ)·Qᵀ)
	// (the outer D^{-1/2} factors cancel in the normalization).
	r := make([]float64, s.n)
	sy := 0.0
	for i, yi := range y {
		r[i] = math.Sqrt(yi)
		sy += yi
	}
	if p.iter == 0 && p.startDecided(y, tr, r, sy) {
		return true, nil
	}
	return p.advance(y, r, sy), nil
}

// startDecided uses, before the first step, S's eigenvalues alone (a
// third of the cost of the vectors at n = 2048): they give the certified
// gap at the start and an estimate of it, which decide whether a step is
// worth taking at all (see fpStartGap). S goes to s.g, so that
// M = U⁻ᵀVU⁻¹ survives for Newton's method. It reports whether the phase
// is over.
func (p *fixedPoint) startDecided(y []float64, tr float64, r []float64, sy float64) bool {
	s, opt := p.s, p.opt
	fOld := s.f
	s.loadScaledV(s.g, r)
	if !blas.SymEig(s.g, s.lam, false) {
		return true
	}
	b, est := dualValues(s.lam, sy)
	it := Iteration{Iter: 1, Objective: fOld * s.scale, LowerBound: b * s.scale, Gap: (fOld - b) / fOld}
	if (fOld-b)/fOld <= opt.Tol {
		// The start is optimal to the tolerance (Identity, and any V whose
		// V^{1/2} start is its optimum): certified, done.
		record(p.res, opt, p.start, it)
		s.y = y
		p.iter, p.bound, p.trXinv, p.converged = 1, b, tr, true
		return true
	}
	if !p.warm && (fOld-est)/fOld > fpStartGap {
		// Far from the optimum: Newton's turn, from this X.
		record(p.res, opt, p.start, it)
		p.iter = 1
		return true
	}
	return false
}

// advance takes the fixed-point step from the dual point y (r = √y,
// sy = Σy) and reports whether the phase is over.
func (p *fixedPoint) advance(y, r []float64, sy float64) bool {
	s, opt := p.s, p.opt
	s.loadScaledV(s.m, r)
	if !s.eigen(s.lam) {
		return true
	}
	b, est := dualValues(s.lam, sy)
	correlationSqrt(s.a, s.m, s.lam)
	fOld := s.f
	fNew, ok := s.evaluate(s.a)
	p.iter++
	it := Iteration{Iter: p.iter, Objective: fOld * s.scale, LowerBound: b * s.scale, Gap: (fOld - b) / fOld}
	if b > p.best {
		p.best = b
		s.y = y
	}
	if !ok || fNew >= fOld {
		// Not a descent: keep the current X (restore its U and M).
		s.evaluate(s.x)
		record(p.res, opt, p.start, it)
		return true
	}
	if p.iter == 1 && (fOld-fNew) < fastContraction*(fOld-est) {
		// The first step closed less than fastContraction of the gap: the
		// fixed point contracts slowly here, and Newton's method does
		// better from the V^{1/2} start than from this point (measured:
		// Prefix n = 2048 needed an extra damped step). Keep X and hand
		// over.
		s.evaluate(s.x)
		record(p.res, opt, p.start, it)
		return true
	}
	blas.Copy(s.x, s.a)
	s.f = fNew
	it.Step = 1
	record(p.res, opt, p.start, it)
	return p.settled(fOld, fNew, est)
}

// settled decides, after an accepted step from F = fOld to fNew, whether
// the phase is over: certified by the previous X's bound or by a direct
// certificate once F has settled, or slowing to a linear rate.
func (p *fixedPoint) settled(fOld, fNew, est float64) bool {
	s, opt := p.s, p.opt
	// The bound from the previous X certifies the new, better X.
	if (s.f-p.best)/s.f <= opt.Tol {
		// trXinv must belong to the returned X.
		_, tr, _ := s.dualPoint()
		p.bound, p.trXinv, p.converged = p.best, tr, true
		return true
	}
	drop := (fOld - fNew) / fOld
	if drop <= 100*opt.Tol || (s.f-est)/s.f <= opt.Tol {
		// F has settled, or the estimate says the new X is already optimal
		// to the tolerance; the eigenvalue-based bound is limited by its
		// rounding safeguard for ill-conditioned S, so certify with
		// singular values at this X.
		if b, tr, ok := s.certifyDirect(opt.Tol, math.Max(0, (s.f-est)/s.f)); ok && (s.f-b)/s.f <= opt.Tol {
			p.bound, p.trXinv, p.converged = b, tr, true
		}
		return true
	}
	if drop > p.prevDrop/5 {
		return true // linear and slow: Newton's turn
	}
	p.prevDrop = drop
	return false
}

func (p *fixedPoint) certify() error { return nil }

// loadScaledV fills dst with S = D^{1/2}(V/s + θI)D^{1/2}, r = diag(D^{1/2}).
func (s *newtonState) loadScaledV(dst blas.General, r []float64) {
	n := s.n
	s.loadV(dst, s.theta)
	s.par(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := dst.Data[i*n : i*n+n]
			for j := range row {
				row[j] *= r[i] * r[j]
			}
		}
	})
}

// dualPoint returns y = diag(X⁻¹VX⁻¹) and tr(X⁻¹) at the current X from
// U = chol(X) and M = U⁻ᵀVU⁻¹ (set by evaluate): with Y = U⁻¹,
// X⁻¹VX⁻¹ = Y·M·Yᵀ and X⁻¹ = Y·Yᵀ. It uses s.g and s.a.
func (s *newtonState) dualPoint() (y []float64, trXinv float64, ok bool) {
	n := s.n
	yinv, t := s.g, s.a
	blas.Copy(yinv, s.u)
	if !blas.TriInverse(gblas.Upper, yinv) {
		return nil, 0, false
	}
	blas.Copy(t, s.m)
	blas.Trmm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, yinv, t) // T = Y·M
	y = make([]float64, n)
	for k := 0; k < n; k++ {
		acc, tr := 0.0, 0.0
		for j := k; j < n; j++ { // Y is upper triangular
			yk := yinv.Data[k*n+j]
			acc += t.Data[k*n+j] * yk
			tr += yk * yk
		}
		if !(acc > 0) {
			return nil, 0, false
		}
		y[k] = acc
		trXinv += tr
	}
	return y, trXinv, true
}
