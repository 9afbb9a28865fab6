package calibrate

import (
	"fmt"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/noise"
)

// NoiseKind names an additive noise distribution.
type NoiseKind string

const (
	// Laplace noise, calibrated to L1 sensitivity (pure ε-DP).
	Laplace NoiseKind = "laplace"
	// Gaussian noise, calibrated to L2 sensitivity ((ε,δ)-DP or ρ-zCDP).
	Gaussian NoiseKind = "gaussian"
)

// Scale returns the continuous noise scale that makes a query of the given
// sensitivity meet b: the Laplace b = Δ₁/ε (LaplaceScale), the analytic
// Gaussian σ (GaussianSigma) or the zCDP σ = Δ₂/√(2ρ) (ZCDPSigma). The
// sensitivity is Δ₁ for pure ε-DP and Δ₂ otherwise (b.Noise() says which).
// It ignores the sampler's grid: Calibrate gives the scale actually used.
func Scale(b Budget, sensitivity float64) (float64, error) {
	if err := b.Validate(); err != nil {
		return 0, err
	}
	switch b.Kind {
	case Pure:
		return LaplaceScale(b.Epsilon, sensitivity)
	case Concentrated:
		return ZCDPSigma(b.Rho, sensitivity)
	}
	return GaussianSigma(b.Epsilon, b.Delta, sensitivity)
}

// Calibration is everything a sampler needs to release a vector of Rows
// values with sensitivity Sensitivity under Budget, as package noise
// samples it: the values are snapped to the power-of-two Grid, which costs
// sensitivity (SnappedSensitivity = Δ₂ + g√p or Δ₁ + g·p), the noise scale
// is calibrated for the snapped sensitivity (Calibrated) and the sampler
// rounds it up to a whole number of grid steps (Scale). Variance is the
// per-value variance of that noise (Scale² or 2·Scale²).
type Calibration struct {
	// Budget is the privacy budget met.
	Budget Budget
	// Noise is the distribution (Laplace for pure ε-DP, Gaussian otherwise).
	Noise NoiseKind
	// Rows is the number p of noisy values.
	Rows int
	// Sensitivity is the query's sensitivity before snapping: Δ₁ (Laplace)
	// or Δ₂ (Gaussian).
	Sensitivity float64
	// Grid is the snapping granularity g = noise.Grid(scale at Sensitivity).
	Grid float64
	// SnappedSensitivity is the sensitivity after snapping, which the noise
	// is calibrated for.
	SnappedSensitivity float64
	// Calibrated is the continuous scale (σ or b) for SnappedSensitivity.
	Calibrated float64
	// Scale is the scale the sampler uses, ⌈Calibrated/g⌉·g ≥ Calibrated.
	Scale float64
	// Variance is the noise variance per value: Scale² (Gaussian) or
	// 2·Scale² (Laplace).
	Variance float64
}

// Calibrate is the one calibration step every release path uses: grid,
// snapped sensitivity, calibrated and sampled scale and variance for rows
// values of the given sensitivity (Δ₁ for pure ε-DP, Δ₂ otherwise) under b.
// Add then draws the noise.
func Calibrate(b Budget, sensitivity float64, rows int) (Calibration, error) {
	if err := b.Validate(); err != nil {
		return Calibration{}, err
	}
	if rows <= 0 {
		return Calibration{}, inputerr.Errorf("calibrate", "number of noisy values must be positive, got %d", rows)
	}
	c := Calibration{Budget: b, Noise: b.Noise(), Rows: rows, Sensitivity: sensitivity}
	s0, err := Scale(b, sensitivity)
	if err != nil {
		return Calibration{}, err
	}
	if c.Grid, err = noise.Grid(s0); err != nil {
		return Calibration{}, err
	}
	if c.Noise == Laplace {
		c.SnappedSensitivity = noise.SnappedL1Sensitivity(sensitivity, c.Grid, rows)
	} else {
		c.SnappedSensitivity = noise.SnappedL2Sensitivity(sensitivity, c.Grid, rows)
	}
	if c.Calibrated, err = Scale(b, c.SnappedSensitivity); err != nil {
		return Calibration{}, err
	}
	if c.Scale, err = noise.EffectiveScale(c.Calibrated, c.Grid); err != nil {
		return Calibration{}, err
	}
	c.Variance = c.Scale * c.Scale
	if c.Noise == Laplace {
		c.Variance *= 2
	}
	return c, nil
}

// Add adds the calibrated noise to values (len Rows) in place, drawing from
// src, and returns an error (leaving values unchanged) when the source fails
// or values do not match the calibration.
func (c Calibration) Add(src noise.Source, values []float64) error {
	if noise.Missing(src) {
		return inputerr.Errorf("calibrate", "nil noise source")
	}
	if len(values) != c.Rows {
		return inputerr.Errorf("calibrate", "%d values for a calibration of %d", len(values), c.Rows)
	}
	var used float64
	var err error
	switch c.Noise {
	case Laplace:
		used, err = src.AddLaplace(values, c.Calibrated, c.Grid)
	case Gaussian:
		used, err = src.AddGaussian(values, c.Calibrated, c.Grid)
	default:
		return inputerr.Errorf("calibrate", "calibration has no noise kind (build it with Calibrate)")
	}
	if err != nil {
		return err
	}
	if used != c.Scale { // both are ⌈Calibrated/g⌉·g; a mismatch is a bug in the source
		return fmt.Errorf("calibrate: noise source used scale %v, calibrated %v", used, c.Scale)
	}
	return nil
}
