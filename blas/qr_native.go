//go:build cgo && !purego

package blas

import "github.com/dpsolve/dpsolve/native"

// UpperTrapezoid implements trapezoider with LAPACK's QR (see native).
func (openblasBackend) UpperTrapezoid(m, n int, a []float64, lda int) bool {
	return native.UpperTrapezoid(m, n, a, lda)
}
