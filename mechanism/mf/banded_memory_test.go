package mf

import (
	"context"
	"testing"
)

// The banded solver's n×n storage is allocated through square only (F, T
// or G, X⁻¹, M and one work matrix; the iterate, the step, the CG vectors
// and X's factor are bands), so its count plus the caller's V bounds the
// peak in n×n matrices: the budget is 8 (n = 8192 in 8·8·8192² bytes
// = 4 GiB), with the column preconditioner's n·(b−1)² numbers (capped at
// max(n², 2¹⁹)) on top: at n = 8192, b = 64 under half an n×n matrix.
func TestMFBandedSolverSquares(t *testing.T) {
	for _, c := range []struct {
		n, b int
		beta float64
	}{{64, 8, 0}, {96, 12, 0.9}, {200, 24, 0}} {
		w, err := Momentum(c.n, c.beta, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := newBandSolver(w.V, c.b, nil)
		if !ok {
			t.Fatal("factoring V failed")
		}
		s.start()
		res := &Result{}
		if err := s.iterate(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		if gap := (res.Objective - res.LowerBound) / res.Objective; !(gap <= 1e-8) {
			t.Fatalf("%+v: gap %g, the run did not certify", c, gap)
		}
		if got := s.squares + 1; got > 8 {
			t.Errorf("%+v: %d n×n matrices with V, budget 8", c, got)
		}
		if s.squares != 5 {
			t.Errorf("%+v: %d solver matrices, the accounting in the doc says 5", c, s.squares)
		}
		if got, want := len(s.pc.inv), c.n*(c.b-1)*(c.b-1); got > want {
			t.Errorf("%+v: preconditioner holds %d numbers, over n·(b−1)² = %d", c, got, want)
		}
	}
}

// An iteration's phases run in the solver's own matrices: with b² well
// under n each allocates under half of one n×n matrix (bands, the
// LAPACK routines' workspaces, the certificate's multipliers), where a
// fresh n×n work matrix or a dense Newton direction would exceed it.
func TestMFBandedIterationAllocatesNoSquare(t *testing.T) {
	const n, b = 512, 8
	w, err := Prefix(n)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := newBandSolver(w.V, b, nil)
	if !ok {
		t.Fatal("factoring V failed")
	}
	s.start()
	if _, ok := bandObjective(s.f, s.x, s.fac, s.t); !ok {
		t.Fatal("start is not definite")
	}
	measure := func(name string, f func() bool) { allocatesUnderHalfSquare(t, n, name, f) }
	measure("gram", func() bool { s.gram(); return true })
	measure("inverse", s.inverse)
	measure("newton step", func() bool { return s.newtonStep(1e-8) > 0 })
	measure("line search", func() bool { _, ok := s.lineSearch(1e300, 1); return ok })
	measure("certificate", func() bool { s.gram(); _, ok := s.bound(); return ok })
	measure("result", func() bool { x, c := s.result(); return x != nil && c != nil })
}
