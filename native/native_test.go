//go:build cgo && !purego

package native_test

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/native"
)

// TestOpenBLASControls: the OpenBLAS extensions are linked and behave — a
// core name and build configuration are reported, and the thread count can
// be set and read back. (The numerical kernels are held to gonum's
// conformance suites in package blas, which runs them on this backend.)
func TestOpenBLASControls(t *testing.T) {
	require.NotEmpty(t, native.CoreName())
	require.Contains(t, native.Config(), "OpenBLAS")
	old := native.Threads()
	require.GreaterOrEqual(t, old, 1)
	defer native.SetThreads(old)
	native.SetThreads(1)
	require.Equal(t, 1, native.Threads())
}

// TestSingularValuesShapes checks the row-major/column-major swap of
// SingularValues on a matrix with known singular values: diag(3, 2) padded
// with a zero column has singular values 3 and 2.
func TestSingularValuesShapes(t *testing.T) {
	a := []float64{
		0, 3, 0,
		2, 0, 0,
	}
	s := make([]float64, 2)
	require.True(t, native.SingularValues(2, 3, a, 3, s))
	require.InDelta(t, 3, s[0], 1e-15)
	require.InDelta(t, 2, s[1], 1e-15)
}

// TestLAPACKIsOpenBLAS: the LAPACK routines that LAPACKE (gonum/mat's
// factorizations, Float64LAPACK) and dpsolve's own wrappers call are
// OpenBLAS's, whatever else the process maps (Debian's liblapacke pulls in
// the liblapack.so.3 of the LAPACK alternative; the dynamic linker binds
// every call to the first definition, libopenblas's, which is also the one
// running OpenBLAS's threaded getrf/potrf).
func TestLAPACKIsOpenBLAS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dladdr")
	}
	for _, sym := range []string{"dpotrf_", "dgetrf_", "dgesvd_", "dsyev_", "dgeqrf_", "LAPACKE_dgetrf_work"} {
		f := native.SymbolFile(sym)
		require.NotEmpty(t, f, "%s is not linked", sym)
		if strings.HasPrefix(sym, "LAPACKE") {
			continue
		}
		require.Contains(t, filepath.Base(f), "libopenblas", "%s comes from %s", sym, f)
	}
}
