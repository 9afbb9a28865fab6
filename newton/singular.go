package newton

import (
	"context"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// A singular V (rank r < n) has no minimizer of tr(V X⁻¹) over X ≻ 0: the
// infimum is attained only by a positive semidefinite X of rank r. We solve
// the dual, which needs no regularization. With V = BᵀB (B r×n of full row
// rank, bᵢ its columns) and M(y) = B·diag(y)·Bᵀ = Σᵢ yᵢ·bᵢbᵢᵀ (r×r),
//
//	g(y) = 2·tr(M^{1/2}) − Σᵢ yᵢ,   y ≥ 0,
//
// is concave, smooth wherever M ≻ 0, and equals the weak-duality bound of
// the package documentation (D^{1/2}VD^{1/2} and M share their non-zero
// eigenvalues). Its
// gradient is ∂g/∂yᵢ = dᵢ − 1 with d = diag(X(y)) for
//
//	X(y) = Bᵀ·M^{-1/2}·B = D^{-1/2}(D^{1/2}VD^{1/2})^{1/2}D^{-1/2},
//
// and every X(y)/c with c = max dᵢ is primal feasible (diag ≤ 1, PSD, range
// equal to range(V)) with tr(V (X/c)⁺) = c·tr(M^{1/2}) exactly (X⁺ =
// B⁺M^{1/2}B⁺ᵀ and B·B⁺ = I). At a dual maximizer d = 1 wherever yᵢ > 0
// and dᵢ ≤ 1 where yᵢ = 0, and primal and dual values coincide: the
// returned X is optimal for diag(X) ≤ 1, whose optimum equals the infimum
// with diag(X) = 1 (adding the missing diagonal to X can only lower the
// objective).
//
// The Hessian in the eigenbasis of M = P·Λ·Pᵀ, with C̃ = BᵀP (n×r) and
// sₐ = √λₐ, is
//
//	−∂²g/∂yᵢ∂yⱼ = Σₐ_b Kₐ_b·C̃ᵢₐC̃ᵢ_bC̃ⱼₐC̃ⱼ_b,  Kₐ_b = 1/(sₐ·s_b·(sₐ+s_b)),
//
// the divided difference of 1/√λ. Like the primal system it is a Schur
// product sum: 1/(sₐ+s_b) ≈ Σₜ wₜ·e^{−tₜsₐ}·e^{−tₜs_b} (expSum) gives
// −H̃ = Σₜ wₜ·Gₜ∘Gₜ with Gₜ = C̃·diag(e^{−tₜs}/s)·C̃ᵀ, one n×n×r SYRK per
// term and positive semidefinite by construction. The step solves
// (−H̃ + ρI)p = ∇g with a Levenberg–Marquardt ρ proportional to ‖∇g‖: the
// dual maximizer need not be unique (for V = 11ᵀ any y with Σy = 1 is
// optimal), and that choice keeps fast local convergence for non-isolated
// maximizers. Coordinates at yᵢ = 0 with ∂g/∂yᵢ < 0 are held at zero
// (projected Newton). An iteration costs one r×r eigendecomposition, two
// n×r×r products, the SYRK terms and one n×n Cholesky — and never an
// eigendecomposition of an n×n matrix when r < n.
//
// Bounds y ≥ 0 are handled by a primal–dual interior-point iteration
// (multipliers z of y ≥ 0, Mehrotra predictor–corrector, both solves on one
// Cholesky factor): a projected Newton method was tried first and stalled
// on width-32 ranges (optimal yᵢ = 0 on cells near the ends) and crawled on
// random ranges; the interior-point version converges in a few steps.
// Measured (2026-12-01, OpenBLAS SkylakeX, machine shared by other jobs),
// iterations to certified gap: n = 256: width:k=32 8 (1.8e-10), wrange 6,
// wrelated 9, marginals and total 1 (the uniform start y = t·1, whose g is
// the SVD bound, is optimal there); n = 1024: width:k=32 7 (4e-11),
// wrange:m=2048 6 (3.6e-10), wrelated:m=2048,s=128 9 (3e-10), marginals
// k = 2, 3 and total 1 (≤ 1e-14).

// dualHessTol is the relative accuracy of the exponential-sum dual Hessian
// while far from the optimum, dualHessTolFinal near it: Newton's local rate
// is about the Hessian's relative error, so the final steps use a finer
// one. 1e-4 rather than the 1e-6 used first: the same iterations and
// certified gaps on width:k=32, wrange and wrelated at n = 1024 and 2048,
// and the final system of width:k=32 at n = 2048 took 4.7 s instead of
// 6.7 s (2026-12-01, SkylakeX; 1e-3 also kept the iteration counts).
const (
	dualHessTol      = 1e-2
	dualHessTolFinal = 1e-4
)

// dualSolver holds the dual method's state. Every n×n and n×r buffer is a
// view into the newtonState's workspaces, so the singular path allocates no
// further n×n matrix.
type dualSolver struct {
	n, r    int
	threads int          // as newtonState.threads
	mu      []float64    // eigenvalues of V/s on its numerical range (ascending)
	c       blas.General // n×r, rows bᵢ: V/s = C·Cᵀ on its numerical range
	ct      blas.General // n×r: C̃ = C·P at the current y
	w       blas.General // n×r workspace
	mm      blas.General // r×r: M (destroyed by the eigendecomposition)
	p       blas.General // r×r: eigenvectors of M
	h       blas.General // n×n: −H̃ + ρI, then its Cholesky factor
	gt      blas.General // n×n: Gₜ
	lam     []float64    // eigenvalues of M at y (ascending)
	d       []float64    // diag(X(y))
	y       []float64
	g       float64 // g(y)
	tr      float64 // tr(M^{1/2}) = Σ√λ
}

// rankTol is the relative eigenvalue threshold below which an eigenvalue of
// V counts as zero: eigenvalues of an exactly singular V are computed with
// absolute errors of a few n·ε·μ_max, so the threshold grows with n.
func rankTol(n int) float64 {
	return math.Max(singularTol, 32*float64(n)*0x1p-52)
}

// factorAt sets λ (and, with vectors, P) for M(y); it returns false if
// M(y) is not numerically positive definite or the eigensolver failed.
func (ds *dualSolver) factorAt(y []float64, lam []float64, vectors bool) bool {
	n, r := ds.n, ds.r
	for i := 0; i < n; i++ {
		f := math.Sqrt(y[i])
		src := ds.c.Data[i*r : i*r+r]
		dst := ds.w.Data[i*r : i*r+r]
		for a, x := range src {
			dst[a] = f * x
		}
	}
	blas.Syrk(gblas.Trans, 1, ds.w, 0, ds.mm)
	var ok bool
	if vectors {
		// h is free here (the Newton systems are solved before the line
		// search that calls this): its storage is the scratch.
		ok = symEigIn(ds.mm, ds.p, lam, ds.h)
	} else {
		ok = blas.SymEig(ds.mm, lam, false)
	}
	return ok && lam[0] > 1e-300 && !math.IsInf(lam[r-1], 0) && !math.IsNaN(lam[r-1])
}

// dualValue returns g(y) = 2Σ√λ − Σy and Σ√λ.
func dualValue(y, lam []float64) (g, tr float64) {
	sy := 0.0
	for _, v := range y {
		sy += v
	}
	for _, l := range lam {
		tr += math.Sqrt(l)
	}
	return 2*tr - sy, tr
}

// accept makes y (with λ and P from factorAt) the current point: C̃ = C·P
// and d = diag(C̃·Λ^{-1/2}·C̃ᵀ).
func (ds *dualSolver) accept(y, lam []float64) {
	n, r := ds.n, ds.r
	copy(ds.y, y)
	copy(ds.lam, lam)
	ds.g, ds.tr = dualValue(y, lam)
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, ds.c, ds.p, 0, ds.ct)
	isq := make([]float64, r)
	for a, l := range lam {
		isq[a] = 1 / math.Sqrt(l)
	}
	parallelRows(ds.threads, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			acc := 0.0
			for a, z := range ds.ct.Data[i*r : i*r+r] {
				acc += z * z * isq[a]
			}
			ds.d[i] = acc
		}
	})
}

// primal returns c = max dᵢ and the primal objective c·Σ√λ of X(y)/c.
func (ds *dualSolver) primal() (c, f float64) {
	for _, v := range ds.d {
		c = math.Max(c, v)
	}
	return c, c * ds.tr
}

// hessian forms −H̃ (upper triangle) at the current point on the free
// coordinates (free[i]), compressed into the leading k×k block of h with
// stride k, adds ρ to its diagonal and returns the block.
func (ds *dualSolver) hessian(tau, rho float64, free []int) blas.General {
	n, r := ds.n, ds.r
	s := make([]float64, r)
	for a, l := range ds.lam {
		s[a] = math.Sqrt(l)
	}
	ts, ws := expSum(2*s[0], 2*s[r-1], tau)
	clear(ds.h.Data)
	col := make([]float64, r)
	for t := range ts {
		// Column a carries αₐ = e^{−t·sₐ}/sₐ; once t·sₐ > 40 its every
		// contribution is below e^{−40} relative to the kernel entries it
		// feeds (t·(sₐ+s_b) > 40 too), so only the prefix of small s
		// enters the SYRK (s is ascending).
		k := 0
		for a := 0; a < r; a++ {
			col[a] = math.Sqrt(math.Sqrt(ws[t]) * math.Exp(-ts[t]*s[a]) / s[a])
			if ts[t]*s[a] <= 40 {
				k = a + 1
			}
		}
		if k == 0 {
			continue
		}
		b := blas.General{Rows: n, Cols: k, Stride: k, Data: ds.w.Data[:n*k]}
		parallelRows(ds.threads, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				src := ds.ct.Data[i*r : i*r+k]
				dst := b.Data[i*k : i*k+k]
				for a, z := range src {
					dst[a] = z * col[a]
				}
			}
		})
		blas.Syrk(gblas.NoTrans, 1, b, 0, ds.gt)
		parallelRows(ds.threads, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				hrow := ds.h.Data[i*n+i : i*n+n]
				grow := ds.gt.Data[i*n+i : i*n+n]
				for j, g := range grow {
					hrow[j] += g * g
				}
			}
		})
	}
	k := n
	if free != nil && len(free) < n {
		k = len(free)
		// Compress rows and columns of the free set in place; targets never
		// lie after their sources.
		for ii, i := range free {
			for jj := ii; jj < k; jj++ {
				ds.h.Data[ii*k+jj] = ds.h.Data[i*n+free[jj]]
			}
		}
	}
	hk := blas.General{Rows: k, Cols: k, Stride: k, Data: ds.h.Data[:k*k]}
	for i := 0; i < k; i++ {
		hk.Data[i*k+i] += rho
	}
	return hk
}

// hessScale returns the mean diagonal of −H̃ on the free set, for scaling ρ.
func hessScale(h blas.General) float64 {
	s := 0.0
	for i := 0; i < h.Rows; i++ {
		s += h.Data[i*h.Stride+i]
	}
	return s / float64(h.Rows)
}

// newDualSolver lays the dual method's buffers over s's workspaces: s.m
// holds V's eigenvectors (columns, ascending) and mu its eigenvalues, r of
// which are kept; C = Q·diag(√μ) on those goes to s.g.
func newDualSolver(s *newtonState, mu []float64, r int) *dualSolver {
	n := s.n
	ds := &dualSolver{n: n, r: r, threads: s.threads}
	ds.mu = append([]float64(nil), mu[n-r:]...)
	ds.c = view(s.g.Data, n, r)
	for i := 0; i < n; i++ {
		for a := 0; a < r; a++ {
			ds.c.Data[i*r+a] = s.m.Data[i*n+n-r+a] * math.Sqrt(ds.mu[a])
		}
	}
	ds.ct = view(s.m.Data, n, r)
	ds.w = view(s.u.Data, n, r)
	ds.mm = view(s.x.Data, r, r)
	ds.h = s.a
	ds.gt = s.gr
	ds.p = view(s.gr.Data, r, r) // free whenever Gₜ is not being formed
	ds.lam = make([]float64, r)
	ds.d = make([]float64, n)
	ds.y = make([]float64, n)
	return ds
}

// dualIP is the singular method: the primal–dual interior-point iteration
// on the dual, run on the numerical range of V (s.m holds V's
// eigenvectors, columns ascending, and mu its scaled eigenvalues, r of
// which are above the rank threshold).
//
// z ≥ 0 are the multipliers of y ≥ 0; at the optimum zᵢ = 1 − dᵢ, the
// slack of diag(X) ≤ 1. The iteration keeps y, z > 0 and drives yᵢzᵢ → 0
// (Mehrotra's predictor–corrector: both solves share one Hessian and one
// Cholesky factorization).
type dualIP struct {
	s     *newtonState
	ds    *dualSolver
	opt   Options
	start time.Time
	res   *Result

	iter      int
	status    Status
	bestBound float64
	certified bool    // the last checkpoint met the tolerance
	fCert     float64 // the objective certified there
	tries     int     // certificates that failed to meet the tolerance

	z, grad, lam     []float64
	dya, dza, dy, dz []float64
	trial            []float64
	cmu              float64 // complementarity yᵀz/n at the current point
}

func newDualIP(s *newtonState, mu []float64, r int, opt Options, start time.Time, res *Result) *dualIP {
	n := s.n
	m := &dualIP{s: s, ds: newDualSolver(s, mu, r), opt: opt, start: start, res: res,
		status: IterationLimit, bestBound: math.Inf(-1)}
	m.z, m.grad, m.lam = make([]float64, n), make([]float64, n), make([]float64, r)
	m.dya, m.dza, m.dy, m.dz = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	m.trial = make([]float64, n)
	return m
}

// prepare starts from the uniform dual point: g(t·1) = 2√t·Σ√μ − n·t is
// largest at √t = Σ√μ/n, where it is the SVD bound.
func (m *dualIP) prepare(context.Context) error {
	ds, n := m.ds, m.s.n
	sq := 0.0
	for _, mu := range ds.mu {
		sq += math.Sqrt(mu)
	}
	y := make([]float64, n)
	t := (sq / float64(n)) * (sq / float64(n))
	for i := range y {
		y[i] = t
	}
	if !ds.factorAt(y, m.lam, true) {
		return errEigen("dual start")
	}
	ds.accept(y, m.lam)
	m.s.clock.lap("eigen")
	for i := range m.z {
		m.z[i] = math.Max(1-ds.d[i], 0) + 1e-2
	}
	return nil
}

// step is one interior-point iteration: a certificate when the estimated
// gap says we are there, then the predictor–corrector step and its
// backtracking line search.
func (m *dualIP) step(ctx context.Context) (bool, error) {
	s, ds, opt := m.s, m.ds, m.opt
	m.iter++
	_, f := ds.primal()
	gapEst := (f - ds.g) / f
	it := Iteration{Iter: m.iter, Objective: f * s.scale, LowerBound: math.NaN(), Gap: math.NaN()}
	if (gapEst <= opt.Tol/4 || m.iter > opt.MaxIter || ctx.Err() != nil) && m.checkpoint(f, &it) {
		return true, nil
	}
	if m.iter > opt.MaxIter {
		return true, nil
	}
	if ctx.Err() != nil {
		m.status = Cancelled
		return true, nil
	}
	hk, ok := m.system(gapEst)
	if !ok {
		m.status = Stalled
		record(m.res, opt, m.start, it)
		return true, nil
	}
	ap, ad := m.direction(hk)
	accepted := false
	for alpha := ap; alpha > 1e-10; alpha /= 2 {
		for i := range m.trial {
			m.trial[i] = ds.y[i] + alpha*m.dy[i]
		}
		if ds.factorAt(m.trial, m.lam, true) {
			ds.accept(m.trial, m.lam)
			it.Step = alpha
			accepted = true
			break
		}
	}
	for i := range m.z {
		m.z[i] += ad * m.dz[i]
	}
	s.clock.lap("line-search")
	record(m.res, opt, m.start, it)
	if !accepted {
		m.status = Stalled
		return true, nil
	}
	return false, nil
}

// checkpoint certifies the current point — the bound from singular values
// of D^{1/2}·C₋ (C₋ with V's eigenvalues shrunk by their rounding error, so
// C₋C₋ᵀ ⪯ V), the objective f = c·Σ√λ — and reports whether the method
// stops: converged, or stalled when the estimate said converged three
// times more and the certificate disagreed (rounding sets a floor).
func (m *dualIP) checkpoint(f float64, it *Iteration) bool {
	if b := m.ds.bound(f, m.opt.Tol); b > m.bestBound {
		m.bestBound = b
	}
	m.s.clock.lap("certificate")
	it.LowerBound, it.Gap = m.bestBound*m.s.scale, (f-m.bestBound)/f
	if it.Gap <= m.opt.Tol {
		record(m.res, m.opt, m.start, *it)
		m.status, m.certified, m.fCert = Converged, true, f
		return true
	}
	if m.tries++; m.tries > 3 {
		record(m.res, m.opt, m.start, *it)
		m.status = Stalled
		return true
	}
	return false
}

// system forms the regularized Newton matrix −H̃ + Z·Y⁻¹ + ρI of the
// barrier problem at the current point and factors it (Cholesky, in
// place); it sets the gradient and the complementarity yᵀz/n. ok is false
// if the matrix is not numerically positive definite.
func (m *dualIP) system(gapEst float64) (hk blas.General, ok bool) {
	ds, n := m.ds, m.s.n
	cmu := 0.0
	rnorm := 0.0
	for i := 0; i < n; i++ {
		m.grad[i] = ds.d[i] - 1
		cmu += ds.y[i] * m.z[i]
		rnorm = math.Max(rnorm, math.Abs(m.grad[i]+m.z[i]))
	}
	m.cmu = cmu / float64(n)
	tau := dualHessTol
	if gapEst < 1e-5 {
		tau = dualHessTolFinal
	}
	hk = ds.hessian(tau, 0, nil)
	hs := hessScale(hk)
	rho := hs * (math.Min(rnorm, 1e-3) + 1e-13)
	for i := 0; i < n; i++ {
		hk.Data[i*n+i] += m.z[i]/ds.y[i] + rho
	}
	if !blas.Cholesky(hk) {
		return hk, false
	}
	m.s.clock.lap("system")
	return hk, true
}

// direction computes Mehrotra's predictor (affine scaling, target
// complementarity 0) and corrector on the factor hk into dy, dz, and
// returns the primal and dual steps to 0.995 of the boundary.
func (m *dualIP) direction(hk blas.General) (ap, ad float64) {
	ds, n := m.ds, m.s.n
	y, z := ds.y, m.z
	dya, dza, dy, dz := m.dya, m.dza, m.dy, m.dz
	solve := func(rhs []float64) {
		rv := blas.General{Rows: n, Cols: 1, Stride: 1, Data: rhs}
		blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, hk, rv)
		blas.Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, hk, rv)
	}
	// Predictor (affine scaling, target μ = 0).
	copy(dya, m.grad)
	solve(dya)
	for i := range dza {
		dza[i] = -z[i] - z[i]/y[i]*dya[i]
	}
	ap, ad = toBoundary(y, dya, 1), toBoundary(z, dza, 1)
	muAff := 0.0
	for i := range z {
		muAff += (y[i] + ap*dya[i]) * (z[i] + ad*dza[i])
	}
	muAff /= float64(n)
	sigma := math.Min(1, math.Pow(muAff/m.cmu, 3))
	// Corrector.
	for i := range dy {
		dy[i] = m.grad[i] + (sigma*m.cmu-dya[i]*dza[i])/y[i]
	}
	solve(dy)
	for i := range dz {
		dz[i] = (sigma*m.cmu-dya[i]*dza[i])/y[i] - z[i] - z[i]/y[i]*dy[i]
	}
	return toBoundary(y, dy, 0.995), toBoundary(z, dz, 0.995)
}

// certify completes the result at the last dual point: its primal X(y)/c,
// the objective and the best certified bound, and the r×n strategy.
func (m *dualIP) certify() error {
	s, ds, res, n := m.s, m.ds, m.res, m.s.n
	c, f := ds.primal()
	if !m.certified {
		b := ds.bound(f, m.opt.Tol)
		if b > m.bestBound {
			m.bestBound = b
		}
		if m.status == Stalled && (f-m.bestBound)/f <= m.opt.Tol {
			m.status = Converged
		}
	} else {
		f = m.fCert
	}
	res.Status = m.status
	res.Iterations = len(res.History)
	res.Objective = f * s.scale
	res.RegularizedObjective = res.Objective
	res.LowerBound = m.bestBound * s.scale
	res.Gap = (res.Objective - res.LowerBound) / res.Objective
	res.Rank = ds.r
	res.Phases = s.clock.acc
	s.clock.lap("other")
	ds.strategy(s, c)
	s.clock.lap("strategy")
	res.X = mat.NewSymDense(n, s.x.Data)
	res.A = mat.NewTriDense(n, mat.Upper, s.u.Data)
	res.Seconds = time.Since(m.start).Seconds()
	return nil
}

// toBoundary returns the largest α ≤ 1 with v + α·dv ≥ (1 − frac)·v, the
// fraction-to-the-boundary rule (frac = 1: the step to the boundary).
func toBoundary(v, dv []float64, frac float64) float64 {
	a := 1.0
	for i, x := range dv {
		if x < 0 {
			a = math.Min(a, -frac*v[i]/x)
		}
	}
	return a
}

// bound returns the certified dual bound at the current y (scaled problem).
// The factor C is V's truncated eigen-factor: a null direction computed as
// a tiny positive eigenvalue would add √(ε·μ_max)-sized terms to the bound,
// so those directions are dropped (μ ≤ rankTol·μ_max, which only lowers V,
// and so the bound); every kept eigenvalue exceeds 32·n·ε·μ_max, so its
// rounding is a relative 1/(32n) at worst, like the backward error of the
// Cholesky factor that certifies a definite V. (Shrinking every kept μ by
// n·ε·μ_max instead, as psdFactor once did, cost a relative 1.5e-8 of the
// bound on random ranges at n = 1024, above the default tolerance.)
//
// The nuclear norm of D^{1/2}·C comes from eigenBound, which reuses M(y)'s
// eigendecomposition (one n×r×r SYRK); the singular values of D^{1/2}·C
// (dualBound, 12 DGEMM-equivalents of width:k=32 at n = 2048) are computed
// only if that fails or leaves a gap to the objective f above tol (it is
// never lower, and higher where M(y)'s small eigenvectors are inaccurate).
func (ds *dualSolver) bound(f, tol float64) float64 {
	e, ok := ds.eigenBound()
	if ok && (f-e)/f <= tol {
		return e
	}
	b, sok := dualBound(ds.c, ds.y, view(ds.h.Data, ds.n, ds.r))
	switch {
	case sok && ok:
		return math.Max(b, e)
	case sok:
		return b
	case ok:
		return e
	}
	return math.Inf(-1)
}

// eigenBound is the dual bound T²/Σy at the current y with T a certified
// lower bound on the nuclear norm ‖Ã‖_* of Ã = D^{1/2}·C̃, C̃ = C·P (P the
// eigenvectors of M(y) = ÃᵀÃ in exact arithmetic, so ‖Ã‖_* = Σ√λ). Σ√λ
// itself is no bound: the small λ carry absolute errors of ε·λ_max, which
// their square roots magnify (that is why dualBound takes singular values).
// Instead, as in polarBound: Q₀ = Ã·Λ^{-1/2} is Ã's polar factor up to
// rounding, one Newton–Schulz step Q₁ = ½Q₀(3I − M̃) with M̃ = Q₀ᵀQ₀ =
// Λ^{-1/2}GΛ^{-1/2}, G = ÃᵀÃ recomputed by a SYRK, has ‖Q₁‖₂ ≤ 1 whenever
// λ_max(M̃) ≤ 4 (Gershgorin), and
//
//	tr(Q₁ᵀÃ) = ½(3·Σₐ M̃ₐₐ√λₐ − Σₐ_b M̃ₐ_b²·√λ_b),
//
// all from the r×r matrix M̃. Each term a is at most √Gₐₐ whatever the
// computed λₐ, with equality when λₐ = Gₐₐ: a wrongly computed small
// eigenvalue can only lower T. Rounding: G's entries are inner products of
// length n, of error at most 10·√n·ε·√(GₐₐG_bb) with overwhelming
// probability (Higham and Mary 2019, as in polarBound); that bounds both
// the trace's error and ‖M̃ − Q₀ᵀQ₀‖₂ ≤ 10·√n·ε·tr M̃.
func (ds *dualSolver) eigenBound() (float64, bool) {
	n, r := ds.n, ds.r
	a := ds.w
	sy := 0.0
	for i := 0; i < n; i++ {
		f := math.Sqrt(ds.y[i])
		sy += ds.y[i]
		src, dst := ds.ct.Data[i*r:i*r+r], a.Data[i*r:i*r+r]
		for b, x := range src {
			dst[b] = f * x
		}
	}
	blas.Syrk(gblas.Trans, 1, a, 0, ds.mm) // upper triangle of G = ÃᵀÃ
	return refinedBound(ds.mm, ds.lam, n, sy)
}

// strategy writes X = C̃·Λ^{-1/2}·C̃ᵀ/c into s.x (full) and the upper
// triangular A with AᵀA = X into s.u: the QR factor of the r×n
// A₀ = c^{-1/2}·Λ^{-1/4}·C̃ᵀ, padded with n − r zero rows.
func (ds *dualSolver) strategy(s *newtonState, c float64) {
	n, r := ds.n, ds.r
	f := make([]float64, r)
	for a, l := range ds.lam {
		f[a] = 1 / math.Sqrt(math.Sqrt(l)*c)
	}
	// A₀ (r×n) into the first r rows of s.u... s.u holds ds.w, which is
	// free now; build A₀ in s.gr (free too) and copy.
	a0 := view(s.gr.Data, r, n)
	for i := 0; i < n; i++ {
		for a := 0; a < r; a++ {
			a0.Data[a*n+i] = ds.ct.Data[i*r+a] * f[a]
		}
	}
	blas.Syrk(gblas.Trans, 1, a0, 0, s.x)
	blas.Symmetrize(s.x)
	blas.UpperTrapezoid(a0)
	clear(s.u.Data)
	copy(s.u.Data, a0.Data)
}
