package newton

import (
	"context"
	"fmt"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
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

// denseNewton is the direct Newton method for a positive definite V (and,
// with Options.Regularization, for V + θI): the fixed-point phase
// (fixedpoint.go), then Newton steps in eigen-coordinates, certified by the
// dual bound. For a V that is numerically singular but regularized by the
// caller, θ is reached by continuation: the method minimizes with V + θₖI
// for θₖ = 1e-3, 1e-5, … down to θ, each stage warm-started from the last
// (measured: 13–44 iterations in all to θ = 1e-9 on rank-deficient
// workloads at n = 512; tenfold steps took about as many), because from
// V^{1/2} Newton's method crawls as X becomes singular along V's null
// space (on width-32 ranges at n = 512 it made no progress in 100
// iterations).
type denseNewton struct {
	s     *newtonState
	sp    *spectrum
	opt   Options
	start time.Time
	res   *Result

	thetas  []float64 // the continuation's θ per stage; nil once certified
	theta   float64   // the final θ (relative to mean(diag V))
	stage   int       // index into thetas
	entered bool      // the current stage's θ is in effect

	iter          int
	bound, trXinv float64 // certified bound at the current X and tr(X⁻¹) there
	status        Status
	lastFull      bool    // the previous step was a full Newton step
	lastEst       float64 // the gap it was taken from, estimated
}

// armijo is the line search's sufficient-decrease constant.
const armijo = 1e-4

// Outcomes of one dense Newton iteration.
const (
	sameStage = iota
	nextStage
	stopSolve
)

// prepare chooses the continuation stages and the starting X, and runs
// the fixed-point phase when there is no continuation.
func (d *denseNewton) prepare(ctx context.Context) error {
	s := d.s
	d.stages()
	warm, err := d.startX()
	if err != nil {
		return err
	}
	d.res.Regularization = d.theta
	d.bound, d.trXinv, d.status, d.lastEst = math.Inf(-1), 0, IterationLimit, math.Inf(1)
	if len(d.thetas) == 1 {
		fp := &fixedPoint{s: s, opt: d.opt, start: d.start, res: d.res, warm: warm}
		if err := run(ctx, fp); err != nil {
			return err
		}
		d.iter, d.bound, d.trXinv = fp.iter, fp.bound, fp.trXinv
		s.clock.lap("fixed-point")
		if fp.converged {
			d.status = Converged
			d.thetas = nil // skip the Newton phase
		}
	}
	return nil
}

// stages sets the continuation's θ values: the caller's θ alone, or, for
// a V singular to rounding (only reached with a caller's θ: an unregularized
// singular V takes the dual method), θ = 1e-3, falling a hundredfold per
// stage to the final θ.
func (d *denseNewton) stages() {
	mu := d.sp.mu
	d.theta = d.opt.Regularization
	d.thetas = []float64{d.theta}
	if mu[0] <= singularTol*mu[len(mu)-1] {
		if d.theta == 0 {
			d.theta = autoTheta
		}
		d.thetas = d.thetas[:0]
		for t := 1e-3; t > d.theta*1.01; t /= 100 {
			d.thetas = append(d.thetas, t)
		}
		d.thetas = append(d.thetas, d.theta)
	}
	d.s.theta = d.thetas[0]
}

// startX sets the starting X and F(X): the caller's warm start if it is
// usable (warm is then true), else V^{1/2} scaled to unit diagonal, else
// the identity.
func (d *denseNewton) startX() (warm bool, err error) {
	s := d.s
	f, ok := math.Inf(1), false
	if st := d.opt.Start; st != nil && len(d.thetas) == 1 {
		f, ok = s.evaluate(copyStart(s.x, st))
	}
	warm = ok
	if !ok {
		if !d.sp.withVectors(s) {
			return false, errSpectrum
		}
		mu := d.sp.mu
		for i := range mu {
			mu[i] += d.thetas[0]
		}
		correlationSqrt(s.x, s.m, mu)
		f, ok = s.evaluate(s.x)
	}
	if !ok {
		// Rounding can leave V^{1/2} of an ill-conditioned V short of
		// definite; the identity is always a feasible start.
		identity(s.x)
		if f, ok = s.evaluate(s.x); !ok {
			return false, fmt.Errorf("newton: could not evaluate the objective at the identity: V is not usable")
		}
	}
	s.f = f
	return warm, nil
}

// step runs one Newton iteration of the current continuation stage,
// entering the stage first if needed.
func (d *denseNewton) step(ctx context.Context) (bool, error) {
	if d.stage >= len(d.thetas) {
		return true, nil
	}
	if !d.entered {
		if th := d.thetas[d.stage]; th != d.s.theta {
			d.s.theta = th
			var ok bool
			if d.s.f, ok = d.s.evaluate(d.s.x); !ok {
				return false, fmt.Errorf("newton: lost positive definiteness when lowering the regularization to %g", th)
			}
		}
		d.entered = true
	}
	next, err := d.iterate(ctx)
	switch {
	case err != nil:
		return false, err
	case next == nextStage:
		d.stage++
		d.entered = false
	}
	return next == stopSolve, nil
}

// iterate is one Newton iteration: certify early if the last full step
// predicts convergence, else form and solve the Newton system, certify
// when its decrement says the stage is done, and take the damped step.
func (d *denseNewton) iterate(ctx context.Context) (int, error) {
	s, opt := d.s, d.opt
	final := d.stage == len(d.thetas)-1
	// Intermediate stages stop on the Newton decrement alone, close enough
	// to their optimum that the next stage starts in Newton's fast region;
	// only the final stage is certified.
	tol := opt.Tol
	if !final {
		tol = stageTol
	}
	if d.iter == opt.MaxIter {
		return stopSolve, nil
	}
	d.iter++
	if err := ctx.Err(); err != nil {
		d.status = Cancelled
		return stopSolve, nil
	}
	// After a full Newton step from an estimated gap ε the new gap is about
	// C·ε² (C measured ≤ 100 on our workloads): when that is below the
	// tolerance, certify before paying for a new eigendecomposition and
	// Newton system.
	if final && d.lastFull && 1e3*d.lastEst*d.lastEst <= tol && d.certifiedEarly(tol) {
		return stopSolve, nil
	}
	sys, ok, err := d.system()
	if err != nil {
		return stopSolve, err
	}
	if !ok {
		// Only rounding can make 𝒜̃ indefinite: no reliable step is left.
		// Certify where we stand.
		d.status = s.stall(&d.bound, &d.trXinv, opt.Tol, s.scale, d.start, d.iter, d.res, opt)
		return stopSolve, nil
	}
	dec := s.decrement(sys.mu, sys.kdiag)
	it := Iteration{Iter: d.iter, Objective: s.f * s.scale, LowerBound: math.NaN(), Gap: math.NaN()}
	if !final && dec/(2*s.f) <= tol {
		record(d.res, opt, d.start, it)
		return nextStage, nil
	}
	if final && (dec/(2*s.f) <= tol || d.iter == opt.MaxIter) {
		if done, err := d.certifyIterate(&it, tol, dec/(2*s.f)); done || err != nil {
			return stopSolve, err
		}
	}
	if d.iter == opt.MaxIter {
		record(d.res, opt, d.start, it)
		return stopSolve, nil
	}
	return d.takeStep(sys, dec, it), nil
}

// certifiedEarly certifies the current X without a new Newton system
// (certifyDirect) and reports whether that met tol.
func (d *denseNewton) certifiedEarly(tol float64) bool {
	s := d.s
	b, tr, ok := s.certifyDirect(tol, 1e3*d.lastEst*d.lastEst)
	s.clock.lap("certificate")
	if !ok || (s.f-b)/s.f > tol {
		return false
	}
	d.bound, d.trXinv = b, tr
	it := Iteration{Iter: d.iter, Objective: s.f * s.scale, LowerBound: b * s.scale, Gap: (s.f - b) / s.f}
	record(d.res, d.opt, d.start, it)
	d.status = Converged
	return true
}

// newtonSystem is a Newton system's solution μ with diag(K̃) and the
// exponential sum (nodes ts, weights ws) it was built with.
type newtonSystem struct {
	ts, ws, mu, kdiag []float64
}

// system moves to eigen-coordinates (m ← Q, the eigenvectors of U⁻ᵀVU⁻¹,
// then Z = UᵀQ) and solves the Newton system there; ok is false if 𝒜̃ is
// not numerically positive definite.
func (d *denseNewton) system() (sys newtonSystem, ok bool, err error) {
	s, n := d.s, d.s.n
	if !s.eigen(s.lam) {
		return sys, false, fmt.Errorf("newton: eigendecomposition failed at iteration %d", d.iter)
	}
	blas.Trmm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, s.m)
	s.clock.lap("eigen")
	lo := 2 * math.Max(s.lam[0], 1e-300)
	hi := 2 * s.lam[n-1]
	// Coarse Hessians suffice while the nonlinearity dominates; the last
	// steps, taken from an estimated gap below 1e-5, use a finer one so
	// that their linear error term (about τ² per step) does not cost an
	// extra iteration.
	tau := hessianTol
	if d.lastEst <= 1e-5 {
		tau = hessianTolFinal
	}
	sys.ts, sys.ws = expSum(lo, hi, tau)
	s.terms += len(sys.ts)
	sys.mu, sys.kdiag, ok = s.solveSystem(sys.ts, sys.ws)
	s.clock.lap("system")
	return sys, ok, nil
}

// decrement returns the Newton decrement −⟨G,D⟩ = tr(Λ·D̂) =
// Σᵢ λᵢ·K̃ᵢᵢ·(λᵢ − Σₖ Zₖᵢ²μₖ); half of it estimates F − F*.
func (s *newtonState) decrement(mu, kdiag []float64) float64 {
	n := s.n
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
	return dec
}

// certifyIterate certifies the current X in its eigen-coordinates, writes
// the bound into it and reports whether the gap met tol.
func (d *denseNewton) certifyIterate(it *Iteration, tol, est float64) (bool, error) {
	s := d.s
	b, tr, ok := s.certificate(tol, est)
	s.clock.lap("certificate")
	if !ok {
		return false, fmt.Errorf("newton: certificate eigendecomposition failed at iteration %d", d.iter)
	}
	d.bound, d.trXinv = b, tr
	it.LowerBound = b * s.scale
	it.Gap = (s.f - b) / s.f
	if it.Gap <= tol {
		d.status = Converged
		record(d.res, d.opt, d.start, *it)
		return true, nil
	}
	return false, nil
}

// takeStep forms the Newton step and line-searches along it.
func (d *denseNewton) takeStep(sys newtonSystem, dec float64, it Iteration) int {
	s := d.s
	s.formStep(sys.mu, sys.ts, sys.ws)
	s.clock.lap("step")
	alpha, fNew, ok := s.lineSearch(dec, armijo)
	s.clock.lap("line-search")
	if !ok {
		// No decrease is representable: we are at the floating-point floor.
		// Certify where we stand.
		d.status = s.stall(&d.bound, &d.trXinv, d.opt.Tol, s.scale, d.start, d.iter, d.res, d.opt)
		return stopSolve
	}
	s.f = fNew
	d.lastFull, d.lastEst = alpha == 1, dec/(2*s.f)
	it.Step = alpha
	record(d.res, d.opt, d.start, it)
	return sameStage
}

// certify completes the result: the bound at the final X (recomputed if
// the solve stopped before certifying it) and, under regularization, the
// bound for the caller's V from the same dual point.
func (d *denseNewton) certify() error {
	s, res, n, scale := d.s, d.res, d.s.n, d.s.scale
	if s.theta != d.theta {
		// Stopped in an intermediate stage (iteration cap or cancellation):
		// report the regularization actually in effect.
		d.theta = s.theta
		res.Regularization = d.theta
		d.bound = math.Inf(-1)
	}
	if d.status == Cancelled || math.IsInf(d.bound, -1) && d.status != Converged {
		// The bound belongs to the final X: recompute it there.
		d.bound, d.trXinv, _ = s.recomputeAndCertify(d.opt.Tol)
	}
	res.Iterations = len(res.History)
	res.Status = d.status
	res.RegularizedObjective = s.f * scale
	res.Objective = (s.f - d.theta*d.trXinv) * scale
	if d.theta > 0 {
		// The bound for the caller's V comes from the same y with raw V.
		y := s.y
		s.loadV(s.gr, 0)
		c, err := psdFactor(s.gr)
		rb := math.Inf(-1)
		if err == nil {
			rb, _ = dualBound(c, y, s.a)
		}
		res.LowerBound = rb * scale
	} else {
		res.LowerBound = d.bound * scale
	}
	res.Gap = (res.Objective - res.LowerBound) / res.Objective
	res.X = mat.NewSymDense(n, s.x.Data)
	res.A = mat.NewTriDense(n, mat.Upper, s.u.Data)
	res.Rank = n
	s.clock.lap("other")
	res.Phases = s.clock.acc
	res.Seconds = time.Since(d.start).Seconds()
	return nil
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
