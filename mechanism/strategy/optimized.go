package strategy

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/newton"
)

// Optimized is the strategy that minimizes the Gaussian-noise error
// Δ₂(A)²·tr(V (AᵀA)⁻¹) for a workload Gram V: X solves
// min tr(V X⁻¹) s.t. diag X = 1, X ≻ 0 (package newton) and A = chol(X) is
// upper triangular with unit column norms, so Δ₂ = 1.
type Optimized struct {
	// A is the upper-triangular strategy with AᵀA = X.
	A *mat.TriDense
	// X is the strategy Gram, diag X = 1.
	X *mat.SymDense
	// Result is the solver's report (objective, certificate, iterations).
	Result *newton.Result
}

// Optimize runs newton.Solve on V and wraps the result. opt may be nil
// (newton's defaults: certified relative gap 1e-8). On cancellation it
// follows newton's rule: the best strategy so far (Result.Status Cancelled)
// and the context's error, both.
func Optimize(ctx context.Context, v *mat.SymDense, opt *newton.Options) (*Optimized, error) {
	if v == nil || v.IsEmpty() {
		return nil, inputerr.Errorf("strategy", "optimize: empty Gram matrix")
	}
	res, err := newton.Solve(ctx, v, opt)
	if err != nil && res == nil {
		return nil, fmt.Errorf("strategy: optimize: %w", err)
	}
	s, werr := NewOptimized(res)
	if werr != nil {
		return nil, werr
	}
	if err != nil {
		return s, fmt.Errorf("strategy: optimize: %w", err)
	}
	return s, nil
}

// NewOptimized wraps a newton result, checking that it carries a strategy.
func NewOptimized(res *newton.Result) (*Optimized, error) {
	if res == nil || res.X == nil || res.A == nil {
		return nil, fmt.Errorf("strategy: optimize: solver returned no strategy")
	}
	n := res.X.SymmetricDim()
	if r, c := res.A.Dims(); r != n || c != n {
		return nil, inputerr.Errorf("strategy", "optimize: strategy is %d×%d but X is %d×%d", r, c, n, n)
	}
	return &Optimized{A: res.A, X: res.X, Result: res}, nil
}

// Name returns e.g. "optimized(n=1024)".
func (s *Optimized) Name() string { return fmt.Sprintf("optimized(n=%d)", s.X.SymmetricDim()) }

// Domain returns n.
func (s *Optimized) Domain() int { return s.X.SymmetricDim() }

// Rows returns n (A is square).
func (s *Optimized) Rows() int { return s.X.SymmetricDim() }

// Matrix returns A as a dense matrix.
func (s *Optimized) Matrix() *mat.Dense { return mat.DenseCopyOf(s.A) }

// Gram returns a copy of X.
func (s *Optimized) Gram() *mat.SymDense {
	c := mat.NewSymDense(s.X.SymmetricDim(), nil)
	c.CopySym(s.X)
	return c
}

// L2Sensitivity returns √max diag X (1 for a converged solve).
func (s *Optimized) L2Sensitivity() float64 {
	m := 0.0
	for i := 0; i < s.X.SymmetricDim(); i++ {
		m = math.Max(m, s.X.At(i, i))
	}
	return math.Sqrt(m)
}

// L1Sensitivity returns the largest column 1-norm of A.
func (s *Optimized) L1Sensitivity() float64 { return colNorm(s.A, 1) }
