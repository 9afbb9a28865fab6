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
// (O'Donoghue & Candès 2015): each step costs one product with every A_k
// and one with its transpose — nothing denser than the plan is formed —
// and one projection onto the scaled simplex. The step is 1/L with L =
// Σ_k w_k²L_k, L_k the gradient's Lipschitz constant of part k along the
// feasible directions (lipschitz). It starts from the
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
		s, err := lipschitz(a)
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
