package calibrate

import (
	"fmt"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// NoiseKind is dpsolve's one noise model: the additive distribution and so
// the sensitivity norm a strategy is normalized to (Norm). It is distinct
// from Kind, the privacy definition of a budget; Budget.Noise maps one to
// the other. Every package and flag that chooses between Laplace and
// Gaussian noise takes a NoiseKind (docs/architecture.md, "One noise
// model").
type NoiseKind string

const (
	// Laplace noise, calibrated to L1 sensitivity (pure ε-DP).
	Laplace NoiseKind = "laplace"
	// Gaussian noise, calibrated to L2 sensitivity ((ε,δ)-DP or ρ-zCDP).
	Gaussian NoiseKind = "gaussian"
)

// ParseNoiseKind maps "laplace" or "gaussian" (any case) to its NoiseKind;
// any other name is bad input.
func ParseNoiseKind(s string) (NoiseKind, error) {
	switch k := NoiseKind(lower(s)); k {
	case Laplace, Gaussian:
		return k, nil
	}
	return "", inputerr.Errorf("calibrate", "unknown noise %q (want laplace or gaussian)", s)
}

// Norm returns the sensitivity norm the noise is calibrated to: 1 for
// Laplace, 2 for Gaussian, 0 for an unknown kind.
func (k NoiseKind) Norm() int {
	switch k {
	case Laplace:
		return 1
	case Gaussian:
		return 2
	}
	return 0
}

// Scale returns the continuous noise scale that makes a query of the given
// sensitivity meet b: the Laplace b = Δ₁/ε (LaplaceScale), the analytic
// Gaussian σ (GaussianSigma) or the zCDP σ = Δ₂/√(2ρ) (ZCDPSigma). The
// sensitivity is Δ₁ for pure ε-DP and Δ₂ otherwise (b.Noise() says which).
// It ignores the sampler's grid: Calibrate gives the scale actually used.
func Scale(b Budget, sensitivity float64) (float64, error) {
	if b.IsZero() {
		return 0, ErrNoBudget
	}
	switch b.kind {
	case Pure:
		return LaplaceScale(b.eps, sensitivity)
	case Concentrated:
		return ZCDPSigma(b.rho, sensitivity)
	}
	return GaussianSigma(b.eps, b.delta, sensitivity)
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
	if b.IsZero() {
		return Calibration{}, ErrNoBudget
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

// Scaled is the calibration of a pure ε-DP Laplace release whose coordinates
// have their own scales: a query whose neighbouring inputs differ by δ with
// Σ_k |δ_k|/b_k ≤ ε at the nominal scales b_k (functional perturbation's
// weighted adjacency). Snapping coordinate k to its grid g_k can move
// neighbours apart by up to g_k more, so every scale is inflated by the same
// factor 1+τ, τ = S/(ε − S), S = Σ_k g_k/b_k, for which
// Σ_k (|δ_k| + g_k)/(b_k(1+τ)) ≤ (ε + S)/(1+τ) = (ε² − S²)/ε ≤ ε.
type Scaled struct {
	// Budget is the pure ε-DP budget met.
	Budget Budget
	// Nominal are the b_k before the snapping allowance.
	Nominal []float64
	// Grids are the g_k = max(noise.Grid(b_k), minGrid).
	Grids []float64
	// Scales are the b_k(1+τ) the sampler is asked for.
	Scales []float64
	// Inflation is τ.
	Inflation float64
}

// CalibrateScaled is Calibrate for per-coordinate Laplace scales (see
// Scaled): nominal are the b_k, minGrid a floor on every grid (0: none;
// functional uses it to keep clamped values within the samplers' integer
// range). It fails when a scale is below the sampler's resolution or the
// snapping allowance S reaches ε/2.
func CalibrateScaled(b Budget, nominal []float64, minGrid float64) (Scaled, error) {
	if b.IsZero() {
		return Scaled{}, ErrNoBudget
	}
	if b.kind != Pure {
		return Scaled{}, inputerr.Errorf("calibrate", "per-coordinate Laplace scales need a pure ε-DP budget, got %v", b)
	}
	if len(nominal) == 0 {
		return Scaled{}, inputerr.Errorf("calibrate", "no scales to calibrate")
	}
	c := Scaled{Budget: b, Nominal: append([]float64(nil), nominal...), Grids: make([]float64, len(nominal)), Scales: make([]float64, len(nominal))}
	var s float64
	for k, bk := range nominal {
		g, err := noise.Grid(bk) // 2^(⌊log₂ b_k⌋−40) ≤ b_k·2⁻⁴⁰
		if err != nil {
			return Scaled{}, err
		}
		g = max(g, minGrid)
		if g > bk/2 {
			return Scaled{}, inputerr.Errorf("calibrate", "noise scale b_%d = %v is below the sampler's resolution", k+1, bk)
		}
		c.Grids[k] = g
		s += g / bk
	}
	if s >= b.eps/2 {
		return Scaled{}, inputerr.Errorf("calibrate", "ε = %v is too small for the sampler's resolution (snapping costs %v)", b.eps, s)
	}
	c.Inflation = s / (b.eps - s)
	for k, bk := range nominal {
		c.Scales[k] = bk * (1 + c.Inflation)
	}
	return c, nil
}

// Add adds coordinate k's Laplace noise to v[k] for every k, drawing from
// src, and leaves v unchanged on error.
func (c Scaled) Add(src noise.Source, v []float64) error {
	if noise.Missing(src) {
		return inputerr.Errorf("calibrate", "nil noise source")
	}
	if len(v) != len(c.Scales) {
		return inputerr.Errorf("calibrate", "%d values for a calibration of %d", len(v), len(c.Scales))
	}
	out := append([]float64(nil), v...)
	for k := range out {
		if _, err := src.AddLaplace(out[k:k+1], c.Scales[k], c.Grids[k]); err != nil {
			return fmt.Errorf("coordinate %d: %w", k, err)
		}
	}
	copy(v, out)
	return nil
}
