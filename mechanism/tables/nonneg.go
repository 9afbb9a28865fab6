package tables

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/kron"
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
		var svd mat.SVD
		if !svd.Factorize(a.Factor(i), mat.SVDNone) {
			return 0, fmt.Errorf("tables: the SVD of the strategy's factor %d did not converge", i+1)
		}
		s := svd.Values(nil)
		out *= s[0] * s[0]
	}
	return out, nil
}

// nnls minimizes the least-squares objective of the measurements over the
// non-negative histograms with the least-squares total,
//
//	min ½ Σ_k ‖w_k A_k x − y_k‖²  subject to  x ≥ 0, Σx = N̂,
//
// (the maximum-likelihood histogram of Gaussian measurements under those
// constraints) by FISTA (Beck & Teboulle 2009) with gradient restarts
// (O'Donoghue & Candès 2015): each step costs one product with every A_k
// and one with its transpose — nothing denser than the plan is formed —
// and one projection onto the scaled simplex. The step is 1/L with L =
// Σ_k w_k²‖A_k‖₂², the gradient's Lipschitz constant. It starts from the
// Euclidean projection of start onto the feasible set.
func (h *histogramLS) nnls(ctx context.Context, start []float64, opt NNLSOptions) (*nnlsResult, error) {
	if opt.Tol == 0 {
		opt.Tol = 1e-3
	}
	if opt.MaxIter == 0 {
		opt.MaxIter = 3000
	}
	n := len(start)
	lip := 0.0
	at := make([]*kron.Product, len(h.a))
	for k, a := range h.a {
		s, err := spectralNormSq(a)
		if err != nil {
			return nil, err
		}
		lip += h.w[k] * h.w[k] * s
		at[k] = a.Transpose()
	}
	target := math.Max(h.total, 0)
	work := make([]float64, n)
	x := make([]float64, n)
	projectSimplex(x, start, target, work)
	z := append([]float64(nil), x...)
	g := make([]float64, n)
	xn := make([]float64, n)
	res := &nnlsResult{}
	t := 1.0
	for it := 1; it <= opt.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tables: non-negative estimate interrupted after %d iterations: %w", it-1, err)
		}
		if err := h.gradient(at, z, g); err != nil {
			return nil, err
		}
		for i := range g {
			g[i] = z[i] - g[i]/lip
		}
		projectSimplex(xn, g, target, work)
		step, dir := 0.0, 0.0
		for i := range xn {
			step = math.Max(step, math.Abs(xn[i]-z[i]))
			dir += (z[i] - xn[i]) * (xn[i] - x[i])
		}
		res.iterations, res.step = it, step
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
		for i := range z {
			z[i] = xn[i] + beta*(xn[i]-x[i])
		}
		x, xn, t = xn, x, tn
	}
	res.x = x
	return res, nil
}

// gradient sets g = Σ_k w_k A_kᵀ(w_k A_k x − y_k).
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
