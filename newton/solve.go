package newton

import (
	"context"
	"errors"

	"gonum.org/v1/gonum/mat"
)

// Solve minimizes tr(V X⁻¹) subject to diag(X) = 1, X ≻ 0.
func Solve(ctx context.Context, V *mat.SymDense, opt *Options) (*Result, error) {
	return nil, errors.New("newton: not yet implemented")
}

// Certificate returns the objective tr(V X⁻¹) and the weak-duality lower bound
// g(y), y = diag(X⁻¹VX⁻¹), for a feasible X (diag(X) = 1, X ≻ 0).
func Certificate(V, X *mat.SymDense) (objective, bound float64, err error) {
	return 0, 0, errors.New("newton: not yet implemented")
}
