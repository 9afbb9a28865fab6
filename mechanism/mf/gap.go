package mf

import (
	"fmt"
	"math"
)

// BoundError reports a lower bound above a feasible objective by more than
// rounding: weak duality makes every certificate at most every feasible
// objective, so such a pair means the certificate or the iterate (for
// example one off the schema's feasible set) is wrong, and the solve is
// not certified.
type BoundError struct {
	// N is the number of steps; Objective and LowerBound the offending
	// pair; Gap is (Objective − LowerBound)/Objective, below −Allowance.
	N                                     int
	Objective, LowerBound, Gap, Allowance float64
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("mf: lower bound %.17g above the objective %.17g (relative gap %.3g, rounding allows −%.3g at n = %d): certificate or iterate is wrong, not certified",
		e.LowerBound, e.Objective, e.Gap, e.Allowance, e.N)
}

// gapAllowance is how far below zero a correct relative gap may fall by
// rounding alone at n steps: 16·n·ε. The objective tr(V X⁻¹) is a sum of
// n² squared entries of F·U⁻¹ and the bound 2·Σσᵢ − Σyᵢ a difference of
// two sums of n terms, each of magnitude up to twice the objective at the
// optimum (there 2·Σσᵢ = 2·obj and Σyᵢ = obj). Summing m terms of one
// sign in floating point errs by at most about m·ε of their sum (Higham,
// Accuracy and Stability of Numerical Algorithms, §4.2), and the backward-
// stable factorizations behind the terms (Cholesky, eigen- and singular
// values) add errors of the same order in n·ε·‖·‖, so the computed gap of
// an exact pair lies within a few n·ε × (1 + 2 + 1) of zero; 16·n·ε
// (1.8e-12 at n = 512, 1.5e-11 at n = 4096) is that with room, four
// orders below the default tolerance 1e-8, and far above what the
// certified solves show (their gaps are positive, ≥ 6e-14).
func gapAllowance(n int) float64 { return 16 * float64(n) * 0x1p-52 }

// CheckBound returns a *BoundError when lower, claimed as a lower bound on
// the minimum of tr(V X⁻¹)·sens² over a schema's feasible set at n steps,
// exceeds the feasible objective obj beyond rounding (gapAllowance); nil
// otherwise. A non-finite or non-positive obj is an error too: no gap can
// be certified against it.
func CheckBound(obj, lower float64, n int) error {
	if !(obj > 0) || math.IsInf(obj, 0) {
		return fmt.Errorf("mf: objective %v is not a positive finite number: not certified", obj)
	}
	gap, allow := (obj-lower)/obj, gapAllowance(n)
	if gap < -allow {
		return &BoundError{N: n, Objective: obj, LowerBound: lower, Gap: gap, Allowance: allow}
	}
	return nil
}

// certified is the solvers' convergence test: the relative gap of obj and
// lower at most tol, and an error (not convergence) when lower is above
// obj beyond rounding.
func certified(obj, lower float64, n int, tol float64) (bool, error) {
	if err := CheckBound(obj, lower, n); err != nil {
		return false, err
	}
	return (obj-lower)/obj <= tol, nil
}

// boundHook, when non-nil, replaces every certificate the fixed-epoch and
// banded solvers compute by boundHook(bound): only tests set it, to plant
// a wrong certificate and check that it is never reported as certified.
var boundHook func(float64) float64

func hooked(b float64) float64 {
	if boundHook != nil {
		return boundHook(b)
	}
	return b
}
