package lrm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// solver holds one Solve's state through its phases: reduce (W's spectrum
// and the scaled, reduced problem), startPoint (the SVD or p-Identity
// start), iterate (the augmented-Lagrangian main loop) and finish (polish,
// then choose among the exact candidates and return to the caller's
// scale).
type solver struct {
	w     *mat.Dense
	o     Options  // with defaults
	opt   *Options // as given (nil: defaults), for choices that depend on what the caller set
	start time.Time
	res   *Result

	m, n, k, r int
	fro, fro2  float64
	gram       mat.SymDense // of W/‖W‖_F
	lam        []float64    // σᵢ(W), i < k
	vk, uk     *mat.Dense   // V_k (n×k) and U_k = W·V_k·Σ⁻¹ (m×k)
	wr         *mat.Dense   // Wr = Σ_k V_kᵀ/‖W‖_F (k×n)

	svdLt               *mat.Dense // the exact SVD fallback's Lt, its scale s and scaled Φ
	svdScale, svdPhi    float64
	rng                 *rand.Rand
	strt                Start
	lt, pi, pidB, pidLt *mat.Dense
	phi0                float64
	cancelErr           error // ctx.Err() once cancelled: finish with the best exact pair
	ra                  int   // rows of L in the iteration
	maxOuter            int

	vp       *varpro
	st       *lStep
	c        *mat.Dense // C = W + π/β
	b        *mat.Dense
	resid    *mat.Dense
	prev     float64
	phi, rel float64
}

// reduce validates W and computes its row space and singular values from
// the Gram V = WᵀW (one SYRK and a symmetric eigendecomposition through
// package blas): much faster than an SVD of W, especially for tall W.
// λᵢ(V) = σᵢ(W)².
func (s *solver) reduce() error {
	w, o := s.w, s.o
	if err := checkWorkload(w); err != nil {
		return err
	}
	s.m, s.n = w.Dims()
	s.fro = mat.Norm(w, 2)
	s.fro2 = s.fro * s.fro
	switch {
	case s.fro == 0:
		return inputerr.Errorf("lrm", "W has rank 0 (every entry is zero): no query to answer")
	case math.IsInf(s.fro2, 0):
		return inputerr.Errorf("lrm", "W is too large: ‖W‖²_F = %g² overflows float64", s.fro)
	case s.fro2 < 0x1p-1022:
		return inputerr.Errorf("lrm", "W is too small: ‖W‖²_F = %g² underflows float64", s.fro)
	}
	// The Gram of W/‖W‖_F, so that its entries are O(1) at any scale.
	ws := mat.DenseCopyOf(w)
	ws.Scale(1/s.fro, ws)
	s.gram.SymOuterK(1, ws.T())
	lamAll, vecs, err := symEig(&s.gram)
	if err != nil {
		return err
	}
	// Rank: σᵢ > RankTol·σ₁, and never below the eigensolver's resolution
	// λᵢ > n·2⁻⁵²·λ₁ (σᵢ > √(n·2⁻⁵²)·σ₁ ≈ 5e-7·σ₁ at n = 1024).
	tol := math.Max(o.RankTol*o.RankTol, float64(s.n)*0x1p-52)
	k := 0
	for _, l := range lamAll {
		if l > tol*lamAll[0] {
			k++
		}
	}
	if !(lamAll[0] > 0) || k == 0 {
		return inputerr.Errorf("lrm", "W has rank 0 (every singular value is zero): no query to answer")
	}
	r := o.Rank
	if r == 0 {
		r = int(math.Ceil(o.RankFactor*float64(k) - 1e-9))
	}
	if r < k {
		return inputerr.Errorf("lrm", "rank r = %d is below rank(W) = %d; W = BL needs r ≥ rank(W)", r, k)
	}
	s.k, s.r = k, r
	s.lam = make([]float64, k) // σᵢ(W)
	for i := range s.lam {
		s.lam[i] = math.Sqrt(lamAll[i]) * s.fro
	}
	s.vk = mat.DenseCopyOf(vecs.Slice(0, s.n, 0, k)) // n×k
	s.reduced()
	return nil
}

// reduced sets U_k, the result's bounds, the scaled reduced workload Wr
// and the exact SVD fallback.
func (s *solver) reduced() {
	m, n, k := s.m, s.n, s.k
	// W·V_k·Σ⁻¹ = U_k maps the reduced B back (see the end).
	var wv mat.Dense
	wv.Mul(s.w, s.vk)
	for i := 0; i < m; i++ {
		row := wv.RawRowView(i)
		for j := range row {
			row[j] /= s.lam[j]
		}
	}
	s.uk = &wv

	s.res = &Result{Noise: s.o.Noise, ball: s.o.ball, WorkloadRank: k, Rank: s.r, FrobeniusW2: s.fro2, w: s.w}
	s.res.Bounds = seedBounds(s.lam, n, s.o.ball)

	// Scaled, reduced problem: W/‖W‖_F = U_k·Wr with Wr = Σ_k V_kᵀ/‖W‖_F
	// (k×n). Every B iterate keeps its columns in span(U_k) (B-steps,
	// residuals and multiplier updates all stay there), so B = U_k·Br and
	// ‖B‖_F = ‖Br‖_F: the optimization runs on k rows instead of m.
	s.wr = mat.NewDense(k, n, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < n; j++ {
			s.wr.Set(i, j, s.lam[i]*s.vk.At(j, i)/s.fro)
		}
	}

	// Exact fallback: the scaled SVD decomposition.
	s.svdLt, s.svdScale, s.svdPhi = svdStart(s.vk, s.lam, s.r, s.o.ball, nil, s.fro)
	s.res.SVDObjective = s.svdPhi * s.fro2
}

// startPoint chooses and computes the starting point: the p-Identity start
// for the L1 ball when r ≥ n (see Start), else W's SVD mixed over the r
// rows.
func (s *solver) startPoint(ctx context.Context) error {
	o, n, r := s.o, s.n, s.r
	s.rng = rand.New(rand.NewPCG(o.Seed, 0x5eed1))
	s.strt = o.Start
	if s.strt == StartAuto {
		// An explicit Rank is honoured: the p-Identity start has n + p rows.
		s.strt = StartSVD
		if o.ball == l1 && (o.Rank == 0 && r >= n || o.Rank > n) {
			s.strt = StartPIdentity
		}
	}
	if s.strt == StartPIdentity && o.Rank > 0 && o.Rank <= n {
		return inputerr.Errorf("lrm", "the p-Identity start has n + p > n = %d rows; Rank = %d asks for fewer", n, o.Rank)
	}
	s.ra = r
	if s.strt == StartPIdentity {
		if err := s.pIdentity(ctx); err != nil {
			return err
		}
	} else {
		// The SVD decomposition mixed by a random r×k matrix Q with
		// orthonormal columns (Lt = V_k Qᵀ/s), so all r rows of L carry
		// mass; the seed pads with tiny constant rows instead, which leaves
		// the extra rows nearly dead.
		s.lt, _, s.phi0 = svdStart(s.vk, s.lam, r, o.ball, randomOrthonormal(r, s.k, s.rng), s.fro)
		s.pi = mat.NewDense(s.k, n, nil)
	}
	s.res.Start = s.strt
	return nil
}

// pIdentity computes the p-Identity start (pIdentityStart) and its exact
// pair; a cancelled start leaves a placeholder and the SVD fallback.
func (s *solver) pIdentity(ctx context.Context) error {
	o, n := s.o, s.n
	p := o.PIdentityRows
	switch {
	case p > 0:
	case o.Rank > n:
		p = o.Rank - n
	default:
		p = (n + 15) / 16
	}
	var prog func(int, float64)
	if o.Progress.Enabled() {
		prog = func(it int, f float64) {
			o.Progress(progress.Event{Stage: "lrm start", Inner: it, Objective: f * s.fro2,
				Bound: math.NaN(), Gap: math.NaN(), Seconds: time.Since(s.start).Seconds()})
		}
	}
	if w := o.PIdentityWarm; w != nil {
		if err := checkWarm(w, p, n); err != nil {
			return err
		}
	}
	theta, its, warmKept, err := pIdentityBest(ctx, &s.gram, p, o.ball, o.PIdentityIters, o.PIdentityRestarts, o.PIdentityWarm, o.PIdentityPolish, s.rng, prog)
	if err != nil && ctx.Err() == nil {
		return err
	}
	if err != nil { // cancelled: no p-Identity pair; the SVD fallback below
		s.cancelErr = ctx.Err()
		theta = mat.NewDense(p, n, nil) // Θ = 0: the pair below is Identity, only a placeholder
	}
	var phiP float64
	s.lt, s.pidB, s.pi, phiP = pIdentityPair(s.wr, theta, o.ball)
	s.pidLt = mat.DenseCopyOf(s.lt)
	s.ra = n + p
	s.phi0 = phiP
	s.res.PIdentityRows, s.res.PIdentityIterations, s.res.PIdentityObjective = p, its, phiP*s.fro2
	if s.cancelErr == nil {
		s.res.PIdentityTheta, s.res.PIdentityWarmKept = theta, warmKept
	}
	return nil
}

// setup decides how many outer iterations run and, if any, allocates
// their workspaces and the first subproblem.
func (s *solver) setup(ctx context.Context) {
	o := s.o
	if s.cancelErr != nil {
		s.pidB, s.pidLt = nil, nil // the interrupted start is not a result
	}
	s.maxOuter = o.MaxOuter
	if s.cancelErr != nil || ctx.Err() != nil {
		s.maxOuter = 0
		s.cancelErr = ctx.Err()
	}
	if s.strt == StartPIdentity && !o.Refine {
		s.maxOuter = 0 // return the exact start: no iteration workspaces
	}
	if s.maxOuter > 0 {
		s.vp = newVarpro(mat.DenseCopyOf(s.wr), s.ra)
		beta0 := o.Beta0
		if s.strt == StartPIdentity && (s.opt == nil || s.opt.Beta0 == 0) {
			// The start is stationary in B and near-stationary in L
			// (within p-Identity's family): a large penalty keeps the
			// iteration near it. At the default 0.5 it wandered off on
			// WRange n = 128 (relaxed gain over Identity 2.27 → 1.64); at
			// 50 it ended at 2.29–2.32.
			beta0 = pIdentityBeta0
		}
		s.vp.beta = beta0 * s.phi0
		s.c = mat.NewDense(s.k, s.n, nil)
		s.c.Scale(1/s.vp.beta, s.pi)
		s.c.Add(s.c, s.wr)
		s.vp.setC(s.c)
		s.st = newLStep(s.n, s.ra, o.ball)
		s.st.lip = 1 / s.vp.beta
		s.resid = mat.NewDense(s.k, s.n, nil)
	}
	s.prev = math.Inf(1)
}

// iterate runs the augmented-Lagrangian main loop: at most maxOuter outer
// iterations, each an L-step run, the closed-form B-step and the
// multiplier update, until ‖Wr − B·Lᵀ‖_F ≤ Tol. Cancellation ends it with
// cancelErr set.
func (s *solver) iterate(ctx context.Context) error {
	for outer := 1; outer <= s.maxOuter; outer++ {
		if err := ctx.Err(); err != nil {
			s.cancelErr = err
			break
		}
		stop, err := s.outerStep(ctx, outer)
		if err != nil {
			return err
		}
		if stop {
			break
		}
	}
	return nil
}

// outerStep is one outer iteration; stop reports convergence or
// cancellation.
func (s *solver) outerStep(ctx context.Context, outer int) (stop bool, err error) {
	o, res, vp := s.o, s.res, s.vp
	iters := o.MaxInner
	if outer == 1 {
		iters = o.FirstInner
	}
	s.st.onStep = nil
	if o.Progress.Enabled() {
		before, outer := res.InnerIterations, outer
		s.st.onStep = func(done int) {
			if (before+done)%StepProgressEvery == 0 {
				o.Progress(progress.Event{Stage: "lrm", Step: outer, Inner: before + done,
					Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN(), Seconds: time.Since(s.start).Seconds()})
			}
		}
	}
	done, err := s.st.run(ctx, vp, s.lt, iters)
	res.InnerIterations += done
	if err != nil && ctx.Err() != nil {
		s.cancelErr = ctx.Err()
		return true, nil
	}
	if err != nil {
		return true, err
	}
	if s.b, err = vp.bStep(s.lt); err != nil {
		return true, err
	}
	// R = Wr − B Ltᵀ.
	s.resid.Mul(s.b, s.lt.T())
	s.resid.Sub(s.wr, s.resid)
	s.rel = mat.Norm(s.resid, 2) // ‖Wr‖_F = 1
	nb := mat.Norm(s.b, 2)
	s.phi = nb * nb
	res.Iterations = outer
	if o.Progress.Enabled() {
		it := Iteration{Outer: outer, Inner: res.InnerIterations, Objective: s.phi * s.fro2, Residual: s.rel, Beta: vp.beta}
		o.Progress(progress.Event{Stage: "lrm", Step: outer, Inner: it.Inner, Objective: it.Objective,
			Bound: math.NaN(), Gap: math.NaN(), Seconds: time.Since(s.start).Seconds(), Detail: it})
	}
	if !(s.rel <= math.MaxFloat64) || !(s.phi <= math.MaxFloat64) {
		return true, errors.New("lrm: iteration diverged (non-finite residual or objective)")
	}
	if s.rel <= o.Tol {
		return true, nil
	}
	s.update()
	return false, nil
}

// update is the multiplier step π ← π + β(W − BL), β's growth when the
// residual fails to halve, a random re-mixing of L when it stalls, and the
// next subproblem's C = W + π/β.
func (s *solver) update() {
	vp := s.vp
	axpy(s.pi, vp.beta, s.resid)
	if s.rel > 0.5*s.prev {
		vp.beta *= s.o.BetaGrowth
	}
	if s.rel > stallRatio*s.prev {
		// Stalled: directions of W have dropped out of L's row space.
		// Gradient steps cannot bring them back (the factorization's
		// rank-deficient points are invariant under them), so mix in a
		// random full-rank L: a convex combination of columns in the ball
		// stays in the ball.
		mixRandom(s.lt, perturb, s.rng, s.o.ball, s.st.scratch)
		s.res.Perturbations++
	}
	s.prev = s.rel
	s.c.Scale(1/vp.beta, s.pi)
	s.c.Add(s.c, s.wr)
	vp.setC(s.c)
}

// polishAndChoose makes a converged pair exact (polish) and picks the
// returned pair among the iteration's, the p-Identity start and the exact
// SVD fallback; it reports whether the iteration converged.
func (s *solver) polishAndChoose() (converged bool) {
	o, res := s.o, s.res
	if s.maxOuter == 0 {
		// No iteration: the exact start is the iteration's result.
		s.b, s.phi, s.rel = s.pidB, s.phi0, 0
	}
	res.ALResidual = s.rel
	res.RelaxedObjective = s.phi * s.fro2
	// An interrupted iteration's pair is not a result (its last B-step may
	// be missing): only the exact starts and fallbacks below are returned.
	converged = s.rel <= o.Tol && s.cancelErr == nil && s.b != nil
	if converged && !o.Relaxed && res.Iterations > 0 {
		// Make the decomposition exact so the answers carry no structural
		// (data-dependent) error (see polish).
		if plt, pb, pphi, ok := polish(s.lt, s.b, s.wr, o.ball); ok {
			s.lt, s.b, s.phi, s.rel = plt, pb, pphi, 0
			res.Polished = true
		}
	}
	usable := converged // the iteration's pair is a candidate
	if s.pidB != nil && (!converged || s.phi >= s.phi0) {
		// The iteration did not improve on its exact p-Identity start (or
		// did not run: Options.Refine).
		res.PIdentity, res.Polished = true, false
		s.lt, s.b, s.phi, s.rel = s.pidLt, s.pidB, res.PIdentityObjective/s.fro2, 0
		usable = true
	}
	if !usable || s.phi > s.svdPhi {
		res.Fallback = true
		res.Polished, res.PIdentity = false, false
		s.lt = s.svdLt
		// Br = s·Σ_k/‖W‖_F in the first k columns: Br·Ltᵀ = Σ_k V_kᵀ/‖W‖_F.
		s.b = mat.NewDense(s.k, s.r, nil)
		for i := 0; i < s.k; i++ {
			s.b.Set(i, i, s.svdScale*s.lam[i]/s.fro)
		}
		s.phi = s.svdPhi
		s.rel = 0
	}
	return converged
}

// finish returns the chosen pair on the caller's scale — or Identity when
// that is better — with its sensitivity, residual and status.
func (s *solver) finish(converged bool) {
	res, m, n := s.res, s.m, s.n
	if s.phi > 1-1e-9 {
		// Identity (B = W, L = I) is exact, lies in both balls and has
		// Φ = ‖W‖²_F, 1 on this scale. Return it when it is better still
		// (or within 1e-9: it is the simpler strategy, with the fewest rows),
		// so that LRM never loses to answering each cell; under ε-DP it
		// otherwise does on random workloads of rank s beyond about √n
		// (see the package documentation).
		res.Identity, res.Fallback, res.Polished, res.PIdentity = true, false, false, false
		res.Rank = n
		res.B = mat.DenseCopyOf(s.w)
		id := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			id.Set(i, i, 1)
		}
		res.L = id
		res.Objective = s.fro2
	} else {
		// Back to the caller's scale: B = ‖W‖_F·U_k·Br.
		_, rb := s.b.Dims()
		bf := mat.NewDense(m, rb, nil)
		bf.Mul(s.uk, s.b)
		bf.Scale(s.fro, bf)
		res.B = bf
		res.L = mat.DenseCopyOf(s.lt.T())
		res.Objective = s.phi * s.fro2
	}
	res.Rank, _ = res.L.Dims()
	res.Sensitivity = sensitivity(res.L, s.o.ball)
	// Report the residual of the returned pair in the original coordinates.
	var bl mat.Dense
	bl.Mul(res.B, res.L)
	bl.Sub(s.w, &bl)
	res.Residual = mat.Norm(&bl, 2) / s.fro
	switch {
	case converged:
		res.Status = status.Converged
	case s.cancelErr != nil:
		res.Status = status.Cancelled
	default:
		res.Status = status.IterationLimit
	}
	if s.vp != nil {
		res.Evaluations, res.Gradients = s.vp.evals, s.vp.grads
	}
	res.Seconds = time.Since(s.start).Seconds()
}
