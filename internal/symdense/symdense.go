// Package symdense converts between gonum's packed symmetric matrices and
// the row-major blas.General (full symmetric storage) that the solvers in
// newton and mechanism/mf work on, so that both share one conversion.
package symdense

import (
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// ToGeneral returns v as a new square blas.General holding both triangles.
func ToGeneral(v *mat.SymDense) blas.General {
	n := v.SymmetricDim()
	g := blas.NewSquare(n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := v.At(i, j)
			g.Data[i*n+j], g.Data[j*n+i] = x, x
		}
	}
	return g
}

// ToSym returns a new SymDense from the upper triangle of the square g (the
// lower triangle is not read).
func ToSym(g blas.General) *mat.SymDense {
	n := g.Rows
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, g.Data[i*g.Stride+j])
		}
	}
	return s
}
