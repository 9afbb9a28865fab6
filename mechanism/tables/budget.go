package tables

import (
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/ledger"
)

// Budget is the privacy budget of a release: dpsolve's one budget type.
type Budget = calibrate.Budget

// pure reports whether b is pure ε-DP (Laplace noise, L1 sensitivity).
func pure(b Budget) bool { return b.Noise() == calibrate.Laplace }

// Split returns the budget one of n equal releases (or terms) may spend so
// that the n together spend at most b: ρ/n under zCDP (ρ composes
// additively), ε/n for pure ε-DP and (ε/n, δ/n) for (ε,δ)-DP (basic
// composition). n = 1 returns b.
func Split(b Budget, n int) (Budget, error) {
	if err := b.Validate(); err != nil {
		return b, err
	}
	if n < 1 {
		return b, errorf("a budget is split into at least 1 part, got %d", n)
	}
	f := float64(n)
	switch b.Kind {
	case calibrate.Concentrated:
		return calibrate.ZCDP(b.Rho / f), nil
	case calibrate.Pure:
		return calibrate.PureDP(b.Epsilon / f), nil
	}
	return calibrate.ApproxDP(b.Epsilon/f, b.Delta/f), nil
}

// Charge returns what a release under b costs in a budget ledger.
func Charge(b Budget) ledger.Charge {
	switch b.Kind {
	case calibrate.Concentrated:
		return ledger.Charge{Kind: "zcdp", Rho: b.Rho}
	case calibrate.Pure:
		return ledger.Charge{Kind: "pure", Epsilon: b.Epsilon}
	}
	return ledger.Charge{Kind: "approx", Epsilon: b.Epsilon, Delta: b.Delta}
}

// mechanismName describes the noise for outputs.
func mechanismName(b Budget) string {
	switch b.Kind {
	case calibrate.Concentrated:
		return "discrete Gaussian (rho-zCDP)"
	case calibrate.Pure:
		return "discrete Laplace (pure epsilon-DP)"
	}
	return "discrete Gaussian, analytic calibration ((epsilon,delta)-DP)"
}

// unitSigma is the Gaussian scale of a unit-L2-sensitivity query under b
// (the marginals plans' normalisation).
func unitSigma(b Budget) (float64, error) {
	if pure(b) {
		return 0, errorf("marginals plans add Gaussian noise; give rho, or epsilon with delta (pure epsilon-DP needs a kron or union plan made with --privacy pure)")
	}
	s, err := calibrate.Scale(b, 1)
	if err != nil {
		return 0, fmt.Errorf("tables: %w", err)
	}
	return s, nil
}

// unitBudget is a placeholder budget for planning without releasing.
var unitBudget = calibrate.ZCDP(0.5)
