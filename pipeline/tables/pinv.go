package tables

import (
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/pinv"
	"github.com/dpsolve/dpsolve/kron"
)

// qrMinCols is the factor width from which a well-conditioned factor's
// pseudo-inverse comes from its QR factorization instead of its SVD
// (kron.Product.PseudoInverse): narrower factors keep the SVD, whose cost
// does not matter there.
var qrMinCols = 256

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

// qrPseudoInverse returns f⁺ through internal/pinv's QR path when f is at
// least qrMinCols wide (below that the SVD's cost does not matter); ok is
// false when it is narrower or pinv.QR declines it.
func qrPseudoInverse(f *mat.Dense) (*mat.Dense, bool) {
	if _, n := f.Dims(); n < qrMinCols {
		return nil, false
	}
	return pinv.QR(f)
}
