//go:build cgo && !purego

package native_test

import (
	"os"
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

// TestLinksOnlyOpenBLAS: the process maps libopenblas and none of LAPACKE's
// libraries (liblapacke, the separate liblapack.so.3, libtmglib), whose
// eager symbol binding cost every dpsolve process over a millisecond at
// start — a lot for batches of small jobs (see doc.go).
func TestLinksOnlyOpenBLAS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	maps := string(b)
	require.Contains(t, maps, "libopenblas")
	for _, lib := range []string{"liblapacke", "liblapack.so", "libtmglib"} {
		require.False(t, strings.Contains(maps, lib), "%s is mapped", lib)
	}
}
