package tables

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
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
	if n < 1 {
		return b, errorf("a budget is split into at least 1 part, got %d", n)
	}
	return b.Split(n)
}

// mechanismName describes the noise for outputs.
func mechanismName(b Budget) string {
	switch b.Kind() {
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
		return 0, errorf("the residual marginals plan adds Gaussian noise; give rho, or epsilon with delta (for pure epsilon-DP use the pure marginals plan: --privacy pure)")
	}
	s, err := calibrate.Scale(b, 1)
	if err != nil {
		return 0, fmt.Errorf("tables: %w", err)
	}
	return s, nil
}

// SplitTerms divides b over the terms of a workload in proportion to
// shares (one positive share per term; nil or empty: equal shares) and
// returns each term's budget. Term t gets the fraction s_t = shares[t]/Σ
// shares: ρ·s_t under zCDP, ε·s_t for pure ε-DP and (ε·s_t, δ·s_t) for
// (ε,δ)-DP. Releasing each term with its own strategy under its own budget
// then spends b in total by composition: ρ-zCDP adds over the terms' independent
// measurements, and so do ε (pure) and (ε,δ) (basic composition), so
// Σ_t b_t = b up to rounding.
func SplitTerms(b Budget, shares []float64, terms int) ([]Budget, error) {
	if b.IsZero() {
		return nil, calibrate.ErrNoBudget
	}
	if terms < 1 {
		return nil, errorf("a budget is split over at least 1 term, got %d", terms)
	}
	if len(shares) == 0 {
		shares = make([]float64, terms)
		for i := range shares {
			shares[i] = 1
		}
	}
	if len(shares) != terms {
		return nil, errorf("%d budget shares for the %d terms of the spec (give one per term, in the spec's order)", len(shares), terms)
	}
	// Shares are scaled by the largest first, so that their sum cannot
	// overflow (1e308 + 1e308 is +Inf, which made every share 0).
	largest := 0.0
	for i, s := range shares {
		if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
			return nil, errorf("budget share %d is %v; every term's share must be positive and finite", i+1, s)
		}
		largest = math.Max(largest, s)
	}
	total := 0.0
	for _, s := range shares {
		total += s / largest
	}
	out := make([]Budget, terms)
	for i, s := range shares {
		frac := s / largest / total
		var err error
		if out[i], err = b.Share(frac); err != nil || frac < 1e-15 {
			if err == nil {
				err = fmt.Errorf("below the 1e-15 a term can usefully be given")
			}
			return nil, errorf("term %d's share %g is %.3g of the whole budget (the shares add up to %.6g times the largest, %g): %v; give shares of comparable size", i+1, s, frac, total, largest, err)
		}
	}
	return out, nil
}
