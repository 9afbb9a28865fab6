package tables

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/rank"
	"github.com/dpsolve/dpsolve/kron"
)

// qrMinCols is the factor width from which a well-conditioned factor's
// pseudo-inverse comes from its QR factorization instead of its SVD
// (kron.Product.PseudoInverse): narrower factors keep the SVD, whose cost
// does not matter there.
var qrMinCols = 256

// qrMaxCond bounds the condition number estimate of the factors inverted
// through QR (QR.Cond: LAPACK's estimate of R's 1-norm condition number
// κ₁, rarely low by more than a small factor; κ₂ ≤ n·κ₁). The SVD path
// (internal/pinv) keeps every singular value above rank.Cutoff(max(m, n),
// σ₁) = max(m, n)·ε·σ₁. With the estimate at most qrMaxCond and also
// estimate·n·m·ε ≤ 10⁻³ (qrPseudoInverse), σ_min ≥ σ₁/(n·κ₁) is at
// least a thousand times that cutoff for an exact estimate, and ten times
// for one 100 times low, so both paths keep all n values and compute the same A⁺ = R⁻¹Qᵀ, the QR one
// with error about κ·ε. Anything else takes the SVD.
const qrMaxCond = 1e6

// pseudoInverseOf returns ⊗Aᵢ⁺ as kron.Product.PseudoInverse does, with
// each wide, well-conditioned factor of full column rank inverted through
// its QR factorization: a 2048-value dense strategy's SVD took minutes.
func pseudoInverseOf(a *kron.Product) (*kron.Product, error) {
	inv := make([]mat.Matrix, a.Len())
	fast := false
	for i := range inv {
		f := a.Factor(i)
		if p, ok := qrPseudoInverse(f); ok {
			inv[i], fast = p, true
			continue
		}
		one, err := kron.New(f)
		if err != nil {
			return nil, err
		}
		p, err := one.PseudoInverse()
		if err != nil {
			return nil, err
		}
		inv[i] = p.Factor(0)
	}
	if !fast {
		return a.PseudoInverse()
	}
	return kron.New(inv...)
}

// qrPseudoInverse returns f⁺ = R⁻¹Qᵀ from f = QR when f (m×n) is at least
// qrMinCols wide, at most 4n tall (Qᵀ is applied to the m×m identity), and
// of full column rank with a condition number estimate at most qrMaxCond;
// ok is false otherwise.
func qrPseudoInverse(f *mat.Dense) (*mat.Dense, bool) {
	m, n := f.Dims()
	if n < qrMinCols || m < n || m > 4*n {
		return nil, false
	}
	for _, v := range f.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}
	}
	var qr mat.QR
	qr.Factorize(f)
	c := qr.Cond()
	if !(c <= qrMaxCond) || c*float64(n)*float64(m)*rank.Eps > 1e-3 {
		return nil, false
	}
	var out mat.Dense
	id := mat.NewDiagDense(m, nil)
	for i := 0; i < m; i++ {
		id.SetDiag(i, 1)
	}
	if err := qr.SolveTo(&out, false, id); err != nil {
		return nil, false
	}
	return &out, true
}
