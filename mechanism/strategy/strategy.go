// Package strategy provides the query strategies of the matrix mechanism: a
// strategy A (p×n) is what actually gets measured with noise, y = A·x + z,
// and the workload's answers are reconstructed by least squares, W·A⁺·y.
//
// For Gaussian noise the expected total squared error of workload W is
// σ²·Δ₂(A)²·tr(W (AᵀA)⁺ Wᵀ) with Δ₂(A) the largest column 2-norm of A (the
// L2 sensitivity: one individual changes one cell of x by 1) and σ the
// unit-sensitivity scale for (ε,δ); for Laplace noise it is
// 2·(Δ₁(A)/ε)²·tr(W (AᵀA)⁺ Wᵀ) with Δ₁ the largest column 1-norm. The noise is
// calibrated to A's sensitivity, so the measurements are (ε,δ)- or ε-DP, and
// reconstruction is post-processing, so the answers are too. Every Strategy
// therefore exposes its Gram X = AᵀA (what the error depends on) and both
// sensitivities, computed from the structure where one exists, and forms the
// p×n matrix only on request.
//
// Strategies here: Identity (measure every cell), Hierarchical (the b-ary tree
// of interval sums with the root, unit weights; H2 for b = 2, Hay et al. 2010),
// Wavelet (the Haar wavelet of Privelet, Xiao et al. 2010, unweighted ±1
// coefficients with the total), Optimized (the Newton solution of
// min tr(V X⁻¹), diag X = 1, from package newton) and Explicit (any matrix).
package strategy

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Matrix is a measurement matrix A (p×n) for the matrix mechanism.
type Matrix interface {
	// Name is a short description, e.g. "h2(n=1024)".
	Name() string
	// Domain is n, the number of histogram cells (columns of A).
	Domain() int
	// Rows is p, the number of measurements (rows of A).
	Rows() int
	// Matrix returns A (p×n). It may be large.
	Matrix() *mat.Dense
	// Gram returns X = AᵀA (n×n), from the structure where possible.
	Gram() *mat.SymDense
	// L2Sensitivity is Δ₂(A) = max_j ‖A_{:,j}‖₂.
	L2Sensitivity() float64
	// L1Sensitivity is Δ₁(A) = max_j ‖A_{:,j}‖₁.
	L1Sensitivity() float64
}

func checkN(n int) error {
	if n <= 0 {
		return inputerr.Errorf("strategy", "domain size n must be positive, got %d", n)
	}
	return nil
}

// Identity measures every cell once: A = I, X = I, Δ₁ = Δ₂ = 1.
type Identity struct{ N int }

// NewIdentity returns the identity strategy on n cells.
func NewIdentity(n int) (*Identity, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	return &Identity{N: n}, nil
}

// Name returns "identity(n=…)".
func (s *Identity) Name() string { return fmt.Sprintf("identity(n=%d)", s.N) }

// Domain returns n.
func (s *Identity) Domain() int { return s.N }

// Rows returns n.
func (s *Identity) Rows() int { return s.N }

// Matrix returns I.
func (s *Identity) Matrix() *mat.Dense {
	d := mat.NewDense(s.N, s.N, nil)
	for i := 0; i < s.N; i++ {
		d.Set(i, i, 1)
	}
	return d
}

// Gram returns I.
func (s *Identity) Gram() *mat.SymDense {
	v := mat.NewSymDense(s.N, nil)
	for i := 0; i < s.N; i++ {
		v.SetSym(i, i, 1)
	}
	return v
}

// L2Sensitivity returns 1.
func (s *Identity) L2Sensitivity() float64 { return 1 }

// L1Sensitivity returns 1.
func (s *Identity) L1Sensitivity() float64 { return 1 }

// Explicit is a strategy given by its matrix.
type Explicit struct {
	Label string
	A     *mat.Dense
}

// FromMatrix wraps a strategy matrix A (p×n, all entries finite, no zero
// column: a cell no measurement touches could never be estimated). A is
// copied; label names it in reports ("" gives "matrix").
func FromMatrix(label string, a *mat.Dense) (*Explicit, error) {
	if a == nil || a.IsEmpty() {
		return nil, inputerr.Errorf("strategy", "empty strategy matrix")
	}
	p, n := a.Dims()
	for j := 0; j < n; j++ {
		nz := false
		for i := 0; i < p; i++ {
			v := a.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputerr.Errorf("strategy", "matrix entry (%d,%d) is %v; entries must be finite", i, j, v)
			}
			nz = nz || v != 0
		}
		if !nz {
			return nil, inputerr.Errorf("strategy", "column %d of the strategy matrix is zero: cell %d is never measured", j, j)
		}
	}
	if label == "" {
		label = "matrix"
	}
	return &Explicit{Label: label, A: mat.DenseCopyOf(a)}, nil
}

// Name returns e.g. "matrix(p=10,n=8)".
func (s *Explicit) Name() string {
	p, n := s.A.Dims()
	return fmt.Sprintf("%s(p=%d,n=%d)", s.Label, p, n)
}

// Domain returns n.
func (s *Explicit) Domain() int { _, n := s.A.Dims(); return n }

// Rows returns p.
func (s *Explicit) Rows() int { p, _ := s.A.Dims(); return p }

// Matrix returns a copy of A.
func (s *Explicit) Matrix() *mat.Dense { return mat.DenseCopyOf(s.A) }

// Gram returns AᵀA.
func (s *Explicit) Gram() *mat.SymDense {
	var x mat.SymDense
	x.SymOuterK(1, s.A.T())
	return &x
}

// L2Sensitivity returns the largest column 2-norm.
func (s *Explicit) L2Sensitivity() float64 { return colNorm(s.A, 2) }

// L1Sensitivity returns the largest column 1-norm.
func (s *Explicit) L1Sensitivity() float64 { return colNorm(s.A, 1) }

// colNorm returns max_j ‖a_{:,j}‖_p for p = 1 or 2.
func colNorm(a mat.Matrix, p float64) float64 {
	r, c := a.Dims()
	best := 0.0
	for j := 0; j < c; j++ {
		s := 0.0
		for i := 0; i < r; i++ {
			v := a.At(i, j)
			if p == 1 {
				s += math.Abs(v)
			} else {
				s += v * v
			}
		}
		if p == 2 {
			s = math.Sqrt(s)
		}
		best = math.Max(best, s)
	}
	return best
}
