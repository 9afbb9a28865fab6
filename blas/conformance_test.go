package blas_test

import (
	"testing"

	"gonum.org/v1/gonum/blas/testblas"
	"gonum.org/v1/gonum/lapack/testlapack"

	"github.com/dpsolve/dpsolve/blas"
)

// TestConformance runs gonum's own BLAS and LAPACK conformance suites
// (testblas, testlapack) on every backend compiled into this binary, so the
// OpenBLAS bindings and the pure-Go fallback are held to one standard.
func TestConformance(t *testing.T) {
	for _, b := range blas.Backends() {
		t.Run(b.Name(), func(t *testing.T) {
			bl, la := b.BLAS(), b.LAPACK()
			t.Run("Dgemm", func(t *testing.T) { testblas.TestDgemm(t, bl) })
			t.Run("Dsyrk", func(t *testing.T) { testblas.DsyrkTest(t, bl) })
			t.Run("Dtrsm", func(t *testing.T) { testblas.DtrsmTest(t, bl) })
			t.Run("Dtrmm", func(t *testing.T) { testblas.DtrmmTest(t, bl) })
			t.Run("Dpotrf", func(t *testing.T) { testlapack.DpotrfTest(t, la) })
			t.Run("Dpotri", func(t *testing.T) { testlapack.DpotriTest(t, la) })
			t.Run("Dtrtri", func(t *testing.T) { testlapack.DtrtriTest(t, la) })
			t.Run("Dsyev", func(t *testing.T) { testlapack.DsyevTest(t, la) })
		})
	}
}
