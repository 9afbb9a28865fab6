package newton

import (
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// Small helpers over blas.General used by the solvers.

func upperToTri(g blas.General) *mat.TriDense {
	n := g.Rows
	t := mat.NewTriDense(n, mat.Upper, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			t.SetTri(i, j, g.Data[i*g.Stride+j])
		}
	}
	return t
}

func trace(g blas.General) float64 {
	s := 0.0
	for i := 0; i < g.Rows; i++ {
		s += g.Data[i*g.Stride+i]
	}
	return s
}

// lowerCholesky overwrites the positive definite c (upper triangle read)
// with its lower-triangular factor C, c = C·Cᵀ; false if not definite.
func lowerCholesky(c blas.General) bool {
	if !blas.Cholesky(c) {
		return false
	}
	n := c.Rows
	for i := 0; i < n; i++ { // c holds R (upper), c = RᵀR: C = Rᵀ
		for j := i + 1; j < n; j++ {
			c.Data[j*c.Stride+i], c.Data[i*c.Stride+j] = c.Data[i*c.Stride+j], 0
		}
	}
	return true
}

// mirrorUpper copies the strict upper triangle of the n×n matrix a into
// its lower triangle, and zeroes the diagonal if zeroDiag.
func mirrorUpper(threads int, a blas.General, zeroDiag bool) {
	n, d := a.Rows, a.Data
	forTiles(threads, n, func(bi, ie, bj, je int) {
		for i := bi; i < ie; i++ {
			if zeroDiag && bj == bi {
				d[i*n+i] = 0
			}
			for j := max(bj, i+1); j < je; j++ {
				d[j*n+i] = d[i*n+j]
			}
		}
	})
}

func view(data []float64, rows, cols int) blas.General {
	return blas.General{Rows: rows, Cols: cols, Stride: cols, Data: data[:rows*cols]}
}
