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
	// projected-gradient step moves no cell by more than Tol (the
	// fixed-point residual of the optimality condition). 0 selects 1e-3.
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
// (O'Donoghue & Candès 2015). The gradient Σ_k w_k²A_kᵀA_k x − b, with
// b = Σ_k w_k A_kᵀy_k formed once, costs one product per part with the
// Kronecker Gram ⊗ᵢFᵢᵀFᵢ (square per-attribute factors) — half the work
// of a product with A_k and one with its transpose, and nothing denser
// than the plan is formed — and one projection onto the scaled simplex.
// The step is 1/L with L the gradient's Lipschitz constant along the
// feasible directions: the smaller of Σ_k w_k²L_k (L_k by lipschitz, an
// upper bound) and 1.05× the power iteration's estimate (powerLipschitz;
// on the Adult kron plan 4.8× below the bound, which the step gains). It
// starts
// from the Euclidean projection of start onto the feasible set. Progress,
// when set, gets one event per progressEvery iterations.
func (h *histogramLS) nnls(ctx context.Context, start []float64, opt NNLSOptions) (*nnlsResult, error) {
	if opt.Tol == 0 {
		opt.Tol = 1e-3
	}
	if opt.MaxIter == 0 {
		opt.MaxIter = 3000
	}
	t0 := time.Now()
	n := len(start)
	lip := 0.0
	g := newGramGradient(h)
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
	target := math.Max(h.total, 0)
	work := make([]float64, n)
	x := make([]float64, n)
	v := make([]float64, n)
	xn := make([]float64, n)
	// v and xn are free until the first step: the power iteration's.
	if est, err := g.powerLipschitz(ctx, v, xn); err != nil {
		return nil, err
	} else if est > 0 && est < lip {
		lip = est
	}
	projectSimplex(x, start, target, work)
	z := append([]float64(nil), x...)
	res := &nnlsResult{}
	t := 1.0
	inv := 1 / lip
	tau := math.Inf(-1) // the last projection's threshold (its warm start)
	for it := 1; it <= opt.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tables: non-negative estimate interrupted after %d iterations: %w", it-1, err)
		}
		if err := g.step(z, v, inv); err != nil {
			return nil, err
		}
		// The projection max(v − τ, 0) and the step's measures in one
		// pass (target 0: the projection is 0 and τ is NaN).
		step, dir := 0.0, 0.0
		if target > 0 {
			tau = thresholdFrom(v, target, work, tau)
		} else {
			tau = math.NaN()
		}
		for i, vi := range v[:n] {
			a := 0.0
			if e := vi - tau; e > 0 {
				a = e
			}
			xn[i] = a
			d := a - z[i]
			if d > step {
				step = d
			} else if -d > step {
				step = -d
			}
			dir -= d * (a - x[i])
		}
		res.iterations, res.step = it, step
		if opt.Progress.Enabled() && it%progressEvery == 0 {
			opt.Progress(nnlsEvent(res, opt.Tol, t0, false))
		}
		if step <= opt.Tol {
			res.converged = true
			x, xn = xn, x
			break
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		beta := (t - 1) / tn
		if dir > 0 { // the momentum points uphill: restart it
			tn, beta = 1, 0
		}
		for i, a := range xn {
			z[i] = a + beta*(a-x[i])
		}
		x, xn, t = xn, x, tn
	}
	res.x = x
	if opt.Progress.Enabled() {
		opt.Progress(nnlsEvent(res, opt.Tol, t0, true))
	}
	return res, nil
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
	g     []float64 // the gradient's storage
	buf   []float64 // the Gram products' scratch
	out   []float64 // and their result
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
	gg.g = make([]float64, len(gg.b))
	gg.buf = make([]float64, len(gg.b))
	gg.out = make([]float64, len(gg.b))
	return nil
}

// at returns the gradient at x (valid until the next call).
func (gg *gramGradient) at(x []float64) ([]float64, error) {
	for i := range gg.g {
		gg.g[i] = -gg.b[i]
	}
	for k := range gg.grams {
		r, err := gg.gram(k, x)
		if err != nil {
			return nil, err
		}
		w2 := gg.h.w[k] * gg.h.w[k]
		for i, v := range r {
			gg.g[i] += w2 * v
		}
	}
	return gg.g, nil
}

// step sets v = x − inv·(gradient at x), in one pass over the vectors for
// a plan of one part.
func (gg *gramGradient) step(x, v []float64, inv float64) error {
	if len(gg.grams) != 1 {
		g, err := gg.at(x)
		if err != nil {
			return err
		}
		for i, gi := range g {
			v[i] = x[i] - gi*inv
		}
		return nil
	}
	r, err := gg.gram(0, x)
	if err != nil {
		return err
	}
	w2 := gg.h.w[0] * gg.h.w[0]
	b := gg.b[:len(r)]
	x = x[:len(r)]
	v = v[:len(r)]
	for i, ri := range r {
		v[i] = x[i] - (w2*ri-b[i])*inv
	}
	return nil
}

// gram returns (A_kᵀA_k)x in scratch storage (valid until the next call).
func (gg *gramGradient) gram(k int, x []float64) ([]float64, error) {
	gg.grams[k].apply(x, gg.out, gg.buf)
	return gg.out, nil
}

// gramProduct is the Kronecker Gram ⊗ᵢFᵢᵀFᵢ of a strategy, applied with
// caller-owned buffers: the estimator's thousand products allocate
// nothing.
type gramProduct struct {
	g []blas.General // dᵢ×dᵢ, symmetric
	n int
}

func newGramProduct(a *kron.Product) *gramProduct {
	gp := &gramProduct{n: 1}
	for i := 0; i < a.Len(); i++ {
		f := a.Factor(i).RawMatrix() // mᵢ×dᵢ
		d := f.Cols
		g := blas.NewGeneral(d, d)
		blas.Gemm(gblas.Trans, gblas.NoTrans, 1, f, f, 0, g)
		gp.g = append(gp.g, g)
		gp.n *= d
	}
	return gp
}

// apply sets out = (⊗ᵢGᵢ)x, with tmp as scratch (both of length n; x is
// not modified). It uses the rotated order, one GEMM per attribute: with
// the current tensor X viewed as dᵢ × R (attribute i slowest), Z = XᵀGᵢ
// (Gᵢ symmetric) is R × dᵢ — attribute i fastest — and after every
// attribute the order is the domain's again.
func (gp *gramProduct) apply(x, out, tmp []float64) {
	k := len(gp.g)
	cur := x
	for i, g := range gp.g {
		// Land the last product in out: alternate so that it does.
		dst := out
		if (k-1-i)%2 == 1 {
			dst = tmp
		}
		d := g.Rows
		r := gp.n / d
		blas.Gemm(gblas.Trans, gblas.NoTrans, 1, blas.General{Rows: d, Cols: r, Stride: r, Data: cur[:gp.n]}, g,
			0, blas.General{Rows: r, Cols: d, Stride: d, Data: dst[:gp.n]})
		cur = dst
	}
}

// powerLipschitz estimates the largest eigenvalue of Σ_k w_k²A_kᵀA_k on
// the feasible directions 1⊥ by power iteration from a fixed generic start
// (at most 60 Gram products; it stops when the Rayleigh quotient changes
// by less than 1e-5 relative), and returns it with a 5% margin: the
// Rayleigh quotient approaches λ_max from below, and FISTA needs L ≥
// λ_max. It returns 0 when the estimate is not usable. x and y (length n)
// are its scratch.
func (gg *gramGradient) powerLipschitz(ctx context.Context, x, y []float64) (float64, error) {
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
		clear(y)
		for k := range gg.grams {
			r, err := gg.gram(k, x)
			if err != nil {
				return 0, err
			}
			w2 := gg.h.w[k] * gg.h.w[k]
			for i, v := range r {
				y[i] += w2 * v
			}
		}
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

// gradient sets g = Σ_k w_k A_kᵀ(w_k A_k x − y_k), the gradient by the
// strategy itself (the reference the Gram form is tested against).
func (h *histogramLS) gradient(at []*kron.Product, x, g []float64) error {
	clear(g)
	for k, a := range h.a {
		r, err := a.MulVec(x)
		if err != nil {
			return err
		}
		for i := range r {
			r[i] = h.w[k]*r[i] - h.y[k][i]
		}
		gk, err := at[k].MulVecOverwrite(r)
		if err != nil {
			return err
		}
		for i := range g {
			g[i] += h.w[k] * gk[i]
		}
	}
	return nil
}
