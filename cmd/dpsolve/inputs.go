package main

// Input rules shared by the commands that take a privacy budget or data:
// the usable ranges of ε, δ and ρ, and what counts as a count.

import (
	"fmt"
	"io"
	"math"

	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// mechanismFlag parses the value of a --mechanism flag through
// calibrate.ParseMechanism, the one parser, with one usage error for every
// command: it returns the noise and the privacy definition the budget is
// stated under. offered are the definitions the command supports (none:
// all); help text comes from calibrate.MechanismUsage over the same list.
func mechanismFlag(s string, offered ...calibrate.Kind) (calibrate.NoiseKind, calibrate.Kind, error) {
	noise, kind, err := calibrate.ParseMechanism(s, offered...)
	if err == nil {
		return noise, kind, nil
	}
	why := "unknown mechanism"
	if _, k, known := calibrate.ParseMechanism(s); known == nil {
		why = fmt.Sprintf("this command does not offer %s", calibrate.MechanismName(k))
	}
	return "", "", usageErrorf("--mechanism must be %s, got %q (%s)", calibrate.MechanismNames(offered...), s, why)
}

// The privacy parameters the commands accept. Inside these ranges every
// calibration round-trips (the σ it returns reaches the requested δ to a
// relative 1e-10; TestCalibrationRangeRoundTrips); outside them the
// analytic Gaussian calibration underflows (σ → 0 near ε = 1e100, NaN near
// ε = 1e155) and no real release has a use for them: ε = 1e4 already
// allows a likelihood ratio of e^10000.
const (
	epsMin, epsMax = 1e-6, 1e4
	rhoMin, rhoMax = 1e-12, 5e7 // ρ ≈ ε²/2 over the same range
)

// checkPrivacyFlags validates the budget flags of the privacy definition
// kind (from mechanismFlag, or from the flags given) before any work,
// naming a missing flag as missing and a value outside the usable range
// with that range.
func checkPrivacyFlags(kind calibrate.Kind, eps, delta, rho float64) error {
	mech := calibrate.MechanismName(kind)
	switch kind {
	case calibrate.Pure, calibrate.Approx:
		if eps == 0 {
			return usageErrorf("--eps is missing or 0: --mechanism %s needs ε > 0 (usable range [%g, %g])", mech, epsMin, epsMax)
		}
		if err := checkRange("--eps", eps, epsMin, epsMax); err != nil {
			return err
		}
		if kind == calibrate.Approx {
			if delta == 0 {
				return usageErrorf("--delta is missing or 0: --mechanism %s needs δ in (0,1), e.g. 1e-6 (below 1/n for n records)", mech)
			}
			if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
				return usageErrorf("--delta must lie in (0,1), got %v", delta)
			}
		}
	case calibrate.Concentrated:
		if rho == 0 {
			return usageErrorf("--rho is missing or 0: --mechanism %s needs ρ > 0 (usable range [%g, %g])", mech, rhoMin, rhoMax)
		}
		if err := checkRange("--rho", rho, rhoMin, rhoMax); err != nil {
			return err
		}
	}
	return nil
}

func checkRange(flag string, v, lo, hi float64) error {
	if !(v > 0) {
		return usageErrorf("%s must be positive, got %v (usable range [%g, %g])", flag, v, lo, hi)
	}
	if v < lo || v > hi {
		return usageErrorf("%s %v is outside the usable range [%g, %g] (beyond it the noise calibration over- or underflows)", flag, v, lo, hi)
	}
	return nil
}

// checkCounts enforces that a histogram holds counts: finite, non-negative
// (release.CheckData checks those) and whole numbers. The mechanisms are
// calibrated for neighbouring datasets that differ by one record, i.e. one
// cell changing by 1; fractional cells suggest the data are not counts
// (weights, rates, means), for which a change of 1 may not bound one
// person's influence. allow accepts them with a warning that says so.
func checkCounts(x []float64, path string, allow bool, stderr io.Writer) error {
	first, count := -1, 0
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: cell %d is %v: counts must be finite", path, i, v)
		}
		if v != math.Trunc(v) {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if count == 0 {
		return nil
	}
	if !allow {
		return fmt.Errorf("%s: %d cells are not whole numbers (cell %d is %v): the privacy guarantee is for counts, where one person changes one cell by 1; pass --allow-fractional if one person still changes at most one cell by at most 1", path, count, first, x[first])
	}
	fmt.Fprintf(stderr, "dpsolve: note: %d cells of %s are not whole numbers (--allow-fractional): the guarantee assumes unit sensitivity, i.e. that one person changes one cell by at most 1\n", count, path)
	return nil
}

// regularizationReason says why solve regularized: Newton does so on its
// own only for a singular V, yuan2016 always does (Algorithm 1 of Yuan et al.,
// KDD 2016, perturbs every V), and an explicit --regularization is the user's choice.
func regularizationReason(method newton.Method, flag float64) string {
	switch {
	case flag > 0:
		return "--regularization was given"
	case method == newton.MethodYuan2016:
		return "the yuan2016 method always regularizes V"
	default:
		return "V is singular"
	}
}
