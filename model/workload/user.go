package workload

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Matrix is a user-supplied explicit workload W (m×n).
type Matrix struct {
	Label string
	W     *mat.Dense
}

// FromMatrix wraps a user's query matrix W (m×n, m, n ≥ 1, all entries
// finite). The matrix is copied. label names the workload in reports ("" gives
// "matrix").
func FromMatrix(label string, w *mat.Dense) (*Matrix, error) {
	if w == nil || w.IsEmpty() {
		return nil, inputerr.Errorf("workload", "empty query matrix")
	}
	m, n := w.Dims()
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if v := w.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputerr.Errorf("workload", "query matrix entry (%d,%d) is %v; entries must be finite", i, j, v)
			}
		}
	}
	if label == "" {
		label = "matrix"
	}
	return &Matrix{Label: label, W: mat.DenseCopyOf(w)}, nil
}

// Name returns e.g. "matrix(m=10,n=64)".
func (w *Matrix) Name() string {
	m, n := w.W.Dims()
	return fmt.Sprintf("%s(m=%d,n=%d)", w.Label, m, n)
}

// Domain returns n.
func (w *Matrix) Domain() int { _, n := w.W.Dims(); return n }

// Queries returns m.
func (w *Matrix) Queries() int { m, _ := w.W.Dims(); return m }

// Gram returns WᵀW.
func (w *Matrix) Gram() *mat.SymDense {
	var v mat.SymDense
	v.SymOuterK(1, w.W.T())
	return &v
}

// Matrix returns a copy of W.
func (w *Matrix) Matrix() *mat.Dense { return mat.DenseCopyOf(w.W) }

// GramOnly is a workload known only through its Gram V = WᵀW and its number
// of queries m (the error accounting needs m for per-query RMSE).
type GramOnly struct {
	Label string
	V     *mat.SymDense
	M     int
}

// FromGram wraps a user's Gram matrix V (n×n) of a workload with m queries
// (m = 0: unknown; Queries then reports 0 and per-query accounting refuses
// the workload).
// It checks what can be checked cheaply: every entry finite, every diagonal
// entry non-negative, and |V_ij| ≤ √(V_ii·V_jj)·(1+1e-9) (true of every
// positive semidefinite matrix; the slack allows rounding in a file written
// as text). Full semidefiniteness is checked where the eigenvalues are
// computed anyway (the error accounting's SVD bound). V is copied.
func FromGram(label string, v *mat.SymDense, m int) (*GramOnly, error) {
	if v == nil || v.IsEmpty() {
		return nil, inputerr.Errorf("workload", "empty Gram matrix")
	}
	if m < 0 {
		return nil, inputerr.Errorf("workload", "number of queries m must be positive (or 0: unknown), got %d", m)
	}
	n := v.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if x := v.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, inputerr.Errorf("workload", "Gram entry (%d,%d) is %v; entries must be finite", i, j, x)
			}
		}
		if v.At(i, i) < 0 {
			return nil, inputerr.Errorf("workload", "Gram diagonal entry %d is %g < 0; a Gram WᵀW is positive semidefinite", i, v.At(i, i))
		}
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if math.Abs(v.At(i, j)) > math.Sqrt(v.At(i, i)*v.At(j, j))*(1+1e-9) {
				return nil, inputerr.Errorf("workload", "Gram entry (%d,%d) = %g exceeds √(V_ii·V_jj) = %g: not positive semidefinite", i, j, v.At(i, j), math.Sqrt(v.At(i, i)*v.At(j, j)))
			}
		}
	}
	if label == "" {
		label = "gram"
	}
	c := mat.NewSymDense(n, nil)
	c.CopySym(v)
	return &GramOnly{Label: label, V: c, M: m}, nil
}

// FromGramDense is FromGram for a square dense matrix as read from a file; it
// rejects matrices that are not symmetric to a relative 1e-9 of their largest
// entry, and uses the average (V+Vᵀ)/2.
func FromGramDense(label string, d *mat.Dense, m int) (*GramOnly, error) {
	if d == nil || d.IsEmpty() {
		return nil, inputerr.Errorf("workload", "empty Gram matrix")
	}
	r, c := d.Dims()
	if r != c {
		return nil, inputerr.Errorf("workload", "Gram matrix must be square, got %d×%d", r, c)
	}
	scale := mat.Norm(d, math.Inf(1))
	for i := 0; i < r; i++ {
		for j := i + 1; j < r; j++ {
			if math.Abs(d.At(i, j)-d.At(j, i)) > 1e-9*scale {
				return nil, inputerr.Errorf("workload", "Gram matrix is not symmetric: entries (%d,%d) = %g and (%d,%d) = %g", i, j, d.At(i, j), j, i, d.At(j, i))
			}
		}
	}
	return FromGram(label, symmetrize(d), m)
}

// Name returns e.g. "gram(n=64,m=100)".
func (w *GramOnly) Name() string {
	return fmt.Sprintf("%s(n=%d,m=%d)", w.Label, w.V.SymmetricDim(), w.M)
}

// Domain returns n.
func (w *GramOnly) Domain() int { return w.V.SymmetricDim() }

// Queries returns m.
func (w *GramOnly) Queries() int { return w.M }

// Gram returns a copy of V.
func (w *GramOnly) Gram() *mat.SymDense {
	c := mat.NewSymDense(w.V.SymmetricDim(), nil)
	c.CopySym(w.V)
	return c
}
