// Package budgettest builds calibrate.Budgets from the constant, valid
// parameters that tests and benchmarks use, so that a test reads
// budgettest.ZCDP(0.5) where the library's constructors return an error
// too. Each function panics if its parameters are invalid: that is a bug in
// the calling test, never input from a user, and it fails the test that
// made it. Tests of invalid budgets call calibrate's constructors.
package budgettest

import "github.com/dpsolve/dpsolve/privacy/calibrate"

func must(b calibrate.Budget, err error) calibrate.Budget {
	if err != nil {
		panic("budgettest: " + err.Error())
	}
	return b
}

// PureDP is calibrate.PureDP(eps) for a valid ε.
func PureDP(eps float64) calibrate.Budget { return must(calibrate.PureDP(eps)) }

// ApproxDP is calibrate.ApproxDP(eps, delta) for a valid (ε,δ).
func ApproxDP(eps, delta float64) calibrate.Budget { return must(calibrate.ApproxDP(eps, delta)) }

// ZCDP is calibrate.ZCDP(rho) for a valid ρ.
func ZCDP(rho float64) calibrate.Budget { return must(calibrate.ZCDP(rho)) }
