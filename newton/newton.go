package newton

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/progress"
)

// The default method works in the coordinates that whiten X and diagonalize
// V. With X = UᵀU (Cholesky), U⁻ᵀVU⁻¹ = Q·Λ·Qᵀ (eigendecomposition) and
// Z = Uᵀ·Q we have X = ZZᵀ, V = ZΛZᵀ and F(X) = tr Λ. Writing a step as
// D = Z·D̂·Zᵀ, the second-order model of F is
//
//	F(X+D) ≈ F − tr(Λ·D̂) + ½·Σᵢⱼ (λᵢ+λⱼ)·D̂ᵢⱼ²,
//
// diagonal in D̂; only diag(D) = 0 couples the entries. Its minimizer is
// D̂ = K∘(Λ − ZᵀMZ), Kᵢⱼ = 1/(λᵢ+λⱼ), M = diag(μ), where μ solves the n×n
// positive definite system 𝒜μ = r,
//
//	𝒜 = Σᵢⱼ Kᵢⱼ (zᵢ∘zⱼ)(zᵢ∘zⱼ)ᵀ,  rₖ = Σᵢ Zₖᵢ²·Kᵢᵢ·λᵢ.
//
// Forming 𝒜 exactly costs n⁴, but K is a Cauchy matrix: approximating
// 1/(λᵢ+λⱼ) by a sum of exponentials Σᵣ wᵣ·e^{−tᵣλᵢ}·e^{−tᵣλⱼ} (expSum) gives
// K̃ = Σᵣ wᵣ·aᵣaᵣᵀ and 𝒜̃ = Σᵣ wᵣ·Gᵣ∘Gᵣ with Gᵣ = Z·diag(aᵣ)·Zᵀ: one SYRK per
// term. Using K̃ in place of K everywhere makes the step the exact minimizer
// of a model with a positive definite Hessian that is within relative error
// τ of the true one, so the step is feasible (diag D = 0 to rounding), a
// descent direction, and Newton's local convergence degrades only to linear
// with ratio about τ — which we keep small. The system is solved directly by
// Cholesky; no inner iteration is needed.

// hessianTol is the relative accuracy of the exponential-sum Hessian. The
// local convergence ratio is about hessianTol, but in practice the
// iteration count is set by the nonlinearity: on Prefix and AllRange
// n = 512 every value from 1e-3 to 0.5 took the same 5 and 3 iterations,
// and rank-deficient, random-range and marginal workloads changed by at
// most a few iterations in 15–45, while the SYRK terms per system fell from
// about 26 (1e-3) to 9 (0.1) and 7 (0.3). 0.3 keeps the gap ratio of a
// purely linear phase at τ² ≈ 0.1 per iteration.
const hessianTol = 0.3

// hessianTolFinal is the accuracy used once the estimated gap is below 1e-5.
const hessianTolFinal = 0.03

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

const (
	// singularTol: V is treated as singular when its smallest eigenvalue is
	// at most this fraction of its largest (rounding level for n ≲ 10⁴).
	singularTol = 1e-13
	// autoTheta is the final regularization for a singular V, relative to
	// mean(diag V), when the caller does not choose one.
	autoTheta = 1e-9
	// stageTol: intermediate continuation stages stop when the Newton
	// decrement estimates a relative gap below this.
	stageTol = 1e-4
)

// newtonState holds the solver's n×n workspaces, named by role.
type newtonState struct {
	n       int
	threads int              // goroutines for the O(n²) passes; 0 means GOMAXPROCS
	vsrc    blas64.Symmetric // the caller's V (upper triangle), never written
	scale   float64          // s = mean(diag V); the solver works with V/s
	x       blas.General     // current X, full, unit diagonal
	u       blas.General     // Cholesky factor of x (upper)
	m       blas.General     // U⁻ᵀVU⁻¹, then its eigenvectors, then Z
	a       blas.General     // system matrix 𝒜̃, then ZᵀMZ, D̂, D
	g       blas.General     // Bᵣ, then K̃, Z·D̂, line-search trial, certificate workspace
	gr      blas.General     // Gᵣ = Bᵣ·Bᵣᵀ
	lam     []float64        // Λ
	f       float64          // F(X) = tr(U⁻ᵀVU⁻¹) of the scaled problem
	theta   float64          // regularization in scaled units
	terms   int              // exponential-sum terms used so far
	y       []float64        // dual point of the last certificate
	clock   phaseClock       // per-phase wall time of this solve
	ebuf    []float64        // formStep's exponential factors (R×n twice)
	pbuf    []float64        // polarBound's block of rows (256×n)
}

// prepare sizes the workspaces for n, keeping them when n is unchanged, and
// clears the per-solve state.
func (s *newtonState) prepare(n int) {
	if s.n != n || s.x.Data == nil {
		th := s.threads
		*s = newtonState{n: n, threads: th}
		s.x, s.u, s.m, s.g = blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
		// s.a and s.gr lend their storage to the eigensolver whenever
		// they are free, so they have its scratch capacity.
		s.a, s.gr = scratchSquare(n), scratchSquare(n)
		s.lam = make([]float64, n)
	}
	s.f, s.theta, s.terms, s.y = 0, 0, 0, nil
	s.clock = phaseClock{last: time.Now(), acc: map[string]float64{}}
}

// scratchSquare returns an n×n matrix whose storage has the capacity
// blas.EigenWorkLen(n), so that it can serve as the eigensolver's scratch
// while it is free (symEigIn).
func scratchSquare(n int) blas.General {
	return blas.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n, blas.EigenWorkLen(n))}
}

// symEigIn decomposes a into eigenvalues w and eigenvectors z (as
// blas.SymEigVectors) with the storage of the free matrix scratch (from
// scratchSquare, or any view into one) as the eigensolver's workspace, so
// the solver holds no n² eigensolver workspace of its own.
func symEigIn(a, z blas.General, w []float64, scratch blas.General) bool {
	work := scratch.Data[:cap(scratch.Data)]
	return blas.SymEigVectorsWork(a, z, w, &work)
}

// phaseClock attributes wall time to the solver's phases: lap(name) adds
// the time since the previous lap to name.
type phaseClock struct {
	last time.Time
	acc  map[string]float64
}

func (c *phaseClock) lap(name string) {
	now := time.Now()
	c.acc[name] += now.Sub(c.last).Seconds()
	c.last = now
}

// par runs f over [0, n) on at most s.threads goroutines (see parallelRows).
func (s *newtonState) par(n int, f func(lo, hi int)) { parallelRows(s.threads, n, f) }

// evaluate sets u = chol(X) and m = U⁻ᵀVU⁻¹ for X in s.x, and returns
// F(X) = tr(m); ok is false if X is not numerically positive definite.
func (s *newtonState) evaluate(x blas.General) (float64, bool) {
	blas.Copy(s.u, x)
	if !blas.Cholesky(s.u) {
		return math.Inf(1), false
	}
	s.whiten()
	f := trace(s.m)
	if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return math.Inf(1), false
	}
	return f, true
}

// whiten sets m = U⁻ᵀ(V+θI)U⁻¹ from U = chol(X) in s.u.
func (s *newtonState) whiten() {
	s.loadV(s.m, s.theta)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, s.m)
	blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, s.u, s.m)
}

// loadV fills dst (both triangles) with V/s + θ·I from the caller's V, so
// the solver keeps no private copy of V.
func (s *newtonState) loadV(dst blas.General, theta float64) {
	n, src, st := s.n, s.vsrc.Data, s.vsrc.Stride
	inv := 1 / s.scale
	d := dst.Data
	forTiles(s.threads, n, func(bi, ie, bj, je int) {
		for i := bi; i < ie; i++ {
			if bj == bi {
				d[i*n+i] = src[i*st+i]*inv + theta
			}
			for j := max(bj, i+1); j < je; j++ {
				v := src[i*st+j] * inv
				d[i*n+j] = v
				d[j*n+i] = v
			}
		}
	})
}

// mirrorUpper copies the strict upper triangle of the n×n matrix a into
// its lower triangle, and zeroes the diagonal if zeroDiag.
func mirrorUpper(threads int, a blas.General, zeroDiag bool) {
	n, d := a.Rows, a.Data
	forTiles(threads, n, func(bi, ie, bj, je int) {
		for i := bi; i < ie; i++ {
			if zeroDiag && bj == bi {
				d[i*n+i] = 0
			}
			for j := max(bj, i+1); j < je; j++ {
				d[j*n+i] = d[i*n+j]
			}
		}
	})
}

// forTiles calls f(bi, ie, bj, je) for every tile [bi, ie)×[bj, je) of
// the upper triangle of an n×n matrix (bj ≥ bi), the tile rows spread over
// the threads. Filling or mirroring a triangle tile by tile keeps the
// transposed writes in cache: row by row, each write to the lower
// triangle touches a new cache line (measured at n = 2048: 148–233 ms a
// pass row by row against 124–157 ms tiled, on one thread of a shared
// machine; the O(n²) passes run several times per Newton iteration).
func forTiles(threads, n int, f func(bi, ie, bj, je int)) {
	const t = tileEdge
	parallelRows(threads, n, func(lo, hi int) {
		// The tile rows that start in [lo, hi): each is handled once.
		for bi := (lo + t - 1) / t * t; bi < hi; bi += t {
			ie := min(bi+t, n)
			for bj := bi; bj < n; bj += t {
				f(bi, ie, bj, min(bj+t, n))
			}
		}
	})
}

// tileEdge is forTiles' tile edge: a 32×32 tile of float64 is 8 KiB, two
// fit any L1 data cache.
const tileEdge = 32

// eigen replaces the symmetric matrix in s.m by its eigenvectors (columns)
// and sets s.lam; s.g is the output buffer and the two are swapped.
func (s *newtonState) eigen(w []float64) bool {
	// s.a is free at every call: its storage is the eigensolver's scratch.
	if !symEigIn(s.m, s.g, w, s.a) {
		return false
	}
	s.m, s.g = s.g, s.m
	return true
}

// certificate returns the dual bound for the scaled problem at the current
// iterate (Z in s.m, Λ in s.lam) and the trace of X⁻¹; tol is the gap the
// caller needs and est its estimate of the gap (see bestBound). It uses s.g, s.a and s.gr.
func (s *newtonState) certificate(tol, est float64) (bound, trXinv float64, ok bool) {
	n := s.n
	// Y = X⁻¹Z = U⁻¹U⁻ᵀZ; X⁻¹ = YYᵀ. V = (ZΛ^{1/2})(ZΛ^{1/2})ᵀ: the factor C
	// comes free with the coordinates, and X⁻¹C = YΛ^{1/2}.
	w, c := s.a, s.g
	blas.Copy(w, s.m)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, w)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, s.u, w)
	r := make([]float64, n)
	for j, l := range s.lam {
		r[j] = math.Sqrt(math.Max(l, 0))
	}
	for i := 0; i < n; i++ {
		wrow := w.Data[i*n : i*n+n]
		for j, z := range wrow {
			trXinv += z * z
			wrow[j] = z * r[j]
		}
	}
	factor := func(dst blas.General) bool { // C = ZΛ^{1/2}
		for i := 0; i < n; i++ {
			drow, zrow := dst.Data[i*n:i*n+n], s.m.Data[i*n:i*n+n]
			for j, z := range zrow {
				drow[j] = z * r[j]
			}
		}
		return true
	}
	factor(c)
	bound, ok = s.bestBound(c, w, tol, est, factor)
	return bound, trXinv, ok
}

// bestBound certifies the dual point y = diag(X⁻¹VX⁻¹) given a factor C of
// V (c = s.g) and W = X⁻¹C (w = s.a), and sets s.y; est is the caller's
// estimate of X's gap and factor rebuilds C into a matrix. Three bounds,
// cheapest first, each tried only if the previous one failed or left a
// gap above tol (each is never lower than the last): polarBound (two
// GEMMs; its deficit is second order in X − X* but about 30 times the
// objective's gap, so it is tried only when est ≤ tol/100),
// eigenDualBound (tight for this y whatever X; about 7
// DGEMM-equivalents) and the singular values of D^{1/2}C (dualBound,
// about 11). s.g, s.a and s.gr are overwritten.
func (s *newtonState) bestBound(c, w blas.General, tol, est float64, factor func(dst blas.General) bool) (float64, bool) {
	y := rowNormsSq(w)
	if y == nil {
		return math.Inf(-1), false
	}
	s.y = y
	b, ok := math.Inf(-1), false
	if est <= tol/100 {
		if pb, pok := polarBound(c, w, y, s.gr, s.threads, &s.pbuf); pok {
			b, ok = pb, true
			if (s.f-b)/s.f <= tol {
				return b, true
			}
		}
	}
	e, eok := eigenDualBound(c, w, s.gr, y, factor, s.threads) // C is in w now
	if eok {
		b, ok = math.Max(b, e), true
		if (s.f-b)/s.f <= tol {
			return b, true
		}
	} else if !factor(w) {
		return b, ok
	}
	b2, ok2 := dualBound(w, y, c)
	if !ok2 {
		return b, ok
	}
	return math.Max(b, b2), true
}

// fixedPointPhase runs at most maxFixedPoint primal–dual fixed-point steps
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
// over to Newton at once.
// Otherwise the phase stops when a
// step gains less than a factor 4 in objective gap (or fails to decrease
// F), and returns converged if the certified gap already meets opt.Tol.
func (s *newtonState) fixedPointPhase(ctx context.Context, opt Options, scale float64, start time.Time, res *Result, warm bool) (iter int, bound, trXinv float64, converged bool) {
	n := s.n
	bound = math.Inf(-1)
	prevDrop := math.Inf(1)
	for iter < maxFixedPoint && iter < opt.MaxIter && ctx.Err() == nil {
		// Dual point at the current X from U = chol(X), M = U⁻ᵀVU⁻¹.
		y, tr, ok := s.dualPoint()
		if !ok {
			break
		}
		// S = D^{1/2}(V+θI)D^{1/2} → Q, λ; X_new = normalize(Q·diag(√λ)·Qᵀ)
		// (the outer D^{-1/2} factors cancel in the normalization).
		r := make([]float64, n)
		sy := 0.0
		for i, yi := range y {
			r[i] = math.Sqrt(yi)
			sy += yi
		}
		loadS := func(dst blas.General) {
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
		if iter == 0 {
			// Before the first step, S's eigenvalues alone (a third of the
			// cost of the vectors at n = 2048) give the certified gap at the
			// start and an estimate of it, which decide whether a step is
			// worth taking at all (see fpStartGap). S goes to s.g, so that
			// M = U⁻ᵀVU⁻¹ survives for Newton's method.
			fOld := s.f
			loadS(s.g)
			if !blas.SymEig(s.g, s.lam, false) {
				break
			}
			b, est := dualValues(s.lam, sy)
			it := Iteration{Iter: 1, Objective: fOld * scale, LowerBound: b * scale, Gap: (fOld - b) / fOld}
			if (fOld-b)/fOld <= opt.Tol {
				// The start is optimal to the tolerance (Identity, and any
				// V whose V^{1/2} start is its optimum): certified, done.
				record(res, opt, start, it)
				s.y = y
				return 1, b, tr, true
			}
			if !warm && (fOld-est)/fOld > fpStartGap {
				// Far from the optimum: Newton's turn, from this X.
				record(res, opt, start, it)
				return 1, math.Inf(-1), 0, false
			}
		}
		loadS(s.m)
		if !s.eigen(s.lam) {
			break
		}
		b, est := dualValues(s.lam, sy)
		correlationSqrt(s.a, s.m, s.lam)
		fOld := s.f
		fNew, ok := s.evaluate(s.a)
		iter++
		it := Iteration{Iter: iter, Objective: fOld * scale, LowerBound: b * scale, Gap: (fOld - b) / fOld}
		if b > bound {
			bound, trXinv = b, tr
			s.y = y
		}
		if !ok || fNew >= fOld {
			// Not a descent: keep the current X (restore its U and M).
			s.evaluate(s.x)
			record(res, opt, start, it)
			return iter, math.Inf(-1), 0, false
		}
		if iter == 1 && (fOld-fNew) < fastContraction*(fOld-est) {
			// The first step closed less than fastContraction of the gap:
			// the fixed point contracts slowly here, and Newton's method
			// does better from the V^{1/2} start than from this point
			// (measured: Prefix n = 2048 needed an extra damped step).
			// Keep X and hand over.
			s.evaluate(s.x)
			record(res, opt, start, it)
			return iter, math.Inf(-1), 0, false
		}
		blas.Copy(s.x, s.a)
		s.f = fNew
		it.Step = 1
		record(res, opt, start, it)
		// The bound from the previous X certifies the new, better X.
		if (s.f-bound)/s.f <= opt.Tol {
			// trXinv must belong to the returned X.
			_, tr, _ := s.dualPoint()
			return iter, bound, tr, true
		}
		drop := (fOld - fNew) / fOld
		if drop <= 100*opt.Tol || (s.f-est)/s.f <= opt.Tol {
			// F has settled, or the estimate says the new X is already
			// optimal to the tolerance; the eigenvalue-based bound is
			// limited by its rounding safeguard for ill-conditioned S, so
			// certify with singular values at this X.
			if b, tr, ok := s.certifyDirect(opt.Tol, math.Max(0, (s.f-est)/s.f)); ok && (s.f-b)/s.f <= opt.Tol {
				return iter, b, tr, true
			}
			break
		}
		if drop > prevDrop/5 {
			break // linear and slow: Newton's turn
		}
		prevDrop = drop
	}
	return iter, math.Inf(-1), 0, false
}

// dualValues returns, from the eigenvalues λ of S = D^{1/2}VD^{1/2} and
// Σy, the certified bound b = (Σ√λ)²/Σy with sqrtSum's rounding safeguard
// and the same dual value without it, est: not a bound, but an estimate
// for deciding how far a step got. The safeguard costs the bound a
// relative O(n³ε), 6% of the gap at AllRange n = 4096, which alone failed
// the fixed-point phase's first-step test.
func dualValues(lam []float64, sy float64) (b, est float64) {
	t := sqrtSum(lam)
	te := 0.0
	for _, x := range lam {
		te += math.Sqrt(math.Max(x, 0))
	}
	return t * t / sy, te * te / sy
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

// certifyDirect computes the certificate at the current X from U = chol(X)
// (set by evaluate) without the eigendecomposition: a factor C of V comes
// from its Cholesky factorization and X⁻¹C = U⁻¹U⁻ᵀC from two triangular
// solves, and bestBound does the rest. That costs about two GEMMs instead
// of an eigendecomposition and a Newton system, which is what the final
// iteration would otherwise spend just to learn that it is done. ok is
// false if V + θI is not numerically definite (then the caller certifies
// the usual way); s.u and s.m are preserved.
func (s *newtonState) certifyDirect(tol, est float64) (bound, trXinv float64, ok bool) {
	c, w := s.g, s.a
	s.loadV(c, s.theta)
	if !lowerCholesky(c) {
		return 0, 0, false
	}
	if s.theta > 0 {
		// tr(X⁻¹) = ‖U⁻¹‖_F², needed for the objective on the caller's V.
		blas.Copy(s.gr, s.u)
		if !blas.TriInverse(gblas.Upper, s.gr) {
			return 0, 0, false
		}
		for i := 0; i < s.n; i++ {
			for _, x := range s.gr.Data[i*s.n+i : i*s.n+s.n] {
				trXinv += x * x
			}
		}
	}
	blas.Copy(w, c)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, w)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, s.u, w)
	bound, ok = s.bestBound(c, w, tol, est, func(dst blas.General) bool {
		s.loadV(dst, s.theta)
		return lowerCholesky(dst)
	})
	return bound, trXinv, ok
}

// solveNewton runs the default method. V has been validated.
// s holds the workspaces, sized for V by prepare.
func solveNewton(ctx context.Context, s *newtonState, V *mat.SymDense, opt Options) (*Result, error) {
	start := time.Now()
	n := V.SymmetricDim()
	scale := 0.0
	for i := 0; i < n; i++ {
		scale += V.At(i, i)
	}
	scale /= float64(n)

	// Six n×n workspaces besides the caller's V; X and A of the result are
	// two of them (handed over without copying by Solve, copied out by a
	// Solver that keeps them).
	s.vsrc, s.scale = V.RawSymmetric(), scale

	// Spectrum of V: positive semidefiniteness, regularization, SVD bound
	// and the warm start X₀ = V^{1/2} scaled to unit diagonal.
	s.loadV(s.m, 0)
	mu := make([]float64, n)
	// A warm start needs only V's eigenvalues here; the vectors (for
	// V^{1/2}, or the dual method) are computed when they are needed.
	vectors := opt.Start == nil
	if !(vectors && s.eigen(mu) || !vectors && blas.SymEig(s.m, mu, false)) {
		return nil, fmt.Errorf("newton: eigendecomposition of V failed to converge")
	}
	spectrum := func() bool {
		if !vectors {
			s.loadV(s.m, 0)
			vectors = s.eigen(mu)
		}
		return vectors
	}
	s.clock.lap("spectrum")
	muMax := mu[n-1]
	if mu[0] < -1e-10*muMax {
		return nil, inputErrorf("Gram matrix is not positive semidefinite: smallest eigenvalue %.3g (largest %.3g)", mu[0]*scale, muMax*scale)
	}
	// Regularization. A singular V has no minimizer: the infimum is
	// approached as X becomes singular along V's null space, where Newton's
	// method from V^{1/2} crawls (on width-32 ranges at n = 512 it made no
	// progress in 100 iterations). We therefore minimize with V + θ·I,
	// reached by continuation: θ starts at the seed's 1e-3 (relative to
	// mean(diag V)) and falls a hundredfold per stage, each stage
	// warm-started from the last (measured: 13–44 iterations in all to
	// θ = 1e-9 on rank-deficient workloads at n = 512; tenfold steps took
	// about as many).
	svdBound := sqrtSum(mu) * sqrtSum(mu) / float64(n) * scale
	if rt := rankTol(n); mu[0] <= rt*muMax && opt.Regularization == 0 {
		// Singular V: the exact infimum, by the dual method (singular.go).
		r := 0
		for _, m := range mu {
			if m > rt*muMax {
				r++
			}
		}
		if !spectrum() {
			return nil, fmt.Errorf("newton: eigendecomposition of V failed to converge")
		}
		return solveSingular(ctx, s, mu, r, opt, start, &Result{Method: MethodNewton, SVDBound: svdBound, Phases: s.clock.acc})
	}
	theta := opt.Regularization
	thetas := []float64{theta}
	if mu[0] <= singularTol*muMax {
		if theta == 0 {
			theta = autoTheta
		}
		thetas = thetas[:0]
		for t := 1e-3; t > theta*1.01; t /= 100 {
			thetas = append(thetas, t)
		}
		thetas = append(thetas, theta)
	}
	s.theta = thetas[0]
	f, ok := math.Inf(1), false
	if st := opt.Start; st != nil && len(thetas) == 1 {
		// The caller's warm start, if it is usable; else V^{1/2}.
		f, ok = s.evaluate(copyStart(s.x, st))
	}
	warm := ok
	if !ok {
		if !spectrum() {
			return nil, fmt.Errorf("newton: eigendecomposition of V failed to converge")
		}
		for i := range mu {
			mu[i] += thetas[0]
		}
		correlationSqrt(s.x, s.m, mu)
		f, ok = s.evaluate(s.x)
	}
	if !ok {
		// Rounding can leave V^{1/2} of an ill-conditioned V short of
		// definite; the identity is always a feasible start.
		identity(s.x)
		if f, ok = s.evaluate(s.x); !ok {
			return nil, fmt.Errorf("newton: could not evaluate the objective at the identity: V is not usable")
		}
	}
	s.f = f

	res := &Result{Method: MethodNewton, Regularization: theta, SVDBound: svdBound}
	const armijo = 1e-4
	var bound, trXinv float64 = math.Inf(-1), 0
	status := IterationLimit
	iter := 0
	lastFull, lastEst := false, math.Inf(1) // the previous step, for certifying early
	if len(thetas) == 1 {
		var conv bool
		iter, bound, trXinv, conv = s.fixedPointPhase(ctx, opt, scale, start, res, warm)
		s.clock.lap("fixed-point")
		if conv {
			status = Converged
			thetas = nil // skip the Newton phase
		}
	}
stages:
	for si, th := range thetas {
		final := si == len(thetas)-1
		// Intermediate stages stop on the Newton decrement alone, close
		// enough to their optimum that the next stage starts in Newton's
		// fast region; only the final stage is certified.
		tol := opt.Tol
		if !final {
			tol = stageTol
		}
		if th != s.theta {
			s.theta = th
			if s.f, ok = s.evaluate(s.x); !ok {
				return nil, fmt.Errorf("newton: lost positive definiteness when lowering the regularization to %g", th)
			}
		}
		for {
			if iter == opt.MaxIter {
				break stages
			}
			iter++
			if err := ctx.Err(); err != nil {
				status = Cancelled
				break stages
			}
			// After a full Newton step from an estimated gap ε the new gap is
			// about C·ε² (C measured ≤ 100 on our workloads): when that is
			// below the tolerance, certify before paying for a new
			// eigendecomposition and Newton system.
			if final && lastFull && 1e3*lastEst*lastEst <= tol {
				b, tr, ok := s.certifyDirect(tol, 1e3*lastEst*lastEst)
				s.clock.lap("certificate")
				if ok && (s.f-b)/s.f <= tol {
					bound, trXinv = b, tr
					it := Iteration{Iter: iter, Objective: s.f * scale, LowerBound: b * scale, Gap: (s.f - b) / s.f}
					record(res, opt, start, it)
					status = Converged
					break stages
				}
			}
			// Eigen-coordinates: m ← Q (eigenvectors of U⁻ᵀVU⁻¹), then Z = UᵀQ.
			if !s.eigen(s.lam) {
				return nil, fmt.Errorf("newton: eigendecomposition failed at iteration %d", iter)
			}
			blas.Trmm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, s.m)
			s.clock.lap("eigen")
			lo := 2 * math.Max(s.lam[0], 1e-300)
			hi := 2 * s.lam[n-1]
			// Coarse Hessians suffice while the nonlinearity dominates; the
			// last steps, taken from an estimated gap below 1e-5, use a
			// finer one so that their linear error term (about τ² per
			// step) does not cost an extra iteration.
			tau := hessianTol
			if lastEst <= 1e-5 {
				tau = hessianTolFinal
			}
			ts, ws := expSum(lo, hi, tau)
			s.terms += len(ts)
			mu, kdiag, sysOK := s.solveSystem(ts, ws)
			s.clock.lap("system")
			if !sysOK {
				// Only rounding can make 𝒜̃ indefinite: no reliable step is
				// left. Certify where we stand.
				status = s.stall(&bound, &trXinv, opt.Tol, scale, start, iter, res, opt)
				break stages
			}

			// Newton decrement: −⟨G,D⟩ = tr(Λ·D̂) = Σᵢ λᵢ·K̃ᵢᵢ·(λᵢ − Σₖ Zₖᵢ²μₖ);
			// half of it estimates F − F*.
			q := make([]float64, n) // qᵢ = Σₖ Zₖᵢ²μₖ, accumulated row by row
			for k := 0; k < n; k++ {
				for i, z := range s.m.Data[k*n : k*n+n] {
					q[i] += z * z * mu[k]
				}
			}
			dec := 0.0
			for i := 0; i < n; i++ {
				dec += s.lam[i] * kdiag[i] * (s.lam[i] - q[i])
			}
			it := Iteration{Iter: iter, Objective: s.f * scale, LowerBound: math.NaN(), Gap: math.NaN()}
			if !final && dec/(2*s.f) <= tol {
				record(res, opt, start, it)
				continue stages
			}
			if final && (dec/(2*s.f) <= tol || iter == opt.MaxIter) {
				b, tr, ok := s.certificate(tol, dec/(2*s.f))
				s.clock.lap("certificate")
				if !ok {
					return nil, fmt.Errorf("newton: certificate eigendecomposition failed at iteration %d", iter)
				}
				bound, trXinv = b, tr
				it.LowerBound = bound * scale
				it.Gap = (s.f - bound) / s.f
				if it.Gap <= tol {
					status = Converged
					record(res, opt, start, it)
					break stages
				}
			}
			if iter == opt.MaxIter {
				record(res, opt, start, it)
				break stages
			}
			s.formStep(mu, ts, ws)
			s.clock.lap("step")
			alpha, fNew, ok := s.lineSearch(dec, armijo)
			s.clock.lap("line-search")
			if !ok {
				// No decrease is representable: we are at the floating-point
				// floor. Certify where we stand.
				status = s.stall(&bound, &trXinv, opt.Tol, scale, start, iter, res, opt)
				break stages
			}
			s.f = fNew
			lastFull, lastEst = alpha == 1, dec/(2*s.f)
			it.Step = alpha
			record(res, opt, start, it)
		}
	}
	if s.theta != theta {
		// Stopped in an intermediate stage (iteration cap or cancellation):
		// report the regularization actually in effect.
		theta = s.theta
		res.Regularization = theta
		bound = math.Inf(-1)
	}
	if status == Cancelled || math.IsInf(bound, -1) && status != Converged {
		// The bound belongs to the final X: recompute it there.
		bound, trXinv, _ = s.recomputeAndCertify(opt.Tol)
	}
	res.Iterations = len(res.History)
	res.Status = status
	res.RegularizedObjective = s.f * scale
	res.Objective = (s.f - theta*trXinv) * scale
	if theta > 0 {
		// The bound for the caller's V comes from the same y with raw V.
		y := s.y
		s.loadV(s.gr, 0)
		c, ok := psdFactor(s.gr)
		rb := math.Inf(-1)
		if ok {
			rb, _ = dualBound(c, y, s.a)
		}
		res.LowerBound = rb * scale
	} else {
		res.LowerBound = bound * scale
	}
	res.Gap = (res.Objective - res.LowerBound) / res.Objective
	res.X = mat.NewSymDense(n, s.x.Data)
	res.A = mat.NewTriDense(n, mat.Upper, s.u.Data)
	res.Rank = n
	s.clock.lap("other")
	res.Phases = s.clock.acc
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func errEigen(where string) error {
	return fmt.Errorf("newton: eigendecomposition failed to converge (%s)", where)
}

// stall certifies the current X after the method could make no further
// progress, records the iteration, and returns Converged if the certified gap
// meets tol and Stalled otherwise.
func (s *newtonState) stall(bound, trXinv *float64, tol, scale float64, start time.Time, iter int, res *Result, opt Options) Status {
	b, tr, _ := s.recomputeAndCertify(tol)
	*bound, *trXinv = b, tr
	it := Iteration{Iter: iter, Objective: s.f * scale, LowerBound: b * scale, Gap: (s.f - b) / s.f}
	record(res, opt, start, it)
	if it.Gap <= tol {
		return Converged
	}
	return Stalled
}

// solveSystem builds 𝒜̃ in s.a, solves 𝒜̃μ = r and returns μ and diag(K̃).
// Z is in s.m, Λ in s.lam. ok is false if 𝒜̃ is not numerically positive
// definite (it is in exact arithmetic).
func (s *newtonState) solveSystem(ts, ws []float64) (mu, kdiag []float64, ok bool) {
	n := s.n
	kdiag = make([]float64, n)
	for i := range s.a.Data {
		s.a.Data[i] = 0
	}
	b, gr := s.g, s.gr
	col := make([]float64, n)
	for r := range ts {
		// Term r weighs column j by e^{−tᵣλⱼ}; once tᵣλⱼ > 40 the column's
		// every contribution is below e^{−40} ≈ 4e-18 of the kernel entries
		// it feeds, so only the prefix of small λ (λ is ascending) enters
		// the SYRK: large-tᵣ terms are much cheaper than n³.
		k := 0
		for j := 0; j < n; j++ {
			e := math.Exp(-ts[r] * s.lam[j])
			kdiag[j] += ws[r] * e * e
			col[j] = math.Sqrt(math.Sqrt(ws[r]) * e)
			if ts[r]*s.lam[j] <= 40 {
				k = j + 1
			}
		}
		if k == 0 {
			continue
		}
		s.par(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := s.m.Data[i*n : i*n+k]
				brow := b.Data[i*n : i*n+k]
				for j, z := range row {
					brow[j] = z * col[j]
				}
			}
		})
		blas.Syrk(gblas.NoTrans, 1, blas.General{Rows: n, Cols: k, Stride: n, Data: b.Data}, 0, gr)
		s.par(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				arow := s.a.Data[i*n+i : i*n+n]
				grow := gr.Data[i*n+i : i*n+n]
				for j, g := range grow {
					arow[j] += g * g
				}
			}
		})
	}
	rhs := make([]float64, n)
	for k := 0; k < n; k++ {
		row := s.m.Data[k*n : k*n+n]
		acc := 0.0
		for i, z := range row {
			acc += z * z * kdiag[i] * s.lam[i]
		}
		rhs[k] = acc
	}
	if !blas.Cholesky(s.a) {
		return nil, nil, false
	}
	rv := blas.General{Rows: n, Cols: 1, Stride: 1, Data: rhs}
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.a, rv)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, s.a, rv)
	return rhs, kdiag, true
}

// formStep computes D = Z·D̂·Zᵀ with D̂ = K̃∘(Λ − ZᵀMZ) into s.a.
func (s *newtonState) formStep(mu, ts, ws []float64) {
	n := s.n
	// a ← Zᵀ·diag(μ)·Z as two SYRKs, Zᵀ·diag(μ₊)·Z − Zᵀ·diag(μ₋)·Z, on the
	// rows of Z scaled by √|μₖ| (positive rows first in g, then negative):
	// n³ flops instead of a GEMM's 2n³. Upper triangle, then mirrored.
	pos := 0
	for k := 0; k < n; k++ {
		if mu[k] > 0 {
			pos++
		}
	}
	var ip, ineg int
	for k := 0; k < n; k++ {
		dst := pos + ineg
		if mu[k] > 0 {
			dst = ip
			ip++
		} else {
			ineg++
		}
		r := math.Sqrt(math.Abs(mu[k]))
		grow, zrow := s.g.Data[dst*n:dst*n+n], s.m.Data[k*n:k*n+n]
		for i, z := range zrow {
			grow[i] = r * z
		}
	}
	clear(s.a.Data)
	if pos > 0 {
		blas.Syrk(gblas.Trans, 1, blas.General{Rows: pos, Cols: n, Stride: n, Data: s.g.Data}, 0, s.a)
	}
	if pos < n {
		blas.Syrk(gblas.Trans, -1, blas.General{Rows: n - pos, Cols: n, Stride: n, Data: s.g.Data[pos*n:]}, 1, s.a)
	}
	mirrorUpper(s.threads, s.a, false)
	// g ← K̃ = Eᵀ·diag(w)·E with E (R×n), Eᵣⱼ = e^{−tᵣλⱼ}.
	R := len(ts)
	if cap(s.ebuf) < 2*R*n {
		s.ebuf = make([]float64, 2*R*n) // kept: a Solver's next solves reuse it
	}
	e := blas.General{Rows: R, Cols: n, Stride: n, Data: s.ebuf[:R*n]}
	ew := blas.General{Rows: R, Cols: n, Stride: n, Data: s.ebuf[R*n : 2*R*n]}
	for r := 0; r < R; r++ {
		for j := 0; j < n; j++ {
			x := math.Exp(-ts[r] * s.lam[j])
			e.Data[r*n+j] = x
			ew.Data[r*n+j] = ws[r] * x
		}
	}
	blas.Gemm(gblas.Trans, gblas.NoTrans, 1, e, ew, 0, s.g)
	// a ← D̂ = K̃∘(Λ − a)
	s.par(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			arow, krow := s.a.Data[i*n:i*n+n], s.g.Data[i*n:i*n+n]
			for j, k := range krow {
				arow[j] = -k * arow[j]
			}
			arow[i] += krow[i] * s.lam[i]
		}
	})
	// g ← Z·D̂, a ← upper triangle of (Z·D̂)·Zᵀ (symmetric, so 5/8 of a
	// GEMM), mirrored. The diagonal is zero in exact arithmetic; rounding
	// residue is removed, so X + αD keeps diag = 1 exactly.
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, s.m, s.a, 0, s.g)
	blas.GemmUpper(1, s.g, s.m, 0, s.a)
	mirrorUpper(s.threads, s.a, true)
}

// lineSearch tries X + αD for α = 1 and then, if α = 1 fails the Armijo
// condition F(X+αD) ≤ F(X) − σ·α·dec or leaves the cone, backtracks. On
// success X, U, m and F are those of the new point.
//
// The Newton model predicts F(X+αD) = F − α·dec + ½α²·dec. When F(X+D)
// departs from it, the quadratic through F(X), the slope −dec and F(X+D)
// has its minimum at α* = dec/(2·(F(X+D) − F + dec)); α* is tried (within
// [¼, 2]) when it is more than 10% from 1, and kept if it is better. Far
// from the optimum that is where the step is short or long: on Prefix
// n = 2048 the first step from V^{1/2} has α* = 0.75, which lands at a gap
// of 1.3e-4 instead of 7.4e-4 and saved two of its five Newton iterations
// (the later steps have |α* − 1| ≤ 0.05 and cost nothing extra). When α = 1
// fails, α* (within [0.1, ½]) replaces the first halving.
func (s *newtonState) lineSearch(dec, sigma float64) (alpha, f float64, ok bool) {
	n := s.n
	try := func(dst blas.General, alpha float64) (float64, bool) {
		s.par(n, func(lo, hi int) {
			for i := lo * n; i < hi*n; i++ {
				dst.Data[i] = s.x.Data[i] + alpha*s.a.Data[i]
			}
		})
		for i := 0; i < n; i++ {
			dst.Data[i*n+i] = 1
		}
		return s.evaluate(dst)
	}
	accept := func(f float64, alpha float64, pd bool) bool {
		return pd && f <= s.f-sigma*alpha*dec && f < s.f
	}
	// α* of the quadratic through F, −dec and F(X+D); NaN if it has none.
	star := func(f1 float64) float64 {
		c := f1 - s.f + dec
		if !(c > 0) || math.IsInf(f1, 0) {
			return math.NaN()
		}
		return dec / (2 * c)
	}
	trial := s.g
	f1, pd := try(trial, 1)
	as := star(f1)
	if accept(f1, 1, pd) {
		if math.Abs(as-1) > 0.1 {
			// s.gr is free here (it holds the SYRK blocks of the system).
			as = math.Max(0.25, math.Min(as, 2))
			if f2, pd2 := try(s.gr, as); pd2 && f2 < f1 {
				blas.Copy(s.x, s.gr)
				return as, f2, true
			}
			s.evaluate(trial) // U and M of X + D again
		}
		blas.Copy(s.x, trial)
		return 1, f1, true
	}
	alpha = 0.5
	if pd && !math.IsNaN(as) {
		alpha = math.Max(0.1, math.Min(as, 0.5))
	}
	for ; alpha > 1e-12; alpha /= 2 {
		fNew, pd := try(trial, alpha)
		if accept(fNew, alpha, pd) {
			blas.Copy(s.x, trial)
			return alpha, fNew, true
		}
	}
	// Restore U and m for the current X.
	s.evaluate(s.x)
	return 0, s.f, false
}

// recomputeAndCertify recomputes Z and Λ at the current X (s.u, s.m hold
// chol(X) and U⁻ᵀVU⁻¹) and returns the certificate there.
func (s *newtonState) recomputeAndCertify(tol float64) (bound, trXinv float64, ok bool) {
	s.f, _ = s.evaluate(s.x)
	if !s.eigen(s.lam) {
		return math.Inf(-1), 0, false
	}
	blas.Trmm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, s.m)
	return s.certificate(tol, math.Inf(1))
}

// record stamps an iteration with the elapsed time, appends it to the
// result's history and reports it to the caller's Progress function.
func record(res *Result, opt Options, start time.Time, it Iteration) {
	it.Seconds = time.Since(start).Seconds()
	res.History = append(res.History, it)
	report(opt, res.History, it)
}

// report sends one iteration to opt.Progress, with the CG steps summed over
// hist (which ends with it).
func report(opt Options, hist []Iteration, it Iteration) {
	if !opt.Progress.Enabled() {
		return
	}
	inner := 0
	for _, h := range hist {
		inner += h.CGSteps
	}
	opt.Progress(progress.Event{Stage: string(opt.Method), Step: it.Iter, Inner: inner,
		Objective: it.Objective, Bound: it.LowerBound, Gap: it.Gap, Seconds: it.Seconds, Detail: it})
}

// reportDone sends a solve's final event.
func reportDone(opt Options, res *Result) {
	opt.Progress.Report(progress.Event{Stage: string(opt.Method), Step: res.Iterations, Inner: res.CGSteps,
		Objective: res.Objective, Bound: res.LowerBound, Gap: res.Gap, Seconds: res.Seconds,
		Done: true, Note: string(res.Status)})
}

// parallelRows runs f over [0, n) split into contiguous chunks, one per
// worker: the O(n²) elementwise passes between BLAS calls would otherwise
// run on one core while the BLAS runs on all of them. The upper triangle
// passes are uneven per row, so chunks are interleaved in four times as
// many pieces as workers. threads caps the workers (Options.Threads; 0
// means GOMAXPROCS), so that k concurrent solves with k·threads ≤ cores do
// not oversubscribe the machine.
func parallelRows(threads, n int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if threads > 0 {
		p = min(p, threads)
	}
	if p <= 1 || n < 256 {
		f(0, n)
		return
	}
	pieces := 4 * p
	var wg sync.WaitGroup
	next := make(chan int, pieces)
	for c := 0; c < pieces; c++ {
		next <- c
	}
	close(next)
	for w := 0; w < p; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				f(c*n/pieces, (c+1)*n/pieces)
			}
		}()
	}
	wg.Wait()
}

func identity(x blas.General) {
	n := x.Rows
	for i := range x.Data {
		x.Data[i] = 0
	}
	for i := 0; i < n; i++ {
		x.Data[i*x.Stride+i] = 1
	}
}

// correlationSqrt sets dst to Q·diag(√μ)·Qᵀ — the square root of the matrix
// with eigenvectors q (columns; destroyed) and eigenvalues μ — scaled to unit
// diagonal: the warm start and the fixed-point step. It is one SYRK of
// B = Q·diag(μ^{1/4}).
func correlationSqrt(dst, q blas.General, mu []float64) {
	n := q.Rows
	for i := 0; i < n; i++ {
		row := q.Data[i*q.Stride : i*q.Stride+n]
		for j := range row {
			row[j] *= math.Sqrt(math.Sqrt(math.Max(mu[j], 0)))
		}
	}
	blas.Syrk(gblas.NoTrans, 1, q, 0, dst)
	normalizeUnitDiagonal(dst)
}

// copyStart copies the caller's start into dst scaled to unit diagonal and
// returns dst; a non-positive or non-finite diagonal leaves NaN, which
// evaluate rejects.
func copyStart(dst blas.General, st *mat.SymDense) blas.General {
	n, raw := st.SymmetricDim(), st.RawSymmetric()
	for i := 0; i < n; i++ {
		copy(dst.Data[i*dst.Stride+i:i*dst.Stride+n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
		if !(raw.Data[i*raw.Stride+i] > 0) {
			dst.Data[i*dst.Stride+i] = math.NaN()
		}
	}
	normalizeUnitDiagonal(dst)
	return dst
}

// normalizeUnitDiagonal scales the symmetric matrix x (upper triangle read)
// to D^{-1/2}·x·D^{-1/2}, D = diag(x), fills both triangles and sets the
// diagonal to exactly 1.
func normalizeUnitDiagonal(x blas.General) {
	n := x.Rows
	d := make([]float64, n)
	for i := 0; i < n; i++ {
		d[i] = 1 / math.Sqrt(x.Data[i*x.Stride+i])
	}
	for i := 0; i < n; i++ {
		x.Data[i*x.Stride+i] = 1
		for j := i + 1; j < n; j++ {
			v := x.Data[i*x.Stride+j] * d[i] * d[j]
			x.Data[i*x.Stride+j] = v
			x.Data[j*x.Stride+i] = v
		}
	}
}
