package tables

import (
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/ledger"
	"github.com/dpsolve/dpsolve/mechanism/noise"
	"github.com/dpsolve/dpsolve/mechanism/release"
)

// Budget is the privacy budget of a release.
type Budget = release.Budget

// pure reports whether b is pure ε-DP (Laplace noise, L1 sensitivity).
func pure(b Budget) bool { return b.Kind == release.Laplace }

// calibration is everything the sampler needs for rows values of the given
// sensitivity under a budget.
type calibration struct {
	laplace                   bool
	rows                      int
	sens, grid, snapped       float64
	calibrated, scale, varnce float64
}

// calibrateFor calibrates the noise for rows values of sensitivity sens.
func calibrateFor(b Budget, sens float64, rows int) (calibration, error) {
	c := calibration{laplace: pure(b), rows: rows, sens: sens}
	scale := func(s float64) (float64, error) {
		switch b.Kind {
		case release.Laplace:
			return calibrate.LaplaceScale(b.Epsilon, s)
		case release.ZCDP:
			return calibrate.ZCDPSigma(b.Rho, s)
		}
		return calibrate.GaussianSigma(b.Epsilon, b.Delta, s)
	}
	s0, err := scale(sens)
	if err != nil {
		return c, errorf("%v", err)
	}
	if c.grid, err = noise.Grid(s0); err != nil {
		return c, errorf("%v", err)
	}
	if c.laplace {
		c.snapped = noise.SnappedL1Sensitivity(sens, c.grid, rows)
	} else {
		c.snapped = noise.SnappedL2Sensitivity(sens, c.grid, rows)
	}
	if c.calibrated, err = scale(c.snapped); err != nil {
		return c, errorf("%v", err)
	}
	if c.scale, err = noise.EffectiveScale(c.calibrated, c.grid); err != nil {
		return c, errorf("%v", err)
	}
	c.varnce = c.scale * c.scale
	if c.laplace {
		c.varnce *= 2
	}
	return c, nil
}

// add draws the noise into values.
func (c calibration) add(src *noise.Sampler, values []float64) error {
	var used float64
	var err error
	if c.laplace {
		used, err = src.AddLaplace(values, c.calibrated, c.grid)
	} else {
		used, err = src.AddGaussian(values, c.calibrated, c.grid)
	}
	if err != nil {
		return fmt.Errorf("tables: %w", err)
	}
	if used != c.scale {
		return fmt.Errorf("tables: internal error: sampled scale %v, calibrated %v", used, c.scale)
	}
	return nil
}

// unitSigma is the Gaussian scale of a unit-L2-sensitivity query under b
// (the marginals plans' normalisation).
func unitSigma(b Budget) (float64, error) {
	switch b.Kind {
	case release.ZCDP:
		return calibrate.ZCDPSigma(b.Rho, 1)
	case release.Gaussian:
		return calibrate.GaussianSigma(b.Epsilon, b.Delta, 1)
	}
	return 0, errorf("marginals plans add Gaussian noise; give rho or epsilon with delta (pure epsilon-DP needs a kron or union plan under --privacy pure)")
}

// Charge returns what a release under b costs in a budget ledger.
func Charge(b Budget) ledger.Charge {
	switch b.Kind {
	case release.ZCDP:
		return ledger.Charge{Kind: "zcdp", Rho: b.Rho}
	case release.Laplace:
		return ledger.Charge{Kind: "pure", Epsilon: b.Epsilon}
	}
	return ledger.Charge{Kind: "approx", Epsilon: b.Epsilon, Delta: b.Delta}
}

// mechanismName describes the noise for outputs.
func mechanismName(b Budget) string {
	switch b.Kind {
	case release.ZCDP:
		return "discrete Gaussian (rho-zCDP)"
	case release.Laplace:
		return "discrete Laplace (pure epsilon-DP)"
	}
	return "discrete Gaussian, analytic calibration ((epsilon,delta)-DP)"
}
