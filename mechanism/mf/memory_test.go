package mf

import (
	"context"
	"io"
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
)

// The fixed-epoch solver's n×n storage is allocated through square only
// (the eigensolver borrows e.w, the certificate writes F·R into it, K is
// formed entry by entry, the preconditioner's blocks go to e.t from
// n ≥ 512 at k = 4), so its count plus the caller's V bounds
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

// From n ≥ 512 (k = 4) an iteration's eigendecomposition, preconditioner
// and certificate run in the solver's own matrices: each allocates under
// half of one n×n matrix (the pattern blocks, the multipliers and the
// LAPACK routines' blocked workspaces, 2·64 columns of n at most, a
// quarter at n = 512), where a fresh eigensolver workspace or F·R would
// each exceed it; the preconditioner's blocks (36·7 by 7·128 numbers) live
// in e.t.
func TestMFEpochIterationAllocatesNoSquare(t *testing.T) {
	const n, k = 512, 4
	w, err := Prefix(n)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := newEpochSolver(w.V, k, nil)
	if !ok {
		t.Fatal("factoring V failed")
	}
	e.start()
	if _, ok := objective(e.f, e.x, e.u, e.t); !ok {
		t.Fatal("start is not definite")
	}
	pc := newBlockJacobi(e)
	if !pc.inT {
		t.Errorf("the preconditioner's blocks did not fit in e.t")
	}
	measure := func(name string, f func() bool) { allocatesUnderHalfSquare(t, n, name, f) }
	measure("whiten", e.whiten)
	measure("preconditioner", func() bool { pc.build(); return true })
	measure("certificate", func() bool { _, ok := e.certify(); return ok })
	measure("result", func() bool { x, c := e.result(); return x != nil && c != nil })
}

// After the solve the caller holds V, X and C and the evaluation works in
// blocks of rows: a built-in workload's construction allocates V and one
// block (under 1.5 n×n matrices), Result.Evaluate one block (a quarter of
// n×n at n = 1024, with the errors), and the strategy's C.npy is written
// a row at a time.
func TestMFAfterSolveAllocatesNoSquare(t *testing.T) {
	const n = 1024
	var w *Workload
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w, err := ParseWorkload("momentum:0.9,cooldown:100", n)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(n*n*8*3/2); got > limit {
		t.Errorf("the workload allocated %d bytes, over 1.5 n×n matrices (%d)", got, limit)
	}
	// C = the reversed Cholesky factor of I + ¼·(ones on the first
	// off-diagonals): any definite lower-triangular strategy does.
	x := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		x.SetSym(i, i, 1)
		if i > 0 {
			x.SetSym(i, i-1, 0.25)
		}
	}
	c, ok := LowerFactor(x)
	if !ok {
		t.Fatal("factor failed")
	}
	res := &Result{X: x, C: c, Sensitivity: Sensitivity{Squared: 1}}
	var ev *Evaluation
	allocatesUnderHalfSquare(t, n, "Result.Evaluate", func() bool { ev, err = res.Evaluate(w); return err == nil })
	// Against B = A·C⁻¹ by gonum's dense solve Cᵀ·Bᵀ = Aᵀ: C's condition
	// number is at most 3 (X's eigenvalues lie in [0.5, 1.5]), so 1e-10
	// relative is far above both computations' rounding.
	var bt mat.Dense
	if err := bt.Solve(c.T(), w.Matrix().T()); err != nil {
		t.Fatal(err)
	}
	for i := range ev.PerStep {
		col := mat.Col(nil, i, &bt)
		if want := floats.Dot(col, col); math.Abs(ev.PerStep[i]-want) > 1e-10*want {
			t.Fatalf("step %d: %v, dense %v", i, ev.PerStep[i], want)
		}
	}
	allocatesUnderHalfSquare(t, n, "C.npy", func() bool { return matio.WriteMatrixTo(io.Discard, c, matio.NPY) == nil })
}
