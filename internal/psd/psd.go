// Package psd is dpsolve's one factorization of a symmetric positive
// semidefinite matrix V (a workload's Gram WᵀW): an r×n matrix R with
// RᵀR = V and its rank r, by Cholesky when V is definite and from V's
// eigendecomposition otherwise. One tolerance decides both questions an
// eigenvalue λ of V raises (λ_max is the largest |λ|):
//
//	τ = Tol(n, λ_max) = 32·rank.Cutoff(n, λ_max) = 32·n·ε·λ_max
//
// An eigenvalue λ ≤ τ is zero: its direction is dropped from the factor.
// An eigenvalue λ < −τ means V is not positive semidefinite: an error
// wrapping ErrNotPSD (and inputerr.ErrInput) is returned.
//
// Why 32·n·ε·λ_max. A Gram computed as WᵀW, and the eigenvalues computed
// from it, carry absolute rounding errors of about n·ε·λ_max
// (rank.Cutoff's level, the module's rank rule): an exactly zero eigenvalue
// comes out anywhere in ±n·ε·λ_max. A negative eigenvalue beyond 32 times
// that is not rounding, so V is rejected rather than silently clamped. A
// factor keeps √λ, and √ turns a rounding-sized λ into a term of
// √(n·ε)·√λ_max ≈ 1e-7·√λ_max for n = 256, far above rounding: a
// certified lower bound that sums the singular values of a factor
// (newton's dual bound) would rise above the optimum. Dropping every
// λ ≤ τ only lowers V (in the Loewner order), which keeps such a bound a
// bound, and every kept λ > τ has a rounding error of at most a relative
// 1/32. The 32 is the margin newton's certificate factor used before this
// package (its rankTol, 32·n·ε, floored at 1e-13 for n < 14).
//
// The Cholesky fast path: V = UᵀU is returned as R = U (rank n) when
// Cholesky succeeds and no pivot uᵢᵢ² is at or below Tol(n, max Vᵢᵢ).
// Since λ_min ≤ uᵢᵢ² and max Vᵢᵢ ≤ λ_max, such a pivot proves λ_min ≤ τ:
// V has a direction the rule calls zero, and the eigendecomposition path
// drops it. The converse does not hold: a definite V whose λ_min ≤ τ has
// pivots of about n·λ_min and may pass, keeping that direction (rank n);
// deciding it exactly would take the eigendecomposition (about ten
// Choleskys) the fast path exists to avoid. The factor of a V that passes
// has Cholesky's backward error, (n+1)·ε·|Uᵀ||U| entrywise, the same order
// as τ; newton's certificate has always taken this path for such a V.
package psd

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/rank"
)

// ErrNotPSD is wrapped by the error for a matrix with an eigenvalue below
// −Tol(n, λ_max); such an error also wraps inputerr.ErrInput.
var ErrNotPSD = errors.New("not positive semidefinite")

// ErrNoConvergence is returned when the eigendecomposition does not
// converge.
var ErrNoConvergence = errors.New("psd: the eigendecomposition did not converge")

// NotPSDError reports the eigenvalue that makes V not positive
// semidefinite.
type NotPSDError struct {
	Smallest float64 // the smallest eigenvalue, below −Tol
	Largest  float64 // λ_max = max |λ|
	Tol      float64 // Tol(n, Largest)
}

func (e *NotPSDError) Error() string {
	return fmt.Sprintf("psd: %v: %v: smallest eigenvalue %.3g below −%.3g (32·n·ε·λ_max, λ_max = %.3g)",
		inputerr.ErrInput, ErrNotPSD, e.Smallest, e.Tol, e.Largest)
}

// Unwrap makes errors.Is find both ErrNotPSD and inputerr.ErrInput.
func (e *NotPSDError) Unwrap() []error { return []error{inputerr.ErrInput, ErrNotPSD} }

// Tol returns the factorization's one tolerance for an n×n matrix whose
// largest eigenvalue in absolute value is largest: 32·n·ε·largest
// (the package doc says why).
func Tol(n int, largest float64) float64 { return 32 * rank.Cutoff(n, largest) }

// Factor returns an r×n matrix R with RᵀR = V and its rank r, for a
// symmetric positive semidefinite n×n matrix v (upper triangle read, v not
// written): V's upper Cholesky factor (r = n) when V is definite by the
// package's rule, else Principal's factor. Errors: an empty or non-finite
// v (wrapping inputerr.ErrInput), a *NotPSDError, ErrNoConvergence.
func Factor(v blas.General) (blas.General, int, error) {
	n, err := check(v)
	if err != nil {
		return blas.General{}, 0, err
	}
	r := blas.NewSquare(n)
	k, err := factorInto(v, r, blas.General{})
	if err != nil {
		return blas.General{}, 0, err
	}
	return blas.General{Rows: k, Cols: n, Stride: n, Data: r.Data[:k*n]}, k, nil
}

// FactorInto is Factor writing into the caller's storage, for solvers that
// allocate their matrices once: r (n×n) receives R in its first rank rows
// and zeros below; work (n×n) is scratch for the eigenvectors, allocated
// when its Data is nil and the eigendecomposition path is taken. Neither
// may share storage with v, which is not written.
func FactorInto(v, r, work blas.General) (int, error) {
	n, err := check(v)
	if err != nil {
		return 0, err
	}
	if r.Rows != n || r.Cols != n || work.Data != nil && (work.Rows != n || work.Cols != n) {
		return 0, inputerr.Errorf("psd", "FactorInto: r is %d×%d and work %d×%d, want %d×%d", r.Rows, r.Cols, work.Rows, work.Cols, n, n)
	}
	return factorInto(v, r, work)
}

// factorInto is FactorInto on a checked v and storage of the right shape.
func factorInto(v, r, work blas.General) (int, error) {
	n := v.Rows
	blas.Copy(r, v)
	if blas.Cholesky(r) {
		dmax := 0.0
		for i := 0; i < n; i++ {
			dmax = math.Max(dmax, v.Data[i*v.Stride+i])
		}
		tol := Tol(n, dmax)
		definite := true
		for i := 0; i < n && definite; i++ {
			d := r.Data[i*r.Stride+i]
			definite = d*d > tol
		}
		if definite {
			return n, nil
		}
	}
	return principalInto(v, r, work)
}

// Principal returns R = Λᵣ^{1/2}·Qᵣᵀ (r×n) and r from V = QΛQᵀ, keeping
// the eigenvalues above Tol(n, λ_max): row k of R is √λₖ·qₖᵀ, the
// eigenvalues in descending order, so the rows are V's principal
// directions (a workload's right singular vectors scaled by its singular
// values). It never takes the Cholesky path; callers whose result depends
// on the rows themselves, not only on RᵀR, use it. A V with no eigenvalue
// above the tolerance (V = 0) has r = 0 and a 0×n R. Errors as Factor's.
func Principal(v blas.General) (blas.General, int, error) {
	n, err := check(v)
	if err != nil {
		return blas.General{}, 0, err
	}
	r := blas.NewSquare(n)
	k, err := principalInto(v, r, blas.General{})
	if err != nil {
		return blas.General{}, 0, err
	}
	return blas.General{Rows: k, Cols: n, Stride: n, Data: r.Data[:k*n]}, k, nil
}

// principalInto writes Principal's R into the first rows of r (n×n, zeros
// below), using r and work (n×n, allocated if nil) for the
// eigendecomposition.
func principalInto(v, r, q blas.General) (int, error) {
	n := v.Rows
	if q.Data == nil {
		q = blas.NewSquare(n)
	}
	blas.Copy(r, v)
	mu := make([]float64, n) // ascending
	if !blas.SymEigVectors(r, q, mu) {
		return 0, ErrNoConvergence
	}
	largest := math.Max(math.Abs(mu[0]), math.Abs(mu[n-1]))
	tol := Tol(n, largest)
	if mu[0] < -tol {
		return 0, &NotPSDError{Smallest: mu[0], Largest: largest, Tol: tol}
	}
	k := 0
	for k < n && mu[n-1-k] > tol {
		k++
	}
	for i := 0; i < n; i++ {
		row := r.Data[i*r.Stride : i*r.Stride+n]
		if i >= k {
			clear(row)
			continue
		}
		j := n - 1 - i
		s := math.Sqrt(mu[j])
		for c := range row {
			row[c] = s * q.Data[c*q.Stride+j]
		}
	}
	return k, nil
}

// check validates v: square, non-empty, finite upper triangle.
func check(v blas.General) (int, error) {
	n := v.Rows
	if n == 0 || v.Cols != n {
		return 0, inputerr.Errorf("psd", "the matrix is %d×%d: want a non-empty square matrix", v.Rows, v.Cols)
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if x := v.Data[i*v.Stride+j]; math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, inputerr.Errorf("psd", "entry (%d,%d) is %v", i, j, x)
			}
		}
	}
	return n, nil
}
