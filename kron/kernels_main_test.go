package kron

import (
	"os"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
)

// TestMain installs the build's kernels as gonum's global BLAS and LAPACK
// too, as the dpsolve command's main does (package blas no longer does it
// from init), so these tests run gonum/mat on the same kernels as before.
func TestMain(m *testing.M) {
	blas.Use(blas.Default())
	os.Exit(m.Run())
}
