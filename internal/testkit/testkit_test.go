package testkit

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

// ExplicitGram against gonum's product WᵀW (a second algorithm) on a small
// matrix with integer entries, where both are exact.
func TestExplicitGram(t *testing.T) {
	w := mat.NewDense(3, 2, []float64{1, 2, -3, 4, 0, 5})
	var want mat.Dense
	want.Mul(w.T(), w)
	got := ExplicitGram(w)
	if !mat.Equal(got, &want) {
		t.Fatalf("ExplicitGram = %v, want %v", mat.Formatted(got), mat.Formatted(&want))
	}
}

// CPUTime grows while the process computes (on unix; elsewhere it is 0).
func TestCPUTimeGrows(t *testing.T) {
	c0 := ProcessCPU()
	x := 0.0
	for i := 0; i < 50_000_000; i++ {
		x += float64(i & 7)
	}
	if x == 0 {
		t.Fatal("loop optimized away")
	}
	if c1 := ProcessCPU(); c1 < c0 {
		t.Fatalf("CPU time went back: %v then %v", c0, c1)
	} else if c0 != 0 && c1 == c0 {
		t.Fatalf("CPU time did not grow over a busy loop: %v", c0)
	}
}
