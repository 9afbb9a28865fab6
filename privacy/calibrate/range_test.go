package calibrate

import (
	"math"
	"testing"
)

// TestGaussianSigmaExtremeEpsilon: where the privacy-loss profile cannot be
// evaluated (ε ≳ 1e100 underflows σ, ε ≈ 1e155 made it NaN and σ silently
// came back as 1), GaussianSigma fails instead of returning an unchecked σ.
func TestGaussianSigmaExtremeEpsilon(t *testing.T) {
	for _, eps := range []float64{1e100, 1e155, 1e300} {
		if s, err := GaussianSigma(eps, 1e-6, 1); err == nil {
			t.Errorf("eps=%g: got sigma %v, want an error", eps, s)
		}
	}
}

// TestCalibrationRangeRoundTrips: across the range the CLI accepts
// (ε ∈ [1e-6, 1e4], δ ∈ [1e-300, 1)), the σ returned reaches the requested
// δ: GaussianDelta(σ) ≤ δ and, since σ is within ~1e-11 of the minimum, no
// more than a relative 1e-9 below it (GaussianDelta is an independent
// evaluation path: the forward formula rather than the root finder).
func TestCalibrationRangeRoundTrips(t *testing.T) {
	for _, eps := range []float64{1e-6, 1e-3, 1, 10, 1e3, 1e4} {
		for _, delta := range []float64{1e-300, 1e-100, 1e-20, 1e-6, 0.5, 0.999999} {
			s, err := GaussianSigma(eps, delta, 1)
			if err != nil {
				t.Fatalf("eps=%g delta=%g: %v", eps, delta, err)
			}
			d, err := GaussianDelta(s, eps, 1)
			if err != nil || math.IsNaN(d) {
				t.Fatalf("eps=%g delta=%g: delta(sigma) = %v, %v", eps, delta, d, err)
			}
			if r := d / delta; r > 1 || r < 1-1e-9 {
				t.Errorf("eps=%g delta=%g: delta(sigma)/delta = %v, want in [1-1e-9, 1]", eps, delta, r)
			}
		}
	}
}
