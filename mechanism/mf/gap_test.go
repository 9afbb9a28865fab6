package mf

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/status"
)

func TestCheckBound(t *testing.T) {
	const n = 64
	allow := gapAllowance(n)
	cases := []struct {
		name       string
		obj, lower float64
		bound      bool // want a *BoundError
		other      bool // want another error
	}{
		{"positive gap", 100, 99, false, false},
		{"zero gap", 100, 100, false, false},
		{"rounding", 100, 100 * (1 + 0.5*allow), false, false},
		{"beyond rounding", 100, 100 * (1 + 2*allow), true, false},
		{"far above", 100, 101, true, false},
		{"no bound yet", 100, math.Inf(-1), false, false},
		{"zero objective", 0, -1, false, true},
		{"NaN objective", math.NaN(), 1, false, true},
		{"infinite objective", math.Inf(1), 1, false, true},
	}
	for _, c := range cases {
		err := CheckBound(c.obj, c.lower, n)
		var be *BoundError
		switch {
		case c.bound && !errors.As(err, &be):
			t.Errorf("%s: got %v, want a *BoundError", c.name, err)
		case c.bound && !(be.Gap < -be.Allowance && be.N == n):
			t.Errorf("%s: error fields %+v", c.name, be)
		case c.other && (err == nil || errors.As(err, &be)):
			t.Errorf("%s: got %v, want a non-bound error", c.name, err)
		case !c.bound && !c.other && err != nil:
			t.Errorf("%s: got %v, want nil", c.name, err)
		}
	}
}

// plantBound makes every certificate of the fixed-epoch and banded solvers
// a relative 1e-6 too high, so that near the optimum (gap ≪ 1e-6) the
// bound exceeds the feasible objective: a wrong certificate that must end
// the solve with a *BoundError, never with status Converged.
func plantBound(t *testing.T) {
	t.Helper()
	boundHook = func(b float64) float64 { return b + 1e-6*math.Abs(b) }
	t.Cleanup(func() { boundHook = nil })
}

func TestPlantedBoundNotCertified(t *testing.T) {
	w, err := Prefix(48)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Schema{
		{Kind: FixedEpoch, Epochs: 4},
		{Kind: MinSep, MinSep: 8},
	} {
		// Unplanted, the same solve converges: the error below comes from
		// the planted bound, not from the instance.
		res, err := Solve(context.Background(), w, s, nil)
		if err != nil || res.Status != status.Converged || res.Gap < 0 {
			t.Fatalf("%v unplanted: %v, %+v", s, err, res)
		}
		plantBound(t)
		res, err = Solve(context.Background(), w, s, nil)
		boundHook = nil
		var be *BoundError
		if !errors.As(err, &be) {
			t.Fatalf("%v with a bound above the objective: err %v, result %+v; want a *BoundError", s, err, res)
		}
		if res != nil && res.Status == status.Converged {
			t.Errorf("%v: reported converged with gap %g", s, res.Gap)
		}
		t.Logf("%v: %v", s, err)
	}
}

// TestFinishRefusesBoundAboveObjective: the last check in Solve, which
// also covers the single-participation path (newton's own status), turns a
// converged result whose bound is above its objective into Failed.
func TestFinishRefusesBoundAboveObjective(t *testing.T) {
	n := 4
	x := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		x.SetSym(i, i, 1)
	}
	res := &Result{Schema: Schema{Kind: Single}, X: x, Objective: 10, LowerBound: 10 * (1 + 1e-9), Status: status.Converged}
	var be *BoundError
	if err := finish(res); !errors.As(err, &be) || res.Status != status.Failed {
		t.Fatalf("finish: err %v, status %v; want a *BoundError and Failed", err, res.Status)
	}
	res = &Result{Schema: Schema{Kind: Single}, X: x, Objective: 10, LowerBound: 10 * (1 - 1e-9), Status: status.Converged}
	if err := finish(res); err != nil || res.Status != status.Converged {
		t.Fatalf("finish of a valid pair: err %v, status %v", err, res.Status)
	}
}
