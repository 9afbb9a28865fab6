package mf

import (
	"context"
	"testing"
)

// The fixed-epoch solver's n×n storage is allocated through square only
// (the eigensolver borrows e.w, the certificate writes F·R into it, K is
// formed entry by entry or in the free e.s, the preconditioner's row blocks
// go to e.w and e.t from n ≥ 512), so its count plus the caller's V bounds
// the peak in n×n matrices: the budget is 8 (n = 8192 in 8·8·8192² bytes
// = 4 GiB).
func TestMFEpochSolverSquares(t *testing.T) {
	for _, c := range []struct{ n, k int }{{64, 4}, {96, 8}, {256, 4}} {
		w, err := Prefix(c.n)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := newEpochSolver(w.V, c.k, nil)
		if !ok {
			t.Fatal("factoring V failed")
		}
		e.start()
		res := &Result{}
		if err := e.iterate(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		if res.Gap = (res.Objective - res.LowerBound) / res.Objective; !(res.Gap <= 1e-8) {
			t.Fatalf("n=%d k=%d: gap %g, the run did not certify", c.n, c.k, res.Gap)
		}
		if got := e.squares + 1; got > 8 {
			t.Errorf("n=%d k=%d: %d n×n matrices with V, budget 8", c.n, c.k, got)
		}
		if e.squares != 7 {
			t.Errorf("n=%d k=%d: %d solver matrices, the accounting in the doc says 7", c.n, c.k, e.squares)
		}
	}
}
