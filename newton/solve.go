package newton

import (
	"context"
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// Solve minimizes tr(V X⁻¹) subject to diag(X) = 1, X ≻ 0, for the Gram
// matrix V = WᵀW of a workload, and returns the optimized X, the strategy
// A = chol(X) and a certificate of optimality.
//
// V must be finite and positive semidefinite with a positive diagonal (every
// histogram cell appears in some query); invalid input yields an error
// wrapping ErrInput. A nil opt selects the defaults. Cancelling ctx stops the
// solve at the next iteration and returns the best X so far with status
// Cancelled and its certificate.
func Solve(ctx context.Context, V *mat.SymDense, opt *Options) (*Result, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Method == "" {
		o.Method = MethodNewton
	}
	if o.Tol == 0 {
		o.Tol = 1e-8
	}
	switch {
	case math.IsNaN(o.Tol) || o.Tol < 0:
		return nil, inputErrorf("tolerance must be positive, got %g", o.Tol)
	case o.MaxIter < 0:
		return nil, inputErrorf("iteration limit must be non-negative, got %d", o.MaxIter)
	case o.Regularization < 0 || math.IsNaN(o.Regularization) || math.IsInf(o.Regularization, 0):
		return nil, inputErrorf("regularization must be a non-negative number, got %g", o.Regularization)
	}
	if err := checkGram(V); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	switch o.Method {
	case MethodNewton:
		if o.MaxIter == 0 {
			o.MaxIter = 100
		}
		return solveNewton(ctx, V, o)
	case MethodYuan2016:
		if o.MaxIter == 0 {
			o.MaxIter = 30
		}
		return solveYuan2016(ctx, V, o)
	}
	return nil, inputErrorf("unknown method %q (want %q or %q)", o.Method, MethodNewton, MethodYuan2016)
}

// Certificate returns the objective tr(V X⁻¹) and the weak-duality lower
// bound g(y) ≤ min{tr(V X'⁻¹) : diag(X') = 1, X' ≻ 0} at y = diag(X⁻¹VX⁻¹),
// for any symmetric positive definite X with unit diagonal (to 1e-8). It is
// computed from scratch (Cholesky inverse and one values-only
// eigendecomposition), independently of the solver's internal coordinates,
// so it can check any strategy, including other programs' solutions.
func Certificate(V, X *mat.SymDense) (objective, bound float64, err error) {
	if err := checkGram(V); err != nil {
		return 0, 0, err
	}
	if X == nil || X.SymmetricDim() != V.SymmetricDim() {
		return 0, 0, inputErrorf("X must be %d×%d", V.SymmetricDim(), V.SymmetricDim())
	}
	n := V.SymmetricDim()
	for i := 0; i < n; i++ {
		if d := X.At(i, i); math.Abs(d-1) > 1e-8 || math.IsNaN(d) {
			return 0, 0, inputErrorf("X[%d,%d] = %.17g: X must have unit diagonal", i, i, d)
		}
	}
	xi := symToGeneral(X, 1)
	for _, v := range xi.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, inputErrorf("X has a non-finite entry")
		}
	}
	if !blas.Cholesky(xi) {
		return 0, 0, inputErrorf("X is not positive definite")
	}
	if !blas.CholInverse(xi) {
		return 0, 0, inputErrorf("X is singular")
	}
	v := symToGeneral(V, 1)
	xiv := blas.NewSquare(n)
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, xi, v, 0, xiv) // X⁻¹V
	y := make([]float64, n)
	for k := 0; k < n; k++ {
		objective += xiv.Data[k*n+k]
		// (X⁻¹VX⁻¹)ₖₖ = Σⱼ (X⁻¹V)ₖⱼ·(X⁻¹)ⱼₖ
		acc := 0.0
		for j := 0; j < n; j++ {
			acc += xiv.Data[k*n+j] * xi.Data[j*n+k]
		}
		y[k] = acc
	}
	c, ok := psdFactor(v)
	if ok {
		bound, ok = dualBound(c, y, xiv)
	}
	if !ok {
		return objective, 0, fmt.Errorf("newton: certificate eigendecomposition failed to converge")
	}
	return objective, bound, nil
}
