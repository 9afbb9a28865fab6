// Package testkit holds the helpers that several packages' tests share: the
// process's CPU time (for measurements on a shared machine, where wall time
// counts the other jobs too) and reference Grams computed by plain loops,
// independent of the structured code under test. Only _test.go files may
// import it (the layer test of the tree checks that no other file does).
package testkit

import (
	"time"

	"gonum.org/v1/gonum/mat"
)

// ExplicitGram returns WᵀW of the m×n matrix w by a plain triple loop
// (exact up to the order of the m-term sums), the reference the structured
// Grams of workloads, strategies and domains are checked against.
func ExplicitGram(w mat.Matrix) *mat.SymDense {
	m, n := w.Dims()
	v := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s := 0.0
			for r := 0; r < m; r++ {
				s += w.At(r, i) * w.At(r, j)
			}
			v.SetSym(i, j, s)
		}
	}
	return v
}

// ProcessCPU returns the process's user + system CPU time so far.
func ProcessCPU() time.Duration {
	u, s := CPUTime()
	return u + s
}

// CPUSeconds returns ProcessCPU in seconds.
func CPUSeconds() float64 { return ProcessCPU().Seconds() }
