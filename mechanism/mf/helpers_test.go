package mf

import (
	"errors"
	"runtime"
	"testing"
)

func errorsIsInput(err error) bool { return errors.Is(err, ErrInput) }

// allocatesUnderHalfSquare runs phase f of a solver of size n and fails t
// when f fails or allocates more than half of one n×n matrix of float64:
// the bound the iteration-phase memory tests hold each phase to.
func allocatesUnderHalfSquare(t *testing.T, n int, name string, f func() bool) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if !f() {
		t.Fatalf("%s failed", name)
	}
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(n*n*8/2); got > limit {
		t.Errorf("%s allocated %d bytes, over n²/2 floats (%d)", name, got, limit)
	}
}
