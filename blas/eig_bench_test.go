package blas_test

import (
	"fmt"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
)

// BenchmarkSymEig compares the two full eigendecompositions — SymEig (with
// OpenBLAS: dsyevd, vectors in place, 2n² workspace) and SymEigVectors
// (divide and conquer into a second matrix, n² workspace) — with the
// values-only path and the singular values.
func BenchmarkSymEig(b *testing.B) {
	for _, n := range []int{512, 1024, 2048} {
		a := randSPD(n, 1)
		c, z := blas.NewSquare(n), blas.NewSquare(n)
		w := make([]float64, n)
		b.Run(fmt.Sprintf("dc/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				blas.Copy(c, a)
				blas.SymEig(c, w, true)
			}
		})
		b.Run(fmt.Sprintf("vectors/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				blas.Copy(c, a)
				blas.SymEigVectors(c, z, w)
			}
		})
		b.Run(fmt.Sprintf("values/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				blas.Copy(c, a)
				blas.SymEig(c, w, false)
			}
		})
		b.Run(fmt.Sprintf("svd-values/n=%d", n), func(b *testing.B) {
			s := make([]float64, n)
			for i := 0; i < b.N; i++ {
				blas.Copy(c, a)
				blas.SingularValues(c, s)
			}
		})
	}
}
