package tables

import (
	"context"
	"fmt"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/progress"
)

// histogramLS is a histogram strategy's measurement and its least-squares
// reconstruction: per part the measured product, its weight, the noisy
// measurements y_k = w_k·A_k x + z_k and x̂_k = A_k⁺y_k/w_k.
type histogramLS struct {
	a    []*kron.Product
	w    []float64
	y    [][]float64
	xhat [][]float64
	// total is the least-squares estimate of the number of records (the
	// inverse-variance combination of the parts' Σx̂_k, each unbiased and
	// independent of the others) and totalStd its standard deviation.
	total, totalStd float64
	// best is the part with the most precise total (the estimator's start).
	best int
}

// lsTotal combines the parts' least-squares totals. Part k's total 1ᵀx̂_k =
// 1ᵀA_k⁺y_k/w_k has variance v·‖(A_k⁺)ᵀ1‖²/w_k² (v the per-measurement
// noise variance), which for a Kronecker product is the product over the
// factors of ‖(Fᵢ⁺)ᵀ1‖².
func (h *histogramLS) lsTotal(pinvs []*kron.Product, variance float64) {
	num, prec, bestVar := 0.0, 0.0, 0.0
	for k, p := range pinvs {
		g := 1.0
		for i := 0; i < p.Len(); i++ {
			f := p.Factor(i) // dᵢ×mᵢ
			r, c := f.Dims()
			s2 := 0.0
			for j := 0; j < c; j++ {
				s := 0.0
				for q := 0; q < r; q++ {
					s += f.At(q, j)
				}
				s2 += s * s
			}
			g *= s2
		}
		vk := variance * g / (h.w[k] * h.w[k])
		t := 0.0
		for _, x := range h.xhat[k] {
			t += x
		}
		num += t / vk
		prec += 1 / vk
		if k == 0 || vk < bestVar {
			h.best, bestVar = k, vk
		}
	}
	if !(prec > 0) || math.IsInf(prec, 0) || math.IsNaN(num) {
		// A part whose total has no noise or no finite variance: use the
		// first part's total, with no stddev to report.
		h.total, h.totalStd, h.best = 0, 0, 0
		for _, x := range h.xhat[0] {
			h.total += x
		}
		return
	}
	h.total, h.totalStd = num/prec, math.Sqrt(1/prec)
}

// NNLSOptions configures the non-negative estimator of histogram plans.
type NNLSOptions struct {
	// Tol is the stopping tolerance in counts: the iterations stop when a
	// projected-gradient step, scaled to the step 1/L, moves no cell by
	// more than Tol (the fixed-point residual of the optimality
	// condition; see nnls). 0 selects 1e-3.
	Tol float64
	// MaxIter caps the iterations; 0 selects 3000.
	MaxIter int
	// Progress, when non-nil, receives an event with Stage "nonnegative"
	// every 100 iterations and at the end (Step the iteration, Note the
	// largest cell change against Tol).
	Progress progress.Func
}

// nnlsResult is the estimator's state at the end.
type nnlsResult struct {
	x          []float64
	iterations int
	converged  bool
	step       float64 // the last step's largest cell change
}

// spectralNormSq returns ‖A‖₂² = Πᵢ σ_max(Fᵢ)² of a Kronecker product.
func spectralNormSq(a *kron.Product) (float64, error) {
	out := 1.0
	for i := 0; i < a.Len(); i++ {
		f := a.Factor(i)
		if r, c := f.Dims(); r == 1 || c == 1 {
			// A one-row or one-column factor (a "total" block) has one
			// singular value, its Euclidean norm. It is computed directly:
			// LAPACK's dgesvd with jobu = jobvt = 'N' on a vector panics in
			// the cgo backend ("insufficient declared workspace length").
			var sq float64
			for i := 0; i < r; i++ {
				for j := 0; j < c; j++ {
					v := f.At(i, j)
					sq += v * v
				}
			}
			out *= sq
			continue
		}
		var svd mat.SVD
		if !svd.Factorize(f, mat.SVDNone) {
			return 0, fmt.Errorf("tables: the SVD of the strategy's factor %d did not converge", i+1)
		}
		s := svd.Values(nil)
		out *= s[0] * s[0]
	}
	return out, nil
}

// lipschitz returns a Lipschitz constant of the gradient of ½‖A x − y‖²
// along the feasible directions (Σd = 0): the largest eigenvalue of
// AᵀA = ⊗Gᵢ (Gᵢ = FᵢᵀFᵢ) on 1⊥. When every Gᵢ has the constant vector
// as an eigenvector (eigenvalue μᵢ; νᵢ its largest eigenvalue on 1⊥), the
// eigenvectors of ⊗Gᵢ are products of those, and 1⊥ excludes exactly the
// product of constants: the bound is max over non-empty S of
// Π_{i∈S}νᵢ·Π_{i∉S}μᵢ. For [I; 1ᵀ]/√2 factors it is a third of ‖A‖₂² or
// less (the step grows accordingly). Otherwise it is ‖A‖₂².
func lipschitz(a *kron.Product) (float64, error) {
	full, err := spectralNormSq(a)
	if err != nil {
		return 0, err
	}
	mus, nus := make([]float64, a.Len()), make([]float64, a.Len())
	for i := 0; i < a.Len(); i++ {
		mu, nu, ok := constantEigen(a.Factor(i))
		if !ok {
			return full, nil
		}
		mus[i], nus[i] = mu, nu
	}
	// Choose S: every factor where ν ≥ μ, and if none, the one with the
	// largest ν/μ.
	prod, best, any := 1.0, -1, false
	for i := range mus {
		if nus[i] >= mus[i] {
			prod *= nus[i]
			any = true
		} else {
			prod *= mus[i]
			if best < 0 || nus[i]/mus[i] > nus[best]/mus[best] {
				best = i
			}
		}
	}
	if !any {
		prod *= nus[best] / mus[best]
	}
	return math.Min(prod, full), nil
}

// constantEigen reports whether G = FᵀF has the constant vector as an
// eigenvector (to 1e-12 relative), with its eigenvalue μ and the largest
// eigenvalue ν of G on 1⊥ (0 for a one-column factor).
func constantEigen(f *mat.Dense) (mu, nu float64, ok bool) {
	_, d := f.Dims()
	var g mat.SymDense
	g.SymOuterK(1, f.T())
	g1 := make([]float64, d)
	scale := 0.0
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			g1[i] += g.At(i, j)
			scale = math.Max(scale, math.Abs(g.At(i, j)))
		}
	}
	mu = g1[0]
	for _, v := range g1 {
		if math.Abs(v-mu) > 1e-12*float64(d)*scale {
			return 0, 0, false
		}
	}
	if d == 1 {
		return mu, 0, true
	}
	// P G P with P = I − J/d: its spectrum is ν's on 1⊥ and 0 on 1.
	p := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			p.SetSym(i, j, g.At(i, j)-mu/float64(d))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(p, false) {
		return 0, 0, false
	}
	vals := eig.Values(nil)
	return mu, math.Max(vals[len(vals)-1], 0), true
}

// nnls minimizes the least-squares objective of the measurements over the
// non-negative histograms with the least-squares total,
//
//	min ½ Σ_k ‖w_k A_k x − y_k‖²  subject to  x ≥ 0, Σx = N̂,
//
// (the maximum-likelihood histogram of Gaussian measurements under those
// constraints) by FISTA (Beck & Teboulle 2009) with gradient restarts
// (O'Donoghue & Candès 2015) in a diagonal metric that follows the
// support. The gradient Σ_k w_k²A_kᵀA_k x − b, with b = Σ_k w_k A_kᵀy_k
// formed once, costs one product per part with the Kronecker Gram
// ⊗ᵢFᵢᵀFᵢ (square per-attribute factors; nothing denser than the plan is
// formed). Each iteration forms the gradient at the new iterate only: the
// one at the extrapolated point is the same combination of the last two
// (the gradient is affine).
//
// L is the gradient's Lipschitz constant along the feasible directions:
// the smaller of Σ_k w_k²L_k (L_k by lipschitz, an upper bound) and 1.05×
// the power iteration's estimate (powerLipschitz). A step of 1/L is safe
// but slow: the curvature on the cells that stay positive is far below L
// (on the Adult kron plan, on the optimum's support, 243 against 5,180), and the histogram is sparse.
// So cells positive at the current iterate step by s/L, with s from 1 up
// to nnlsScaleMax, the others by 1/L, and the projection onto the simplex
// is the one in that metric (twoStepThreshold). The step is accepted when
// the quadratic upper bound of that metric holds for it, dᵀ(G d) ≤
// Σ dᵢ²/stepᵢ (G the Gram, d the move: exact for a quadratic, and formed
// from the two gradients, without the objective's cancellation); else s
// is halved and the step redone (s = 1 is always accepted: the plain FISTA
// step). s grows by nnlsScaleGrowth per iteration up to nnlsScaleMax. On
// the Adult kron plan this stops after 415 iterations instead of the plain
// step's 961, at an objective 165 lower (a run to Tol 1e-8 is 25 below it).
//
// The stop is the fixed-point residual at the step 1/L: the largest
// |x⁺ᵢ − zᵢ|/(stepᵢ·L) — a cell's move scaled to the step 1/L, exactly
// the largest cell change of the plain FISTA step where s = 1 — at most
// Tol. It starts from the Euclidean projection of start onto the feasible
// set. Progress, when set, gets one event per progressEvery iterations.
func (h *histogramLS) nnls(ctx context.Context, start []float64, opt NNLSOptions) (*nnlsResult, error) {
	if opt.Tol == 0 {
		opt.Tol = 1e-3
	}
	if opt.MaxIter == 0 {
		opt.MaxIter = 3000
	}
	t0 := time.Now()
	n := len(start)
	res := &nnlsResult{}
	target := math.Max(h.total, 0)
	if !(target > 0) {
		// One feasible histogram: 0.
		res.x, res.iterations, res.converged = make([]float64, n), 1, true
		if opt.Progress.Enabled() {
			opt.Progress(nnlsEvent(res, opt.Tol, t0, true))
		}
		return res, nil
	}
	g := newGramGradient(h)
	lip := 0.0
	for k, a := range h.a {
		s, err := lipschitz(a)
		if err != nil {
			return nil, err
		}
		lip += h.w[k] * h.w[k] * s
	}
	if err := g.init(); err != nil {
		return nil, err
	}
	s := newNNLSState(n)
	// xn and gn are free until the first step: the power iteration's.
	if est, err := g.powerLipschitz(ctx, s.xn, s.gn, s.w); err != nil {
		return nil, err
	} else if est > 0 && est < lip {
		lip = est
	}
	projectSimplex(s.x, start, target, s.w)
	copy(s.z, s.x)
	if err := g.gradInto(s.x, s.gx, s.w); err != nil {
		return nil, err
	}
	copy(s.gz, s.gx)
	t, scale := 1.0, nnlsScaleMax
	// The first candidate from the start; later ones in extrapolate's pass.
	tau, m := s.project(scale/lip, 1/lip, target, math.Inf(-1))
	for it := 1; it <= opt.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tables: non-negative estimate interrupted after %d iterations: %w", it-1, err)
		}
		for {
			if err := g.gradInto(s.xn, s.gn, s.w); err != nil {
				return nil, err
			}
			if s.boundHolds(m) || scale == 1 {
				break
			}
			scale = math.Max(1, scale/2)
			tau, m = s.project(scale/lip, 1/lip, target, tau)
		}
		crit := m.crit / lip
		res.iterations, res.step = it, crit
		if opt.Progress.Enabled() && it%progressEvery == 0 {
			opt.Progress(nnlsEvent(res, opt.Tol, t0, false))
		}
		if crit <= opt.Tol {
			res.converged = true
			s.x, s.xn = s.xn, s.x
			break
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		beta := (t - 1) / tn
		if m.dir > 0 { // the momentum points uphill: restart it
			tn, beta = 1, 0
		}
		t = tn
		scale = math.Min(nnlsScaleMax, scale*nnlsScaleGrowth)
		tau, m = s.extrapolate(beta, scale/lip, 1/lip, target, tau)
	}
	res.x = s.x
	if opt.Progress.Enabled() {
		opt.Progress(nnlsEvent(res, opt.Tol, t0, true))
	}
	return res, nil
}

// nnlsScaleMax bounds the step of the positive cells, in units of 1/L, and
// nnlsScaleGrowth is its growth per accepted iteration. On the Adult kron
// plan (examples/adult/cumulative.json, ρ = 0.5, seed 1) 8, 16, 32 and 64
// stop after 489, 415, 434 and 457 iterations, 8 at a higher objective
// than the others; the plain step (1 throughout) took 961.
const (
	nnlsScaleMax    = 16.0
	nnlsScaleGrowth = 1.1
)

// nnlsState is nnls's vectors: the iterate x and its gradient gx, the
// extrapolated point z and its gradient gz, the candidate xn and its
// gradient gn, and the projection's scratch w.
type nnlsState struct {
	x, gx, z, gz, xn, gn, w []float64
}

func newNNLSState(n int) *nnlsState {
	buf := make([]float64, 7*n)
	next := func() []float64 {
		v := buf[:n:n]
		buf = buf[n:]
		return v
	}
	return &nnlsState{x: next(), gx: next(), z: next(), gz: next(), xn: next(), gn: next(), w: next()}
}

// stepMeasures are a candidate's measures that need no gradient at it:
// the largest |xnᵢ − zᵢ|/dᵢ (nnls's stop is that over L), the restart test
// (xn − z)·(x − xn) (positive: the momentum points uphill), and the
// metric's bound Σ (xnᵢ − zᵢ)²/dᵢ.
type stepMeasures struct {
	crit, dir, bound float64
}

// project sets xn to the projection of z − d∘gz onto the simplex {x ≥ 0,
// Σx = total} in the metric Σ (xᵢ − vᵢ)²/dᵢ, with dᵢ = pos where x is
// positive and other elsewhere, starting the threshold from hint; it
// returns the threshold and the step's measures. xn holds u = z/d − gz
// first.
func (s *nnlsState) project(pos, other, total, hint float64) (float64, stepMeasures) {
	ip, io := 1/pos, 1/other
	for i, xi := range s.x {
		id := io
		if xi > 0 {
			id = ip
		}
		s.xn[i] = s.z[i]*id - s.gz[i]
	}
	tau := twoStepThreshold(s.xn, s.x, pos, other, total, s.w, hint)
	return tau, s.clip(tau, pos, other)
}

// clip sets xn from u (in xn) and the threshold, xnᵢ = dᵢ·max(uᵢ − τ, 0),
// and returns the step's measures.
func (s *nnlsState) clip(tau, pos, other float64) stepMeasures {
	var m stepMeasures
	ip, io := 1/pos, 1/other
	x, z := s.x[:len(s.xn)], s.z[:len(s.xn)]
	for i, ui := range s.xn {
		xi := x[i]
		di, id := other, io
		if xi > 0 {
			di, id = pos, ip
		}
		a := 0.0
		if e := ui - tau; e > 0 {
			a = e * di
		}
		s.xn[i] = a
		d := a - z[i]
		if c := math.Abs(d) * id; c > m.crit {
			m.crit = c
		}
		m.dir -= d * (a - xi)
		m.bound += d * d * id
	}
	return m
}

// boundHolds reports whether the metric's quadratic bound holds for the
// step z → xn: (xn − z)·(gn − gz) = (xn − z)ᵀG(xn − z) ≤ m.bound, with a
// relative slack of 1e-9 for the rounding of the gradients.
func (s *nnlsState) boundHolds(m stepMeasures) bool {
	curv, mag := 0.0, 0.0
	z, gn, gz := s.z[:len(s.xn)], s.gn[:len(s.xn)], s.gz[:len(s.xn)]
	for i, a := range s.xn {
		e := (a - z[i]) * (gn[i] - gz[i])
		curv += e
		mag += math.Abs(e)
	}
	return curv <= m.bound+1e-9*mag
}

// extrapolate accepts xn and forms the next candidate in one pass: z = xn
// + β(xn − x), its gradient gz = (1 + β)gn − β·gx (the gradient is
// affine), u = z/d − gz (d by the accepted iterate) into x's old storage,
// which becomes xn, and the scan of u above hint; then the threshold and
// clip. It returns project's results.
func (s *nnlsState) extrapolate(beta, pos, other, total, hint float64) (float64, stepMeasures) {
	ip, io := 1/pos, 1/other
	n := len(s.xn)
	x, gx, gn, z, gz, w := s.x[:n], s.gx[:n], s.gn[:n], s.z[:n], s.gz[:n], s.w[:n]
	c := twoStepCandidates{back: n}
	for i, a := range s.xn {
		zi := a + beta*(a-x[i])
		gzi := gn[i] + beta*(gn[i]-gx[i])
		z[i], gz[i] = zi, gzi
		if a > 0 {
			u := zi*ip - gzi
			x[i] = u
			if u > hint {
				w[c.front] = u
				c.sp += u
				c.front++
			}
		} else {
			u := zi*io - gzi
			x[i] = u
			if u > hint {
				c.back--
				w[c.back] = u
				c.so += u
			}
		}
	}
	s.x, s.xn = s.xn, s.x
	s.gx, s.gn = s.gn, s.gx
	tau := twoStepFrom(s.xn, s.x, pos, other, total, s.w, hint, c)
	return tau, s.clip(tau, pos, other)
}

// nnlsEvent is the estimator's progress event after res.iterations.
func nnlsEvent(res *nnlsResult, tol float64, t0 time.Time, done bool) progress.Event {
	note := fmt.Sprintf("largest cell change %.3g (stops at %g)", res.step, tol)
	if done && !res.converged {
		note += ", iteration limit"
	}
	return progress.Event{Stage: "nonnegative", Step: res.iterations, Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN(),
		Seconds: time.Since(t0).Seconds(), Done: done, Note: note}
}

// progressEvery is the number of estimator iterations between progress
// events.
const progressEvery = 100

// gramGradient evaluates the gradient Σ_k w_k²(A_kᵀA_k)x − b of nnls's
// objective with one Kronecker Gram product per part.
type gramGradient struct {
	h     *histogramLS
	grams []*gramProduct
	b     []float64 // Σ_k w_k A_kᵀ y_k
	buf   []float64 // the Gram products' scratch
}

func newGramGradient(h *histogramLS) *gramGradient {
	return &gramGradient{h: h}
}

// init forms the Grams and b.
func (gg *gramGradient) init() error {
	h := gg.h
	for k, a := range h.a {
		gg.grams = append(gg.grams, newGramProduct(a))
		atk, err := a.Transpose().MulVec(h.y[k])
		if err != nil {
			return err
		}
		if gg.b == nil {
			gg.b = make([]float64, len(atk))
		}
		for i, v := range atk {
			gg.b[i] += h.w[k] * v
		}
	}
	gg.buf = make([]float64, len(gg.b))
	return nil
}

// gradInto sets dst to the gradient at x; scratch (len(x)) is used by
// plans of more than one part.
func (gg *gramGradient) gradInto(x, dst, scratch []float64) error {
	if len(gg.grams) == 1 {
		gp := gg.grams[0]
		gp.apply(x, dst, gg.buf)
		w2 := gg.h.w[0] * gg.h.w[0]
		dst = dst[:len(gg.b)]
		for i, b := range gg.b {
			dst[i] = w2*dst[i] - b
		}
		return nil
	}
	gg.gramSum(x, dst, scratch)
	for i, b := range gg.b {
		dst[i] -= b
	}
	return nil
}

// gramSum sets dst = Σ_k w_k²(A_kᵀA_k)x; scratch (len(x)) is used by plans
// of more than one part.
func (gg *gramGradient) gramSum(x, dst, scratch []float64) {
	for k, gp := range gg.grams {
		w2 := gg.h.w[k] * gg.h.w[k]
		if k == 0 {
			gp.apply(x, dst, gg.buf)
			for i := range dst[:gp.n] {
				dst[i] *= w2
			}
			continue
		}
		gp.apply(x, scratch, gg.buf)
		for i, v := range scratch[:gp.n] {
			dst[i] += w2 * v
		}
	}
}

// gramProduct is the Kronecker Gram ⊗ᵢFᵢᵀFᵢ of a strategy, applied with
// caller-owned buffers: the estimator's thousand products allocate
// nothing.
type gramProduct struct {
	g []blas.General // the stages' Grams, symmetric (see newGramProduct)
	n int
	// cols lists the first stage's non-zero columns, and mark flags them
	// (scratch, n/d₀ each).
	cols []int
	mark []bool
}

func newGramProduct(a *kron.Product) *gramProduct {
	gp := &gramProduct{n: 1}
	for i := 0; i < a.Len(); i++ {
		f := a.Factor(i).RawMatrix() // mᵢ×dᵢ
		d := f.Cols
		g := blas.NewGeneral(d, d)
		blas.Gemm(gblas.Trans, gblas.NoTrans, 1, f, f, 0, g)
		gp.n *= d
		// Neighbouring small factors are one stage, their Kronecker
		// product (attribute i slower than i+1, as in the domain's
		// order): a stage is a pass over the vector, and for small d its
		// arithmetic (d per cell) costs less than the pass.
		if k := len(gp.g) - 1; k >= 0 && gp.g[k].Rows*d <= 2*(gp.g[k].Rows+d) {
			gp.g[k] = kronGeneral(gp.g[k], g)
			continue
		}
		gp.g = append(gp.g, g)
	}
	if len(gp.g) > 0 {
		gp.cols = make([]int, 0, gp.n/gp.g[0].Rows)
		gp.mark = make([]bool, gp.n/gp.g[0].Rows)
	}
	return gp
}

// kronGeneral returns the Kronecker product a ⊗ b of square matrices.
func kronGeneral(a, b blas.General) blas.General {
	da, db := a.Rows, b.Rows
	k := blas.NewGeneral(da*db, da*db)
	for i := 0; i < da; i++ {
		for j := 0; j < da; j++ {
			aij := a.Data[i*a.Stride+j]
			for p := 0; p < db; p++ {
				row := k.Data[(i*db+p)*k.Stride+j*db:]
				for q := 0; q < db; q++ {
					row[q] = aij * b.Data[p*b.Stride+q]
				}
			}
		}
	}
	return k
}

// apply sets out = (⊗ᵢGᵢ)x, with tmp as scratch (both of length n; x is
// not modified). It uses the rotated order, one GEMM per attribute: with
// the current tensor X viewed as dᵢ × R (attribute i slowest), Z = XᵀGᵢ
// (Gᵢ symmetric) is R × dᵢ — attribute i fastest — and after every
// attribute the order is the domain's again. The first stage skips the
// columns of X that are 0 (sparseFirst): the estimator's iterates are
// sparse histograms.
func (gp *gramProduct) apply(x, out, tmp []float64) {
	k := len(gp.g)
	cur := x
	for i, g := range gp.g {
		// Land the last product in out: alternate so that it does.
		dst, other := out, tmp
		if (k-1-i)%2 == 1 {
			dst, other = tmp, out
		}
		d := g.Rows
		r := gp.n / d
		if i > 0 || !gp.sparseFirst(cur, dst, other) {
			blas.Gemm(gblas.Trans, gblas.NoTrans, 1, blas.General{Rows: d, Cols: r, Stride: r, Data: cur[:gp.n]}, g,
				0, blas.General{Rows: r, Cols: d, Stride: d, Data: dst[:gp.n]})
		}
		cur = dst
	}
}

// sparseFirst does apply's first stage, dst = XᵀG₀ with X = x viewed as
// d₀ × R, on the columns of X that are not all 0 only, when they are at
// most 60% of R: it gathers them into scratch (d₀ × m), multiplies (m ×
// d₀ at the start of dst), and moves row j of that to row cols[j] of dst,
// from the last (cols[j] ≥ j, so no row is overwritten before it moves),
// zeroing the other rows. It reports whether it did the stage.
func (gp *gramProduct) sparseFirst(x, dst, scratch []float64) bool {
	g := gp.g[0]
	d := g.Rows
	r := gp.n / d
	mark := gp.mark[:r]
	clear(mark)
	for a := 0; a < gp.n; a += r {
		for c, v := range x[a : a+r] {
			if v != 0 {
				mark[c] = true
			}
		}
	}
	cols := gp.cols[:0]
	for c, nz := range mark {
		if nz {
			cols = append(cols, c)
		}
	}
	m := len(cols)
	if 5*m > 3*r {
		return false
	}
	if m > 0 {
		for a := 0; a < d; a++ {
			row, crow := x[a*r:(a+1)*r], scratch[a*m:(a+1)*m]
			for j, c := range cols {
				crow[j] = row[c]
			}
		}
		blas.Gemm(gblas.Trans, gblas.NoTrans, 1, blas.General{Rows: d, Cols: m, Stride: m, Data: scratch[:d*m]}, g,
			0, blas.General{Rows: m, Cols: d, Stride: d, Data: dst[:m*d]})
	}
	j := m - 1
	for c := r - 1; c >= 0; c-- {
		row := dst[c*d : (c+1)*d]
		if j >= 0 && cols[j] == c {
			if j != c {
				copy(row, dst[j*d:(j+1)*d])
			}
			j--
			continue
		}
		clear(row)
	}
	return true
}

// powerLipschitz estimates the largest eigenvalue of Σ_k w_k²A_kᵀA_k on
// the feasible directions 1⊥ by power iteration from a fixed generic start
// (at most 60 Gram products; it stops when the Rayleigh quotient changes
// by less than 1e-5 relative), and returns it with a 5% margin: the
// Rayleigh quotient approaches λ_max from below, and FISTA needs L ≥
// λ_max. It returns 0 when the estimate is not usable. x and y (length n)
// are its scratch, and scratch too for plans of more than one part.
func (gg *gramGradient) powerLipschitz(ctx context.Context, x, y, scratch []float64) (float64, error) {
	n := len(gg.b)
	if n < 2 {
		return 0, nil
	}
	x, y = x[:n], y[:n]
	for i := range x {
		x[i] = math.Sin(0.7*float64(i)+0.1) + 0.3*math.Cos(1.3*float64(i))
	}
	center := func(v []float64) {
		m := 0.0
		for _, a := range v {
			m += a
		}
		m /= float64(len(v))
		for i := range v {
			v[i] -= m
		}
	}
	lam := 0.0
	for it := 0; it < 60; it++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		center(x)
		nx := 0.0
		for _, a := range x {
			nx += a * a
		}
		if !(nx > 0) || math.IsInf(nx, 0) {
			return 0, nil
		}
		nx = 1 / math.Sqrt(nx)
		for i := range x {
			x[i] *= nx
		}
		gg.gramSum(x, y, scratch)
		center(y)
		next := 0.0
		for i, v := range y {
			next += v * x[i]
		}
		x, y = y, x
		if it >= 8 && math.Abs(next-lam) <= 1e-5*next {
			lam = next
			break
		}
		lam = next
	}
	if !(lam > 0) || math.IsInf(lam, 0) {
		return 0, nil
	}
	return 1.05 * lam, nil
}
