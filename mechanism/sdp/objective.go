package sdp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/privacy/accounting"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// ErrUnsupported is returned by StrategyObjective when AᵀA is singular, so
// the strategy cannot answer every query of a full-rank workload.
var ErrUnsupported = errors.New("sdp: strategy does not support the workload (AᵀA is singular)")

// StrategyObjective returns the objective of Yuan et al. (KDD 2016), J_p(A) = ‖A‖²_{p,∞} ·
// tr(V (AᵀA)⁻¹) of strategy s for the workload Gram V, with p the noise
// model's norm (calibrate.NoiseKind.Norm): Laplace noise is p = 1, exact
// ε-DP with Δ₁ the largest column 1-norm; Gaussian noise is p = 2,
// approximate DP with Δ₂ the largest column 2-norm. The expected total squared
// error is J₁·2/ε² for Laplace noise and J₂·σ² for Gaussian noise; J is
// invariant under scaling A, so it compares strategies directly. X = AᵀA
// must be positive definite (else ErrUnsupported).
func StrategyObjective(v *mat.SymDense, s strategy.Matrix, noise calibrate.NoiseKind) (float64, error) {
	if v == nil || s == nil {
		return 0, inputerr.Errorf("sdp", "nil Gram or strategy")
	}
	if s.Domain() != v.SymmetricDim() {
		return 0, inputerr.Errorf("sdp", "strategy has %d columns, workload %d cells", s.Domain(), v.SymmetricDim())
	}
	var sens float64
	switch noise {
	case calibrate.Laplace:
		sens = s.L1Sensitivity()
	case calibrate.Gaussian:
		sens = s.L2Sensitivity()
	default:
		return 0, inputerr.Errorf("sdp", "unknown noise %q (want laplace or gaussian)", noise)
	}
	t, err := traceVXinv(v, s.Gram())
	if err != nil {
		return 0, err
	}
	return sens * sens * t, nil
}

// traceVXinv returns tr(V X⁻¹) through accounting.TraceGramPinv, dpsolve's
// one implementation; a singular X is ErrUnsupported here (that
// objective needs X ≻ 0).
func traceVXinv(v, x *mat.SymDense) (float64, error) {
	var ch mat.Cholesky
	if !ch.Factorize(x) {
		return 0, ErrUnsupported
	}
	t, err := accounting.TraceGramPinv(v, x)
	if err != nil {
		if errors.Is(err, accounting.ErrUnsupported) {
			return 0, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		return 0, err
	}
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return 0, ErrUnsupported
	}
	return t, nil
}
