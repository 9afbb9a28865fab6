package lrm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/psd"
	"github.com/dpsolve/dpsolve/internal/symdense"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// ball is the unit ball the columns of L are constrained to: the ball of
// the norm (calibrate.NoiseKind.Norm) the noise model is calibrated to.
// It is internal; callers choose the noise model (Options.Noise).
type ball int

const (
	// l1 constrains every column of L to the unit ℓ1 ball: Δ₁(L) ≤ 1, for
	// Laplace noise and pure ε-differential privacy (the seed's setting).
	l1 ball = 1
	// l2 constrains every column of L to the unit ℓ2 ball: Δ₂(L) ≤ 1, for
	// Gaussian noise and (ε,δ)-differential privacy.
	l2 ball = 2
)

// String returns "l1" or "l2".
func (b ball) String() string {
	switch b {
	case l1:
		return "l1"
	case l2:
		return "l2"
	}
	return fmt.Sprintf("ball(%d)", int(b))
}

// Start selects Solve's starting point.
type Start int

const (
	// StartAuto uses StartPIdentity for the L1 ball when r ≥ n (W of full
	// or nearly full column rank, where a factorization cannot save
	// measurements; with an explicit Rank, when Rank > n) and StartSVD
	// otherwise.
	StartAuto Start = iota
	// StartSVD is the seed's start: W's SVD, mixed over the r rows.
	StartSVD
	// StartPIdentity optimizes HDMM's p-Identity strategy L = [I; Θ]·D⁻¹
	// (exact, n + p rows) by projected L-BFGS over Θ ≥ 0 and returns it;
	// with Refine, the augmented-Lagrangian iteration starts from it, with
	// the multipliers that make it stationary in B.
	StartPIdentity
)

// String returns "auto", "svd" or "pidentity".
func (s Start) String() string {
	switch s {
	case StartAuto:
		return "auto"
	case StartSVD:
		return "svd"
	case StartPIdentity:
		return "pidentity"
	}
	return fmt.Sprintf("Start(%d)", int(s))
}

// Options controls Solve. The zero value (or nil) selects every default.
type Options struct {
	// Noise is the noise model: calibrate.Laplace (the default; ε-DP, the
	// columns of L in the unit ℓ1 ball) or calibrate.Gaussian ((ε,δ)-DP or
	// zCDP, the ℓ2 ball).
	Noise calibrate.NoiseKind
	ball  ball // Noise's ball, set by withDefaults
	// RankFactor sets the number of rows of L to r = ⌈RankFactor·rank(W)⌉
	// (default 1.2, the seed's choice). Rank, when positive, overrides it.
	RankFactor float64
	Rank       int
	// RankTol is the relative singular-value threshold below which W's
	// singular values count as zero. The floor (and default) is
	// √(n·2⁻⁵²), the resolution of the Gram's eigenvalues from which they
	// are computed (about 5e-7 at n = 1024).
	RankTol float64
	// Tol stops the iteration once ‖W − BL‖_F ≤ Tol·‖W‖_F (default 1e-3).
	Tol float64
	// MaxOuter caps the augmented-Lagrangian (multiplier) iterations
	// (default 60).
	MaxOuter int
	// MaxInner caps the L-step iterations per outer iteration (default 40;
	// the first outer iteration, which moves furthest from the start, gets
	// FirstInner, default 4·MaxInner).
	MaxInner, FirstInner int
	// Beta0 is the initial penalty β relative to the starting objective
	// Φ₀/‖W‖²_F (default 0.5; 50 from the p-Identity start, see Refine).
	// Small values let the first subproblems trade feasibility for a lower
	// objective; too small ones let whole directions of W drop out.
	Beta0 float64
	// BetaGrowth multiplies β whenever an outer iteration fails to halve the
	// residual (default 2).
	BetaGrowth float64
	// Start selects the starting point (default StartAuto).
	Start Start
	// PIdentityRows is p, the number of rows the p-Identity start adds to
	// the identity, so that L has n + p rows (default Rank − n when Rank
	// > n, else ⌈n/16⌉, HDMM's choice). PIdentityIters caps its L-BFGS
	// iterations (default 500).
	PIdentityRows, PIdentityIters int
	// PIdentityRestarts is the number of random starts of the p-Identity
	// L-BFGS (default 1, or 0 when PIdentityWarm is set); the Θ of lowest
	// Φ is kept, and the first random start is the one a single start
	// uses, so more restarts never return a higher Φ. Φ is not convex in
	// Θ: HDMM restarts its templates. PIdentityIterations reports the
	// iterations of all starts.
	PIdentityRestarts int
	// PIdentityWarm, when set, is a p-Identity Θ (p×n, p the rows the start
	// adds, entries finite and ≥ 0) to start from as well, typically a
	// previous Result's PIdentityTheta for a nearby Gram; the result's Φ
	// is then at most the Φ at PIdentityWarm.
	PIdentityWarm *mat.Dense
	// PIdentityPolish polishes the kept Θ by a further L-BFGS run at
	// relative tolerance 1e-9 even when there is a single start (a warm Θ
	// and no random restart); with more than one start it always is. A
	// fresh run's memory lets the descent continue where the first one
	// stopped at its tolerance or iteration cap.
	PIdentityPolish bool
	// Refine runs the augmented-Lagrangian iteration from the p-Identity
	// start (default: return the start). On WRange it improved Φ by 0.5% at
	// n = 128 and not at all at n = 256 and 512 (the polished result was
	// worse and the start was returned), at 10–24 times the cost.
	Refine bool
	// Seed fixes the random orthogonal mixing of the SVD start (default 1).
	// It is not privacy randomness: the optimization never sees the data.
	Seed uint64
	// Relaxed returns the iteration's W ≈ BL as is (the seed's relaxed
	// decomposition, whose answers carry the structural error
	// ‖(W − BL)x‖²). By default the converged pair is polished to an exact
	// decomposition, L ← (L + B⁺(W − BL))/s with s ≥ 1 restoring the ball
	// and B ← s·B, which removes the data-dependent error for a relative
	// change in Φ of the order of the residual.
	Relaxed bool
	// Progress, when set, receives dpsolve's progress events: with Stage
	// "lrm start" every StepProgressEvery L-BFGS iterations of the
	// p-Identity start (Inner the iterations done, Objective the current
	// Φ; about 9 s in all at n = 1024); with Stage "lrm" every
	// StepProgressEvery L-steps inside an outer iteration (Step the outer
	// iteration, Inner the L-steps so far, Objective unknown: an outer
	// iteration can take minutes at n = 1024) and after every outer
	// iteration (Objective tr(BᵀB) at the closed-form B, Detail the
	// Iteration); and a final "lrm" event with Done set and the returned
	// decomposition's Φ when Solve returns a result.
	Progress progress.Func
}

// Iteration reports one outer iteration.
type Iteration struct {
	Outer, Inner int     // outer index (from 1) and cumulative L-steps
	Objective    float64 // tr(BᵀB) at the closed-form B
	Residual     float64 // ‖W − BL‖_F / ‖W‖_F
	Beta         float64 // penalty, relative to ‖W‖_F⁻²
}

func (o *Options) withDefaults() (Options, error) {
	var d Options
	if o != nil {
		d = *o
	}
	if d.Noise == "" {
		d.Noise = calibrate.Laplace
	}
	b, err := ballFor(d.Noise)
	if err != nil {
		return d, err
	}
	d.ball = b
	checks := []struct {
		name string
		v    *float64
		def  float64
	}{
		{"rank factor", &d.RankFactor, 1.2},
		{"rank tolerance", &d.RankTol, 0},
		{"tolerance", &d.Tol, 1e-3},
		{"initial penalty β₀", &d.Beta0, 0.5},
		{"penalty growth factor", &d.BetaGrowth, 2},
	}
	for _, c := range checks {
		if math.IsNaN(*c.v) || math.IsInf(*c.v, 0) || *c.v < 0 {
			return d, inputerr.Errorf("lrm", "the %s must be finite and non-negative, got %v", c.name, *c.v)
		}
		if *c.v == 0 {
			*c.v = c.def
		}
	}
	if d.RankFactor < 1 {
		return d, inputerr.Errorf("lrm", "the rank factor (rows of L per rank of W) must be at least 1, got %v", d.RankFactor)
	}
	if d.BetaGrowth < 1 {
		return d, inputerr.Errorf("lrm", "the penalty growth factor must be at least 1, got %v", d.BetaGrowth)
	}
	if d.Tol >= 1 {
		return d, inputerr.Errorf("lrm", "the tolerance must be below 1, got %v", d.Tol)
	}
	if d.Rank < 0 || d.MaxOuter < 0 || d.MaxInner < 0 || d.FirstInner < 0 || d.PIdentityRows < 0 || d.PIdentityIters < 0 || d.PIdentityRestarts < 0 {
		return d, inputerr.Errorf("lrm", "the rank, the iteration limits and the p-Identity rows, iterations and restarts must not be negative")
	}
	if d.Start < StartAuto || d.Start > StartPIdentity {
		return d, inputerr.Errorf("lrm", "unknown starting point %d", int(d.Start))
	}
	if d.PIdentityIters == 0 {
		d.PIdentityIters = 500
	}
	if d.MaxOuter == 0 {
		d.MaxOuter = 60
	}
	if d.MaxInner == 0 {
		d.MaxInner = 40
	}
	if d.FirstInner == 0 {
		d.FirstInner = 4 * d.MaxInner
	}
	if d.Seed == 0 {
		d.Seed = 1
	}
	return d, nil
}

// Result is a solved decomposition W ≈ B·L.
type Result struct {
	// B (m×r) and L (r×n): the mechanism measures y = L·x + noise and
	// answers B·y. Every column of L lies in the unit ball of the noise
	// model's norm: ℓ1 for Laplace, ℓ2 for Gaussian.
	B, L *mat.Dense
	// Noise is the noise model the decomposition is normalized for.
	Noise calibrate.NoiseKind
	ball  ball
	// Objective is Φ = tr(BᵀB) = ‖B‖²_F. The expected noise error is
	// Φ·Δ(L)² times the per-measurement noise variance at unit sensitivity.
	Objective float64
	// Sensitivity is Δ(L), the largest column ℓ1 (L1) or ℓ2 (L2) norm of L;
	// at most 1 (up to rounding in the last place).
	Sensitivity float64
	// Residual is ‖W − BL‖_F / ‖W‖_F.
	Residual float64
	// WorkloadRank is rank(W); Rank is r, the number of rows of L.
	WorkloadRank, Rank int
	// Iterations counts outer (multiplier) iterations, InnerIterations the
	// L-steps (each followed by the closed-form B-step).
	Iterations, InnerIterations int
	// ALResidual is the augmented-Lagrangian iteration's final
	// ‖W − BL‖_F/‖W‖_F, and RelaxedObjective its Φ, before polishing.
	ALResidual, RelaxedObjective float64
	// Status is status.Converged when ALResidual ≤ Tol (or the exact
	// p-Identity start is returned without iterating), status.Cancelled
	// when ctx was cancelled, and status.IterationLimit when MaxOuter
	// iterations ran first. An unconverged run returns the exact SVD
	// decomposition (Fallback).
	Status status.Status
	// Polished is true when the returned pair is the exact polish of the
	// iteration's result (W = BL to rounding; see Options.Relaxed).
	Polished bool
	// Start is the starting point used (StartSVD or StartPIdentity).
	Start Start
	// PIdentity is true when the exact p-Identity start (StartPIdentity)
	// is returned: always without Refine, and with it when the iteration's
	// result was no better.
	PIdentity bool
	// PIdentityRows (p), PIdentityIterations (L-BFGS iterations) and
	// PIdentityObjective (its Φ) describe the p-Identity start; zero for
	// StartSVD.
	PIdentityRows, PIdentityIterations int
	PIdentityObjective                 float64
	// PIdentityTheta is the p-Identity start's Θ (p×n), nil for other
	// starts: pass it as Options.PIdentityWarm to continue from it.
	PIdentityTheta *mat.Dense
	// PIdentityWarmKept is true when PIdentityWarm was given and its
	// descent was kept: no random restart reached a lower Φ.
	PIdentityWarmKept bool
	// Fallback is true when the optimizer ended unconverged or above the
	// scaled SVD decomposition, and that exact decomposition is returned.
	Fallback bool
	// Identity is true when Identity (B = W, L = I, r = n; Φ = ‖W‖²_F) was
	// better than (or within a relative 1e-9 of) both the optimizer's
	// result and the SVD decomposition, and is returned instead, so that
	// Objective never exceeds ‖W‖²_F.
	Identity bool
	// SVDObjective is Φ of the scaled SVD decomposition B = s·UΣ,
	// L = Vᵀ/s, s = the largest ball norm of a column of Vᵀ, which is
	// exact (W = BL) and never above Bounds.SVDUpper.
	SVDObjective float64
	// Bounds are the seed's bounds for this workload.
	Bounds Bounds
	// FrobeniusW2 is ‖W‖²_F: Identity's objective (B = W, L = I).
	FrobeniusW2 float64
	// Perturbations counts the random re-mixings of L after a stalled
	// outer iteration.
	Perturbations int
	// Evaluations counts evaluations of the reduced subproblem (each costs
	// a few n³-sized BLAS-3 products), Gradients those that also formed
	// the gradient.
	Evaluations, Gradients int
	// Seconds is the wall time of Solve.
	Seconds float64

	w *mat.Dense // the workload, for StructuralError
}

// Bounds on the objective Φ = tr(BᵀB) of an exact decomposition W = BL with
// Δ(L) ≤ 1. Multiply by the unit-sensitivity noise variance (2/ε² for
// Laplace) for error units.
type Bounds struct {
	// SVDUpper is the seed's upper bound k·Σλᵢ² (ℓ1; λ the k nonzero
	// singular values of W): the error of its decomposition B = √k·UΣ,
	// L = Vᵀ/√k, feasible because ‖v‖₁ ≤ √k‖v‖₂. For the ℓ2 ball the
	// same construction with √k replaced by 1 gives Σλᵢ² = ‖W‖²_F.
	SVDUpper float64
	// Lower is (Σλᵢ)²/n, the SVD bound of Li & Miklau: no exact
	// decomposition with Δ₂(L) ≤ 1 has smaller Φ (tr(LᵀL) ≤ n), hence none
	// with Δ₁(L) ≤ 1 either (‖·‖₂ ≤ ‖·‖₁). It is a proven bound.
	Lower float64
	// HardtTalwar is the expression of the seed's lower-bound lemma,
	// (2ᵏ/k!·Πλᵢ)^{2/k}·k³, without the Ω's unspecified constant. It is a
	// growth rate, not a certified bound: for W = I it is ≈ 4e²·n while the
	// optimum is n, so the hidden constant is below 1/29.
	HardtTalwar float64
}

// Solve computes the Low-Rank Mechanism's decomposition of W (m×n) by the
// augmented-Lagrangian method of Yuan et al. (VLDB 2012) described in the
// package documentation. opt may be nil.
//
// Cancellation follows dpsolve's one rule (as newton.Solve): when ctx is
// cancelled during the computation, Solve returns the best exact
// decomposition it has at that point — the p-Identity start if it finished,
// else the exact SVD decomposition, or Identity when that is better — with
// Status status.Cancelled, AND ctx.Err(). A caller can use the result (it is a valid
// W = BL) or discard it. A context cancelled before the work starts gives
// that same fallback.
func Solve(ctx context.Context, w *mat.Dense, opt *Options) (*Result, error) {
	res, err := solve(ctx, w, opt)
	if res != nil && opt != nil && opt.Progress.Enabled() {
		note := "converged"
		switch {
		case err != nil:
			note = "cancelled"
		case res.Status != status.Converged:
			note = "not converged"
		}
		opt.Progress(progress.Event{Stage: "lrm", Step: res.Iterations, Inner: res.InnerIterations,
			Objective: res.Objective, Bound: math.NaN(), Gap: math.NaN(), Seconds: res.Seconds, Done: true, Note: note})
	}
	return res, err
}

// solve is Solve without the final progress event: reduce, start, main
// loop, polish (phases.go).
func solve(ctx context.Context, w *mat.Dense, opt *Options) (*Result, error) {
	start := time.Now()
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &solver{w: w, o: o, opt: opt, start: start}
	if err := s.reduce(); err != nil {
		return nil, err
	}
	if err := s.startPoint(ctx); err != nil {
		return nil, err
	}
	s.setup(ctx)
	if err := s.iterate(ctx); err != nil {
		return nil, err
	}
	s.finish(s.polishAndChoose())
	return s.res, s.cancelErr
}

// checkWorkload rejects empty or non-finite W.
func checkWorkload(w *mat.Dense) error {
	if w == nil || w.IsEmpty() {
		return inputerr.Errorf("lrm", "empty workload matrix W")
	}
	m, _ := w.Dims()
	for i := 0; i < m; i++ {
		for j, x := range w.RawRowView(i) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return inputerr.Errorf("lrm", "W[%d][%d] = %v is not finite", i, j, x)
			}
		}
	}
	return nil
}

// svdStart returns Lt = V_k·Qᵀ/s (n×r; Q = [I;0] when q is nil), s the
// largest ball norm of a row of V_k·Qᵀ so that every column of L is in the
// ball, together with s and the scaled objective Φ/‖W‖²_F = s²·Σλ²/‖W‖²_F
// of the exact pair B = s·U_kΣ_kQᵀ, L = Q·V_kᵀ/s.
func svdStart(vk mat.Matrix, lam []float64, r int, ball ball, q *mat.Dense, fro float64) (*mat.Dense, float64, float64) {
	n, k := vk.Dims()
	lt := mat.NewDense(n, r, nil)
	if q == nil {
		lt.Slice(0, n, 0, k).(*mat.Dense).Copy(vk)
	} else {
		lt.Mul(vk, q.T())
	}
	s := 0.0
	for j := 0; j < n; j++ {
		s = math.Max(s, ballNorm(lt.RawRowView(j), ball))
	}
	lt.Scale(1/s, lt)
	projectRows(lt, ball) // removes rounding only: every norm is ≤ 1 + ulps
	var l2 float64
	for _, x := range lam {
		l2 += x * x
	}
	return lt, s, s * s * l2 / (fro * fro)
}

// randomOrthonormal returns an r×k matrix with orthonormal columns from the
// QR factorization of a Gaussian matrix (deterministic for a given rng).
func randomOrthonormal(r, k int, rng *rand.Rand) *mat.Dense {
	g := mat.NewDense(r, k, nil)
	raw := g.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] = rng.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q) // r×r
	return mat.DenseCopyOf(q.Slice(0, r, 0, k))
}

// ballNorm returns ‖v‖₁ or ‖v‖₂.
func ballNorm(v []float64, ball ball) float64 {
	var s float64
	if ball == l1 {
		for _, x := range v {
			s += math.Abs(x)
		}
		return s
	}
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// sensitivity returns the largest column ball norm of L (r×n).
func sensitivity(l *mat.Dense, ball ball) float64 {
	r, n := l.Dims()
	col := make([]float64, r)
	var d float64
	for j := 0; j < n; j++ {
		mat.Col(col, j, l)
		d = math.Max(d, ballNorm(col, ball))
	}
	return d
}

// seedBounds computes the bounds for the k nonzero singular values lam.
func seedBounds(lam []float64, n int, ball ball) Bounds {
	k := float64(len(lam))
	var s1, s2, logProd float64
	for _, x := range lam {
		s1 += x
		s2 += x * x
		logProd += math.Log(x)
	}
	bd := Bounds{Lower: s1 * s1 / float64(n)}
	if ball == l1 {
		bd.SVDUpper = k * s2
	} else {
		bd.SVDUpper = s2
	}
	lg, _ := math.Lgamma(k + 1)
	bd.HardtTalwar = math.Exp(2/k*(k*math.Ln2-lg+logProd) + 3*math.Log(k))
	return bd
}

// StepProgressEvery is the number of L-steps (or L-BFGS iterations of the
// p-Identity start) between in-progress events.
const StepProgressEvery = 20

const (
	// pIdentityBeta0 is the default Beta0 from the p-Identity start.
	pIdentityBeta0 = 50
	// stallRatio: an outer iteration that leaves more than this fraction
	// of the previous residual counts as stalled.
	stallRatio = 0.8
	// perturb is the weight of the random L mixed in after a stall.
	perturb = 0.05
)

// mixRandom sets Lt ← (1−eta)·Lt + eta·G, G a Gaussian n×r matrix with
// every row projected onto the ball.
func mixRandom(lt *mat.Dense, eta float64, rng *rand.Rand, ball ball, scratch []float64) {
	n, _ := lt.Dims()
	for j := 0; j < n; j++ {
		row := lt.RawRowView(j)
		g := scratch[:len(row)]
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		nrm := ballNorm(g, ball)
		for i := range row {
			row[i] = (1-eta)*row[i] + eta*g[i]/nrm
		}
	}
}

// polish turns an approximate pair (B, L), B (k×r) of full row rank, into an
// exact one. With the residual R = W̃ − BL (k×n) and B⁺ = Bᵀ(BBᵀ)⁻¹,
// L' = L + B⁺R satisfies BL' = BL + R = W̃ exactly; L' moves by ‖B⁺R‖, of the
// order of the residual, so its columns leave the ball by at most that much,
// and the seed's scale invariance (B·s, L/s) restores them: with s the
// largest ball norm of a column of L', the pair (s·B, L'/s) is exact with
// Φ multiplied by s² ≈ 1 + O(residual). ok is false when BBᵀ is not
// numerically positive definite.
func polish(lt, b, wr *mat.Dense, ball ball) (*mat.Dense, *mat.Dense, float64, bool) {
	n, r := lt.Dims()
	var bbt mat.SymDense
	bbt.SymOuterK(1, b) // BBᵀ (k×k)
	var ch mat.Cholesky
	if !ch.Factorize(&bbt) || ch.Cond() > 1e12 {
		return nil, nil, 0, false
	}
	var res mat.Dense // R = W̃ − B Ltᵀ (k×n)
	res.Mul(b, lt.T())
	res.Sub(wr, &res)
	var y mat.Dense // (BBᵀ)⁻¹R (k×n)
	if err := ch.SolveTo(&y, &res); err != nil {
		return nil, nil, 0, false
	}
	nlt := mat.NewDense(n, r, nil)
	nlt.Mul(y.T(), b) // (B⁺R)ᵀ = Yᵀ B  (n×r)
	nlt.Add(nlt, lt)
	s := 0.0
	for j := 0; j < n; j++ {
		s = math.Max(s, ballNorm(nlt.RawRowView(j), ball))
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return nil, nil, 0, false
	}
	// Only scale down: columns already inside stay where they are. The
	// projection afterwards only removes rounding (norms of 1 + a few ulps).
	s = math.Max(s, 1)
	nlt.Scale(1/s, nlt)
	projectRows(nlt, ball)
	nb := mat.DenseCopyOf(b)
	nb.Scale(s, nb)
	f := mat.Norm(nb, 2)
	phi := f * f
	return nlt, nb, phi, true
}

// GramFactor returns a k×n matrix F with FᵀF = V for a workload Gram V
// (symmetric positive semidefinite): psd.Principal's F = Λ^{1/2}Qᵀ over
// V's eigenvalues above psd.Tol = 32·n·ε·λ_max, in descending order, so k
// is V's rank. V with an eigenvalue below −psd.Tol, or of rank 0, is
// refused (an error wrapping ErrInput). The Low-Rank Mechanism's optimum
// depends on W only through V (W = QF for a matrix Q with orthonormal
// columns, and B ↦ QB preserves ‖B‖_F), so Solve(F) gives W's objective
// when only V is known; its B then answers F·x, not W·x, which is why F is
// V's principal factor and not its Cholesky factor: its rows are W's right
// singular vectors scaled by the singular values, one per rank. Eigenvalues
// of V resolve singular values of W only down to about 1e-8·σ₁.
func GramFactor(v *mat.SymDense) (*mat.Dense, error) {
	if v == nil || v.IsEmpty() {
		return nil, inputerr.Errorf("lrm", "empty Gram matrix")
	}
	n := v.SymmetricDim()
	f, k, err := psd.Principal(symdense.ToGeneral(v))
	if err != nil {
		return nil, fmt.Errorf("lrm: Gram matrix: %w", err)
	}
	if k == 0 {
		return nil, inputerr.Errorf("lrm", "the Gram matrix has rank 0: no query to answer")
	}
	return mat.NewDense(k, n, f.Data[:k*n]), nil
}

// projectRows projects every row of Lt (a column of L) onto the ball.
func projectRows(lt *mat.Dense, ball ball) {
	n, r := lt.Dims()
	idx := make([]int, r)
	for j := 0; j < n; j++ {
		if ball == l1 {
			projectL1(lt.RawRowView(j), idx)
		} else {
			ProjectL2(lt.RawRowView(j))
		}
	}
}

// symEig returns the eigenvalues of V in descending order and the matching
// orthonormal eigenvectors as the columns of an n×n matrix, through
// package blas (LAPACK divide and conquer with OpenBLAS, gonum's Dsyev in pure-Go
// builds).
func symEig(v *mat.SymDense) ([]float64, *mat.Dense, error) {
	n := v.SymmetricDim()
	a := blas.NewSquare(n)
	raw := v.RawSymmetric()
	for i := 0; i < n; i++ {
		copy(a.Data[i*n+i:(i+1)*n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
	}
	z := blas.NewSquare(n)
	vals := make([]float64, n)
	if !blas.SymEigVectors(a, z, vals) {
		return nil, nil, errors.New("lrm: eigendecomposition of WᵀW did not converge")
	}
	// Reverse to descending order.
	out := make([]float64, n)
	vecs := mat.NewDense(n, n, nil)
	for j := 0; j < n; j++ {
		src := n - 1 - j
		out[j] = vals[src]
		for i := 0; i < n; i++ {
			vecs.Set(i, j, z.Data[i*n+src])
		}
	}
	return out, vecs, nil
}
