package accounting

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/pinv"
	"github.com/dpsolve/dpsolve/internal/rank"
)

// condLimit is the largest estimated condition number of X for which the
// Cholesky path is trusted: beyond it the relative error of tr(X⁻¹V) could
// exceed ~1e-4 (κ·ε_mach), and the eigenvalue path with an explicit rank
// decision is used instead.
const condLimit = 1e12

// TraceGramPinv returns tr(V X⁺) for a workload Gram V and strategy Gram X
// (both n×n, symmetric positive semidefinite).
//
// When X is numerically positive definite (Cholesky succeeds with estimated
// condition number ≤ 1e12) it solves X·Y = V with the Cholesky factor (two
// triangular solves, no explicit inverse) and returns tr Y: about n³/3 + 2n³
// flops. Otherwise it diagonalizes X = QΛQᵀ, treats eigenvalues below
// n·ε_mach·λ_max as zero, and returns Σ_{λ_k>0} q_kᵀVq_k/λ_k after checking
// that V has no weight on the null space (Σ_{λ_k=0} q_kᵀVq_k ≤ 1e-9·tr V);
// if it has, the strategy cannot answer the workload and the error wraps
// ErrUnsupported.
func TraceGramPinv(v, x *mat.SymDense) (float64, error) {
	if v == nil || x == nil || v.IsEmpty() || x.IsEmpty() {
		return 0, inputerr.Errorf("accounting", "empty Gram matrix")
	}
	n := v.SymmetricDim()
	if x.SymmetricDim() != n {
		return 0, inputerr.Errorf("accounting", "workload Gram is %d×%d but strategy Gram is %d×%d", n, n, x.SymmetricDim(), x.SymmetricDim())
	}
	if err := checkFinite("workload Gram", v); err != nil {
		return 0, err
	}
	if err := checkFinite("strategy Gram", x); err != nil {
		return 0, err
	}
	var chol mat.Cholesky
	if chol.Factorize(x) && chol.Cond() <= condLimit {
		var y mat.Dense
		if err := chol.SolveTo(&y, v); err == nil {
			return mat.Trace(&y), nil
		}
	}
	return tracePinvEigen(v, x)
}

func tracePinvEigen(v, x *mat.SymDense) (float64, error) {
	n := v.SymmetricDim()
	e, err := pinv.NewSym(x)
	if err != nil {
		return 0, fmt.Errorf("eigendecomposition of the strategy Gram did not converge")
	}
	lam, q := e.Values, e.Vectors
	if e.Largest == 0 {
		return 0, fmt.Errorf("%w: the strategy Gram is zero", ErrUnsupported)
	}
	tol := e.Cutoff
	for _, l := range lam {
		if l < -tol {
			return 0, inputerr.Errorf("accounting", "strategy Gram is not positive semidefinite (eigenvalue %g)", l)
		}
	}
	// d_k = q_kᵀ V q_k from T = V·Q.
	var t mat.Dense
	t.Mul(v, q)
	trV := 0.0
	for i := 0; i < n; i++ {
		trV += v.At(i, i)
	}
	var tr, null float64
	for k := 0; k < n; k++ {
		d := 0.0
		for i := 0; i < n; i++ {
			d += q.At(i, k) * t.At(i, k)
		}
		if e.Kept(k) {
			tr += d / lam[k]
		} else {
			null += math.Abs(d)
		}
	}
	if null > 1e-9*trV {
		return 0, fmt.Errorf("%w: X = AᵀA is singular and the workload has weight %.3g (of tr V = %.3g) outside the row space of A", ErrUnsupported, null, trV)
	}
	return tr, nil
}

// SVDBound returns (Σσᵢ(W))²/n = (tr V^{1/2})²/n from the eigenvalues of the
// workload Gram V (values only: one symmetric tridiagonal reduction, about
// 4n³/3 flops). Eigenvalues in [−1e-10·λ_max, n·ε_mach·λ_max] are rounding
// and are treated as 0; a more negative one means V is not a Gram matrix and
// is an error.
func SVDBound(v *mat.SymDense) (float64, error) {
	if v == nil || v.IsEmpty() {
		return 0, inputerr.Errorf("accounting", "empty workload Gram")
	}
	if err := checkFinite("workload Gram", v); err != nil {
		return 0, fmt.Errorf("accounting: %w", err)
	}
	var eig mat.EigenSym
	if !eig.Factorize(v, false) {
		return 0, fmt.Errorf("accounting: eigendecomposition of the workload Gram did not converge")
	}
	lam := eig.Values(nil)
	lmax := 0.0
	for _, l := range lam {
		lmax = math.Max(lmax, l)
	}
	// Eigenvalues below n·ε_mach·λ_max are indistinguishable from zero (the
	// backward error of the eigensolver); keeping them would add spurious
	// √(rounding) terms, e.g. 1e-7 each for a rank-one V.
	zero := rank.Cutoff(len(lam), lmax)
	sum := 0.0
	for _, l := range lam {
		if l < -1e-10*lmax {
			return 0, inputerr.Errorf("accounting", "workload Gram is not positive semidefinite (eigenvalue %g, largest %g)", l, lmax)
		}
		if l > zero {
			sum += math.Sqrt(l)
		}
	}
	return sum * sum / float64(v.SymmetricDim()), nil
}

func checkFinite(what string, s *mat.SymDense) error {
	n := s.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if x := s.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return inputerr.Errorf("accounting", "%s entry (%d,%d) is %v; entries must be finite", what, i, j, x)
			}
		}
	}
	return nil
}

// TraceFactor returns tr(V X⁻¹) for X = RᵀR given the upper-triangular
// factor R (a square strategy, or the R of a strategy's QR): it equals
// tr(R⁻ᵀ V R⁻¹) = Σᵢⱼ (R⁻¹)ᵢⱼ (V R⁻¹)ᵢⱼ, computed from R⁻¹ without forming
// X, which would square R's condition number. It is TraceGramPinv's
// counterpart for a factored strategy (release's expected error uses it).
func TraceFactor(v *mat.SymDense, r *mat.TriDense) (float64, error) {
	if v == nil || r == nil || v.IsEmpty() || r.IsEmpty() {
		return 0, inputerr.Errorf("accounting", "empty Gram matrix or factor")
	}
	n := v.SymmetricDim()
	if rn, _ := r.Triangle(); rn != n {
		return 0, inputerr.Errorf("accounting", "workload Gram is %d×%d but the factor is %d×%d", n, n, rn, rn)
	}
	if _, kind := r.Triangle(); kind != mat.Upper {
		return 0, inputerr.Errorf("accounting", "the factor must be upper triangular")
	}
	var rinv mat.TriDense
	if err := rinv.InverseTri(r); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return 0, fmt.Errorf("accounting: inverting the factor: %w", err)
		}
	}
	ri := mat.DenseCopyOf(&rinv)
	var vr mat.Dense
	vr.Mul(v, ri)
	var tr float64
	for i := 0; i < n; i++ {
		a, b := ri.RawRowView(i), vr.RawRowView(i)
		for j := i; j < n; j++ { // R⁻¹ is upper triangular
			tr += a[j] * b[j]
		}
	}
	if math.IsNaN(tr) || math.IsInf(tr, 0) || tr < 0 {
		return 0, fmt.Errorf("accounting: tr(V X⁻¹) is %v: strategy too ill-conditioned", tr)
	}
	return tr, nil
}
