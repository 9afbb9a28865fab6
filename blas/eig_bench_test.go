package blas_test

import (
	"fmt"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
)

// BenchmarkSymEig compares divide and conquer (SymEig) with MRRR
// (SymEigVectors) for the full eigendecomposition, and the values-only path.
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
		b.Run(fmt.Sprintf("mrrr/n=%d", n), func(b *testing.B) {
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
