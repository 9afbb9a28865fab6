package kron

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// estimableTol is the relative residual ‖Wᵢ − WᵢAᵢ⁺Aᵢ‖_F ≤ tol·‖Wᵢ‖_F below
// which a factor's rows count as lying in Aᵢ's row space. Rounding in the
// SVD-based Aᵢ⁺ leaves residuals of order κ(Aᵢ)·ε ≈ 1e-13 for the
// well-conditioned strategies plans produce; 1e-8 is far above that and far
// below any genuine miss (which is O(1) relative).
const estimableTol = 1e-8

// FactorVariances returns, for a product workload W = ⊗Wᵢ and the
// pseudo-inverse A⁺ = ⊗Aᵢ⁺ of a product strategy, the per-factor diagonals
// diag(Wᵢ(AᵢᵀAᵢ)⁺Wᵢᵀ) — the squared row norms of WᵢAᵢ⁺ — whose Kronecker
// product (KronVec) is the per-query variance of W x̂ per unit noise
// variance. W's factors must have the same column counts as A's.
func FactorVariances(w, pinvA *Product) ([][]float64, error) {
	if err := sameDomain(w, pinvA, true); err != nil {
		return nil, err
	}
	out := make([][]float64, w.Len())
	for i := range w.factors {
		b := wTimesPinv(w, pinvA, i)
		r, c := b.Dims()
		v := make([]float64, r)
		for q := 0; q < r; q++ {
			row := b.RawRowView(q)
			for j := 0; j < c; j++ {
				v[q] += row[j] * row[j]
			}
		}
		out[i] = v
	}
	return out, nil
}

// wTimesPinv returns Wᵢ·Aᵢ⁺.
func wTimesPinv(w, pinvA *Product, i int) *mat.Dense {
	var b mat.Dense
	b.Mul(w.Factor(i), pinvA.Factor(i))
	return &b
}

// sameDomain checks that w's factors act on the same attribute sizes as the
// strategy (whose pseudo-inverse has them as rows when pinv).
func sameDomain(w, a *Product, pinv bool) error {
	if w.Len() != a.Len() {
		return errorf("the workload has %d factors but the strategy has %d", w.Len(), a.Len())
	}
	for i := range w.factors {
		d := a.factors[i].Cols
		if pinv {
			d = a.factors[i].Rows
		}
		if w.factors[i].Cols != d {
			return errorf("factor %d: the workload has %d columns but the strategy covers %d values", i+1, w.factors[i].Cols, d)
		}
	}
	return nil
}

// KronVec returns v₁ ⊗ … ⊗ v_k (the last vector varies fastest), e.g. the
// per-query variances from FactorVariances in the order of the workload's
// rows.
func KronVec(vs [][]float64) []float64 {
	out := []float64{1}
	for _, v := range vs {
		next := make([]float64, 0, len(out)*len(v))
		for _, a := range out {
			for _, b := range v {
				next = append(next, a*b)
			}
		}
		out = next
	}
	return out
}

// TotalVariance returns Σ of KronVec(vs) without forming it: Πᵢ Σⱼ vᵢⱼ,
// i.e. tr(W(AᵀA)⁺Wᵀ) per unit noise variance.
func TotalVariance(vs [][]float64) float64 {
	t := 1.0
	for _, v := range vs {
		s := 0.0
		for _, x := range v {
			s += x
		}
		t *= s
	}
	return t
}

// Estimable reports whether every query of W = ⊗Wᵢ is estimable from the
// strategy A = ⊗Aᵢ (given with its pseudo-inverse): whether each Wᵢ lies
// in the row space of Aᵢ, so W x̂ is unbiased for W x. It returns a
// bad-input error naming the first factor that fails.
func Estimable(w, a, pinvA *Product) error {
	if err := sameDomain(w, a, false); err != nil {
		return err
	}
	for i := range w.factors {
		wi := w.Factor(i)
		var proj mat.Dense
		proj.Mul(wTimesPinv(w, pinvA, i), a.Factor(i))
		proj.Sub(wi, &proj)
		if nw := mat.Norm(wi, 2); nw > 0 && mat.Norm(&proj, 2) > estimableTol*nw || math.IsNaN(mat.Norm(&proj, 2)) {
			return errorf("factor %d: the workload's queries are not in the strategy's row space, so they cannot be estimated without bias", i+1)
		}
	}
	return nil
}
