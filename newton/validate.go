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
