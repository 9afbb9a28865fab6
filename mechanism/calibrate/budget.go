package calibrate

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error this package returns for a bad budget
// or sensitivity; it is the one dpsolve-wide sentinel (internal/inputerr).
var ErrInput = inputerr.ErrInput

// Kind names a privacy notion.
type Kind string

const (
	// Pure is ε-differential privacy (δ = 0), met by Laplace noise.
	Pure Kind = "pure"
	// Approx is (ε,δ)-differential privacy, met by Gaussian noise calibrated
	// with the analytic Gaussian mechanism.
	Approx Kind = "approx"
	// Concentrated is ρ-zero-concentrated differential privacy (Bun &
	// Steinke 2016), met by Gaussian noise with σ² = Δ₂²/(2ρ).
	Concentrated Kind = "zcdp"
)

// Budget is dpsolve's one privacy budget: pure ε-DP, (ε,δ)-DP or ρ-zCDP.
// Build it with PureDP, ApproxDP or ZCDP; the zero value is invalid. Only the
// fields of its Kind may be non-zero (Validate checks), so a Budget read from
// flags cannot silently ignore a δ or ρ the user gave.
//
// The kind decides the noise (see Noise): Laplace for pure ε-DP, Gaussian
// for (ε,δ)-DP and ρ-zCDP. Conversions between the notions are stated on
// ZCDPRho and ApproxEpsilon.
type Budget struct {
	// Kind selects the privacy notion.
	Kind Kind
	// Epsilon is ε > 0 (Pure, Approx); 0 for Concentrated.
	Epsilon float64
	// Delta is δ ∈ (0,1) for Approx; 0 otherwise.
	Delta float64
	// Rho is ρ > 0 for Concentrated; 0 otherwise.
	Rho float64
}

// PureDP returns the ε-DP budget.
func PureDP(eps float64) Budget { return Budget{Kind: Pure, Epsilon: eps} }

// ApproxDP returns the (ε,δ)-DP budget.
func ApproxDP(eps, delta float64) Budget { return Budget{Kind: Approx, Epsilon: eps, Delta: delta} }

// ZCDP returns the ρ-zCDP budget.
func ZCDP(rho float64) Budget { return Budget{Kind: Concentrated, Rho: rho} }

// ParseKind maps a mechanism or notion name to a Kind, case-insensitively:
// "laplace", "pure" or "eps" → Pure; "gaussian", "approx" or "eps-delta" →
// Approx; "zcdp" or "rho" → Concentrated. The command line's --mechanism flag
// uses it.
func ParseKind(s string) (Kind, error) {
	switch lower(s) {
	case "laplace", "pure", "eps":
		return Pure, nil
	case "gaussian", "approx", "eps-delta":
		return Approx, nil
	case "zcdp", "rho":
		return Concentrated, nil
	}
	return "", inputerr.Errorf("calibrate", "unknown mechanism %q (want gaussian, zcdp or laplace)", s)
}

// lower is strings.ToLower for ASCII names (no import for one call).
func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) } // false for NaN

// Validate reports whether b is a usable budget, with a message naming the
// offending parameter; the error wraps ErrInput.
func (b Budget) Validate() error {
	switch b.Kind {
	case Pure:
		if !finitePositive(b.Epsilon) {
			return inputerr.Errorf("calibrate", "epsilon must be positive and finite, got %v", b.Epsilon)
		}
		if b.Delta != 0 {
			return inputerr.Errorf("calibrate", "delta must be 0 for pure ε-DP (the Laplace mechanism), got %v", b.Delta)
		}
		if b.Rho != 0 {
			return inputerr.Errorf("calibrate", "rho must be 0 for pure ε-DP, got %v", b.Rho)
		}
	case Approx:
		if !finitePositive(b.Epsilon) {
			return inputerr.Errorf("calibrate", "epsilon must be positive and finite, got %v", b.Epsilon)
		}
		if !(b.Delta > 0 && b.Delta < 1) {
			return inputerr.Errorf("calibrate", "delta must lie in the open interval (0,1), got %v", b.Delta)
		}
		if b.Rho != 0 {
			return inputerr.Errorf("calibrate", "rho must be 0 for (ε,δ)-DP (use zCDP), got %v", b.Rho)
		}
	case Concentrated:
		if !finitePositive(b.Rho) {
			return inputerr.Errorf("calibrate", "rho must be positive and finite, got %v", b.Rho)
		}
		if b.Epsilon != 0 || b.Delta != 0 {
			return inputerr.Errorf("calibrate", "epsilon and delta must be 0 for zCDP (the budget is rho), got %v and %v", b.Epsilon, b.Delta)
		}
	default:
		return inputerr.Errorf("calibrate", "unknown privacy budget kind %q (want pure, approx or zcdp)", string(b.Kind))
	}
	return nil
}

// String describes the budget: "eps=1 (pure DP)", "eps=1, delta=1e-06" or
// "rho=0.5 (zCDP)".
func (b Budget) String() string {
	switch b.Kind {
	case Pure:
		return fmt.Sprintf("eps=%g (pure DP)", b.Epsilon)
	case Approx:
		return fmt.Sprintf("eps=%g, delta=%g", b.Epsilon, b.Delta)
	case Concentrated:
		return fmt.Sprintf("rho=%g (zCDP)", b.Rho)
	}
	return fmt.Sprintf("invalid budget (kind %q)", string(b.Kind))
}

// Noise returns the noise distribution that meets b: Laplace for pure ε-DP,
// Gaussian otherwise.
func (b Budget) Noise() NoiseKind {
	if b.Kind == Pure {
		return Laplace
	}
	return Gaussian
}

// ZCDPRho returns the smallest ρ for which every mechanism meeting b is
// ρ-zCDP:
//
//   - ρ-zCDP: ρ itself;
//   - pure ε-DP ⇒ ε²/2-zCDP (Bun & Steinke 2016, Proposition 1.4).
//
// (ε,δ)-DP with δ > 0 implies no zCDP bound, so it is an error.
func (b Budget) ZCDPRho() (float64, error) {
	if err := b.Validate(); err != nil {
		return 0, err
	}
	switch b.Kind {
	case Concentrated:
		return b.Rho, nil
	case Pure:
		return b.Epsilon * b.Epsilon / 2, nil
	}
	return 0, inputerr.Errorf("calibrate", "(ε,δ)-DP with δ > 0 implies no zCDP guarantee")
}

// ApproxEpsilon returns an ε for which every mechanism meeting b is
// (ε,δ)-DP at the given δ ∈ (0,1):
//
//   - ρ-zCDP ⇒ (ρ + 2√(ρ·ln(1/δ)), δ)-DP for every δ > 0 (Bun & Steinke
//     2016, Proposition 1.3);
//   - pure ε-DP ⇒ (ε, δ)-DP for every δ ≥ 0;
//   - (ε, δ₀)-DP ⇒ (ε, δ)-DP for δ ≥ δ₀ (and an error for δ < δ₀).
func (b Budget) ApproxEpsilon(delta float64) (float64, error) {
	if err := b.Validate(); err != nil {
		return 0, err
	}
	if !(delta > 0 && delta < 1) {
		return 0, inputerr.Errorf("calibrate", "delta must lie in the open interval (0,1), got %v", delta)
	}
	switch b.Kind {
	case Concentrated:
		return b.Rho + 2*math.Sqrt(b.Rho*math.Log(1/delta)), nil
	case Pure:
		return b.Epsilon, nil
	}
	if delta < b.Delta {
		return 0, inputerr.Errorf("calibrate", "an (ε,%v)-DP budget gives no guarantee at the smaller delta %v", b.Delta, delta)
	}
	return b.Epsilon, nil
}
