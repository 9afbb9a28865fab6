package newton

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error Solve returns for invalid input.
// It is the one dpsolve-wide sentinel (internal/inputerr), so
// errors.Is(err, ErrInput) holds for every package's bad-input errors.
var ErrInput = inputerr.ErrInput

func inputErrorf(format string, a ...any) error {
	return inputerr.Errorf("newton", format, a...)
}

// checkGram validates V: non-empty, finite, with a positive diagonal (every
// cell is touched by some query). Symmetry is guaranteed by mat.SymDense;
// positive semidefiniteness is checked later from V's eigenvalues.
func checkGram(V *mat.SymDense) error {
	if V == nil {
		return inputErrorf("Gram matrix is nil")
	}
	n := V.SymmetricDim()
	if n == 0 {
		return inputErrorf("Gram matrix is empty (n = 0)")
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := V.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return inputErrorf("Gram matrix entry (%d,%d) is %v", i, j, v)
			}
		}
	}
	for i := 0; i < n; i++ {
		if d := V.At(i, i); d <= 0 {
			if d == 0 {
				return inputErrorf("cell %d is in no query (Gram diagonal V[%d,%d] = 0, a zero workload column): drop it from the domain", i, i, i)
			}
			return inputErrorf("Gram diagonal V[%d,%d] = %g is negative: not a Gram matrix", i, i, d)
		}
	}
	return nil
}

// GramFromDense converts a square dense matrix to a SymDense after checking
// that it is symmetric to a relative tolerance of 1e-12 of its largest entry
// (files written from floating-point products are symmetric only to rounding).
func GramFromDense(d *mat.Dense) (*mat.SymDense, error) {
	r, c := d.Dims()
	if r != c {
		return nil, inputErrorf("Gram matrix must be square, got %d×%d", r, c)
	}
	if r == 0 {
		return nil, inputErrorf("Gram matrix is empty (n = 0)")
	}
	scale := 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := d.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputErrorf("Gram matrix entry (%d,%d) is %v", i, j, v)
			}
			scale = math.Max(scale, math.Abs(v))
		}
	}
	for i := 0; i < r; i++ {
		for j := i + 1; j < c; j++ {
			if a, b := d.At(i, j), d.At(j, i); math.Abs(a-b) > 1e-12*scale {
				return nil, inputErrorf("Gram matrix is not symmetric: entry (%d,%d) = %g but (%d,%d) = %g", i, j, a, j, i, b)
			}
		}
	}
	s := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			s.SetSym(i, j, (d.At(i, j)+d.At(j, i))/2)
		}
	}
	return s, nil
}

// GramFromWorkload returns V = WᵀW for an explicit workload matrix W (m×n).
func GramFromWorkload(w *mat.Dense) (*mat.SymDense, error) {
	m, n := w.Dims()
	if m == 0 || n == 0 {
		return nil, inputErrorf("workload matrix is empty (%d×%d)", m, n)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if v := w.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputErrorf("workload matrix entry (%d,%d) is %v", i, j, v)
			}
		}
	}
	v := mat.NewSymDense(n, nil)
	v.SymOuterK(1, w.T())
	return v, nil
}
