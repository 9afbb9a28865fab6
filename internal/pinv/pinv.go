// Package pinv is dpsolve's one pseudo-inverse: the Moore–Penrose inverse
// of a matrix from its thin SVD (Dense), and of a symmetric positive
// semidefinite Gram matrix from its eigendecomposition (NewSym). Both drop
// the singular values or eigenvalues at or below rank.Cutoff(dim, largest)
// (dim·ε·largest, internal/rank's one rank rule) and invert the rest. QR
// is a fast path to the same A⁺ for a well-conditioned matrix of full
// column rank, which declines every other input.
package pinv

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/rank"
)

// ErrNoConvergence is returned when the SVD or the eigendecomposition does
// not converge (a non-finite input, typically).
var ErrNoConvergence = errors.New("pinv: the decomposition did not converge")

// Dense returns A⁺ (n×m) for an m×n matrix a and its numerical rank r:
// A⁺ = V_r Σ_r⁻¹ U_rᵀ from the thin SVD A = UΣVᵀ, keeping the singular
// values above rank.Cutoff(max(m, n), σ₁). A zero matrix (or one whose
// largest singular value is not a positive number) has rank 0 and A⁺ = 0.
func Dense(a mat.Matrix) (*mat.Dense, int, error) {
	m, n := a.Dims()
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, 0, ErrNoConvergence
	}
	sv := svd.Values(nil)
	out := mat.NewDense(n, m, nil)
	if len(sv) == 0 || !(sv[0] > 0) {
		return out, 0, nil
	}
	tol := rank.Cutoff(max(m, n), sv[0])
	r := 0
	for r < len(sv) && sv[r] > tol {
		r++
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	vs := mat.DenseCopyOf(v.Slice(0, n, 0, r))
	for j := 0; j < r; j++ {
		for i := 0; i < n; i++ {
			vs.Set(i, j, vs.At(i, j)/sv[j])
		}
	}
	out.Mul(vs, u.Slice(0, m, 0, r).T())
	return out, r, nil
}

// Sym is a symmetric matrix X = QΛQᵀ eigendecomposed, with the rank
// decision made: X⁺ = Σ_{k kept} q_k q_kᵀ/λ_k, an eigenvalue kept when it is
// above Cutoff = rank.Cutoff(d, Largest), Largest = max |λ_k|. Callers that
// need X to be positive semidefinite check the negative eigenvalues against
// their own tolerance (Values holds them all).
type Sym struct {
	Values  []float64  // λ, ascending
	Vectors *mat.Dense // Q, column k for λ_k
	Largest float64    // max |λ_k|
	Cutoff  float64    // rank.Cutoff(d, Largest)
}

// NewSym eigendecomposes x.
func NewSym(x *mat.SymDense) (*Sym, error) {
	var eig mat.EigenSym
	if !eig.Factorize(x, true) {
		return nil, ErrNoConvergence
	}
	s := &Sym{Values: eig.Values(nil), Vectors: new(mat.Dense)}
	eig.VectorsTo(s.Vectors)
	for _, l := range s.Values {
		s.Largest = math.Max(s.Largest, math.Abs(l))
	}
	s.Cutoff = rank.Cutoff(len(s.Values), s.Largest)
	return s, nil
}

// Kept reports whether λ_k is above the cutoff (a non-zero eigenvalue).
func (s *Sym) Kept(k int) bool { return s.Values[k] > s.Cutoff }

// Rank returns the number of kept eigenvalues.
func (s *Sym) Rank() int {
	r := 0
	for k := range s.Values {
		if s.Kept(k) {
			r++
		}
	}
	return r
}

// QRMaxCond bounds the condition number estimate of a matrix QR inverts
// (mat.QR.Cond: LAPACK's estimate of R's 1-norm condition number κ₁,
// rarely low by more than a small factor; κ₂ ≤ n·κ₁). Dense keeps every
// singular value above rank.Cutoff(max(m, n), σ₁) = max(m, n)·ε·σ₁. With
// the estimate at most QRMaxCond and also estimate·n·m·ε ≤ 10⁻³ (QR's
// second test), σ_min ≥ σ₁/(n·κ₁) is at least a thousand times that
// cutoff for an exact estimate, and ten times for one 100 times low, so
// both paths keep all n values and compute the same A⁺ = R⁻¹Qᵀ, QR's with
// an error of about κ·ε.
const QRMaxCond = 1e6

// QR returns A⁺ = R⁻¹Qᵀ from A = QR for an m×n matrix a with n ≤ m ≤ 4n
// (Qᵀ is applied to the m×m identity) of full column rank whose condition
// estimate passes QRMaxCond's two tests: the same A⁺ as Dense (QRMaxCond
// says why) at a fraction of the SVD's cost for large n. ok is false for
// any other a (a non-finite entry, a wide or very tall shape, a rank
// deficient or ill-conditioned matrix); the caller then uses Dense.
func QR(a *mat.Dense) (inv *mat.Dense, ok bool) {
	m, n := a.Dims()
	if n == 0 || m < n || m > 4*n {
		return nil, false
	}
	for i := 0; i < m; i++ {
		for _, v := range a.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, false
			}
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	c := qr.Cond()
	if !(c <= QRMaxCond) || c*float64(n)*float64(m)*rank.Eps > 1e-3 {
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
