//go:build cgo && !purego

package blas_test

import (
	"sort"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/native"
)

// The runtime half of the kernel seam for gonum/mat: in the cgo build each
// factorization reaches OpenBLAS's LAPACK (native.Float64LAPACK, installed
// with lapack64.Use when package blas initializes); had gonum kept its
// pure-Go LAPACK, the count of calls into native stays where it was and
// the test fails.
func TestMatFactorizationsRunOnBackend(t *testing.T) {
	if blas.Current().Name() != "openblas" {
		t.Skipf("backend %s", blas.Current().Name())
	}
	names := make([]string, 0, len(matChecks))
	for n := range matChecks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		before := native.LAPACKCalls()
		if !matChecks[n]() {
			t.Errorf("%s failed", n)
			continue
		}
		if native.LAPACKCalls() == before {
			t.Errorf("%s ran gonum's pure-Go LAPACK, not OpenBLAS's", n)
		}
	}
}
