//go:build cgo && !purego

package blas

import (
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	"github.com/dpsolve/dpsolve/native"
)

// OpenBLAS is the cgo backend: OpenBLAS for BLAS and for LAPACK (its Fortran
// interface, called directly; gonum/mat's factorizations through LAPACKE).
var OpenBLAS Backend = openblasBackend{}

type openblasBackend struct{}

func (openblasBackend) Name() string        { return "openblas" }
func (openblasBackend) BLAS() gblas.Float64 { return native.BLAS }
func (openblasBackend) LAPACK() LAPACK      { return native.LAPACK{} }

// GonumLAPACK is OpenBLAS's complete LAPACK (through LAPACKE).
func (openblasBackend) GonumLAPACK() lapack.Float64 { return native.Float64LAPACK }
func (openblasBackend) SingularValues(m, n int, a []float64, lda int, s []float64) bool {
	return native.SingularValues(m, n, a, lda, s)
}
func (openblasBackend) SymEigVectors(n int, a []float64, lda int, w, z []float64, ldz int, work *[]float64) bool {
	return native.SymEigVectors(n, a, lda, w, z, ldz, work)
}
func (openblasBackend) Threads() int { return native.Threads() }
func (openblasBackend) SetThreads(n int) {
	if n > 0 {
		native.SetThreads(n)
	}
}
func (openblasBackend) CoreName() string { return native.CoreName() }

// Reserve registers a kernel caller with the OpenBLAS thread policy (see
// the package-level Reserve).
func (openblasBackend) Reserve(threads int) func() { return native.Reserve(threads) }

// Default returns the backend chosen at build time: OpenBLAS in this build.
func Default() Backend { return OpenBLAS }
