//go:build cgo && !purego && linux

package native

import (
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/internal/testkit"
)

// TestPoolSleepsWhenIdle checks that OpenBLAS's pool threads stop spinning
// soon after a threaded call (spinLog2): over 200 ms of idle time after a
// pooled product, the process uses almost no CPU (measured: 0.2 ms). With OpenBLAS's default
// (2²⁸ cycles, about 0.1 s at 2.6 GHz) its pool thread spins through half
// of that interval.
func TestPoolSleepsWhenIdle(t *testing.T) {
	if Threads() < 2 {
		t.Skip("one kernel thread: no pool")
	}
	n := 512
	a := make([]float64, n*n)
	c := make([]float64, n*n)
	for i := range a {
		a[i] = float64(i%7) - 3
	}
	BLAS.Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1, a, n, a, n, 0, c, n)
	c0 := testkit.ProcessCPU()
	time.Sleep(200 * time.Millisecond)
	idle := testkit.ProcessCPU() - c0
	t.Logf("CPU over 200 ms idle after a pooled DGEMM: %v", idle)
	if idle > 10*time.Millisecond {
		t.Errorf("the pool kept spinning: %v of CPU over 200 ms idle", idle)
	}
}
