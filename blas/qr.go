package blas

import (
	lgonum "gonum.org/v1/gonum/lapack/gonum"
)

// trapezoider is implemented by backends with a native QR factorization.
type trapezoider interface {
	UpperTrapezoid(m, n int, a []float64, lda int) bool
}

// UpperTrapezoid overwrites the m×n matrix a (m ≤ n) with the upper
// trapezoidal factor R of its QR factorization a = Q·R (Householder, no
// pivoting), zeroing the strict lower part, so that RᵀR = aᵀa: it turns any
// factor of a positive semidefinite matrix into an upper-triangular one.
// It returns false on invalid shapes.
func UpperTrapezoid(a General) bool {
	m, n := a.Rows, a.Cols
	if m > n {
		return false
	}
	if m == 0 {
		return true
	}
	var ok bool
	if t, isT := Current().(trapezoider); isT {
		ok = t.UpperTrapezoid(m, n, a.Data, max(1, a.Stride))
	} else {
		impl := lgonum.Implementation{}
		tau := make([]float64, m)
		query := []float64{0}
		impl.Dgeqrf(m, n, a.Data, max(1, a.Stride), tau, query, -1)
		work := make([]float64, int(query[0]))
		impl.Dgeqrf(m, n, a.Data, max(1, a.Stride), tau, work, len(work))
		ok = true
	}
	for i := 1; i < m; i++ {
		clear(a.Data[i*a.Stride : i*a.Stride+i])
	}
	return ok
}
