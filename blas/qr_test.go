package blas_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/blas"
)

// TestUpperTrapezoid: on every backend, R from a wide m×n matrix A is
// upper trapezoidal with RᵀR = AᵀA to 1e-13 relative (Householder QR is
// backward stable: the error is a few ε·‖A‖²), checked with a plain
// triple loop.
func TestUpperTrapezoid(t *testing.T) {
	defer blas.Use(blas.Current())
	r := rand.New(rand.NewPCG(1, 2))
	for _, b := range blas.Backends() {
		blas.Use(b)
		for _, sh := range [][2]int{{1, 1}, {1, 7}, {3, 3}, {5, 17}, {40, 90}} {
			m, n := sh[0], sh[1]
			a := blas.NewGeneral(m, n)
			for i := range a.Data {
				a.Data[i] = r.NormFloat64()
			}
			orig := append([]float64(nil), a.Data...)
			require.True(t, blas.UpperTrapezoid(a), b.Name())
			scale := 0.0
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					want, got := 0.0, 0.0
					for k := 0; k < m; k++ {
						want += orig[k*n+i] * orig[k*n+j]
						got += a.Data[k*n+i] * a.Data[k*n+j]
					}
					scale = math.Max(scale, math.Abs(want))
					require.InDelta(t, want, got, 1e-13*float64(m)*(1+math.Abs(want)), "%s %dx%d (%d,%d)", b.Name(), m, n, i, j)
				}
			}
			for i := 0; i < m; i++ {
				for j := 0; j < i; j++ {
					require.Zero(t, a.Data[i*n+j], "%s: below the diagonal", b.Name())
				}
			}
		}
		require.False(t, blas.UpperTrapezoid(blas.NewGeneral(3, 2)), "tall input is refused")
	}
}
