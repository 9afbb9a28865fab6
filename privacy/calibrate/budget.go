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
//
// A Budget is valid by construction: PureDP, ApproxDP, ZCDP, New and
// UnmarshalJSON (the one encoding, see MarshalJSON) check their parameters
// and return an error for a bad one, and the arithmetic (Split, Share)
// returns only valid budgets, so a consumer never re-validates. Only the
// parameters of its Kind are non-zero, so a budget read from flags cannot
// silently ignore a δ or ρ the user gave. The zero Budget means "no budget"
// (IsZero); every function that needs a budget refuses it with ErrNoBudget.
//
// The kind decides the noise (see Noise): Laplace for pure ε-DP, Gaussian
// for (ε,δ)-DP and ρ-zCDP. Conversions between the notions are stated on
// ZCDPRho and ApproxEpsilon.
type Budget struct {
	kind  Kind
	eps   float64 // ε > 0 (Pure, Approx); 0 for Concentrated
	delta float64 // δ ∈ (0,1) for Approx; 0 otherwise
	rho   float64 // ρ > 0 for Concentrated; 0 otherwise
}

// ErrNoBudget is returned (wrapping ErrInput) by every function that needs
// a privacy budget and is given the zero Budget.
var ErrNoBudget = inputerr.Errorf("calibrate", "no privacy budget given (build one with PureDP, ApproxDP or ZCDP)")

// New returns the budget of the given kind with parameters ε, δ and ρ, or
// an error (wrapping ErrInput) naming the offending parameter: ε must be
// positive and finite for Pure and Approx, δ ∈ (0,1) for Approx, ρ positive
// and finite for Concentrated, and every parameter the kind does not use
// must be 0. The command line builds its budget from flags with New.
func New(kind Kind, eps, delta, rho float64) (Budget, error) {
	b := Budget{kind: kind, eps: eps, delta: delta, rho: rho}
	if err := b.validate(); err != nil {
		return Budget{}, err
	}
	return b, nil
}

// PureDP returns the ε-DP budget, or an error unless ε is positive and
// finite.
func PureDP(eps float64) (Budget, error) { return New(Pure, eps, 0, 0) }

// ApproxDP returns the (ε,δ)-DP budget, or an error unless ε is positive
// and finite and δ ∈ (0,1).
func ApproxDP(eps, delta float64) (Budget, error) { return New(Approx, eps, delta, 0) }

// ZCDP returns the ρ-zCDP budget, or an error unless ρ is positive and
// finite.
func ZCDP(rho float64) (Budget, error) { return New(Concentrated, 0, 0, rho) }

// Kind is the budget's privacy notion ("" for the zero Budget).
func (b Budget) Kind() Kind { return b.kind }

// Epsilon is ε (Pure, Approx); 0 for Concentrated.
func (b Budget) Epsilon() float64 { return b.eps }

// Delta is δ (Approx); 0 otherwise.
func (b Budget) Delta() float64 { return b.delta }

// Rho is ρ (Concentrated); 0 otherwise.
func (b Budget) Rho() float64 { return b.rho }

// IsZero reports whether b is the zero Budget, "no budget".
func (b Budget) IsZero() bool { return b == Budget{} }

// Split returns the budget each of n equal parts of b may spend: ρ/n under
// zCDP, ε/n for pure ε-DP and (ε/n, δ/n) for (ε,δ)-DP, so that the n parts
// together spend b by composition (see Share). n = 1 returns b; it fails
// for the zero Budget, n < 1, or a part too small to represent.
func (b Budget) Split(n int) (Budget, error) {
	if b.IsZero() {
		return Budget{}, ErrNoBudget
	}
	if n < 1 {
		return Budget{}, inputerr.Errorf("calibrate", "a budget is split into at least 1 part, got %d", n)
	}
	f := float64(n)
	return New(b.kind, b.eps/f, b.delta/f, b.rho/f)
}

// Share returns the budget that spends the fraction f ∈ (0,1] of b: ρ·f
// under zCDP, ε·f for pure ε-DP and (ε·f, δ·f) for (ε,δ)-DP. Parts whose
// fractions add to 1 spend b in total by composition (ρ-zCDP adds, Bun &
// Steinke 2016, Lemma 2.3; ε and (ε,δ) add by basic composition, Dwork &
// Roth 2014, Theorem 3.16). It fails for the zero Budget, an f outside
// (0,1], or a part too small to represent (ε·f underflowing to 0).
func (b Budget) Share(f float64) (Budget, error) {
	if b.IsZero() {
		return Budget{}, ErrNoBudget
	}
	if !(f > 0 && f <= 1) {
		return Budget{}, inputerr.Errorf("calibrate", "a budget's share must lie in (0,1], got %v", f)
	}
	return New(b.kind, b.eps*f, b.delta*f, b.rho*f)
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

// validate reports whether b is a usable budget, with a message naming the
// offending parameter; the error wraps ErrInput. It runs once per budget,
// in New (every constructor and UnmarshalJSON go through New).
func (b Budget) validate() error {
	switch b.kind {
	case Pure:
		if !finitePositive(b.eps) {
			return inputerr.Errorf("calibrate", "epsilon must be positive and finite, got %v", b.eps)
		}
		if b.delta != 0 {
			return inputerr.Errorf("calibrate", "delta must be 0 for pure ε-DP (the Laplace mechanism), got %v", b.delta)
		}
		if b.rho != 0 {
			return inputerr.Errorf("calibrate", "rho must be 0 for pure ε-DP, got %v", b.rho)
		}
	case Approx:
		if !finitePositive(b.eps) {
			return inputerr.Errorf("calibrate", "epsilon must be positive and finite, got %v", b.eps)
		}
		if !(b.delta > 0 && b.delta < 1) {
			return inputerr.Errorf("calibrate", "delta must lie in the open interval (0,1), got %v", b.delta)
		}
		if b.rho != 0 {
			return inputerr.Errorf("calibrate", "rho must be 0 for (ε,δ)-DP (use zCDP), got %v", b.rho)
		}
	case Concentrated:
		if !finitePositive(b.rho) {
			return inputerr.Errorf("calibrate", "rho must be positive and finite, got %v", b.rho)
		}
		if b.eps != 0 || b.delta != 0 {
			return inputerr.Errorf("calibrate", "epsilon and delta must be 0 for zCDP (the budget is rho), got %v and %v", b.eps, b.delta)
		}
	default:
		return inputerr.Errorf("calibrate", "unknown privacy budget kind %q (want pure, approx or zcdp)", string(b.kind))
	}
	return nil
}

// String describes the budget: "eps=1 (pure DP)", "eps=1, delta=1e-06" or
// "rho=0.5 (zCDP)".
func (b Budget) String() string {
	switch b.kind {
	case Pure:
		return fmt.Sprintf("eps=%g (pure DP)", b.eps)
	case Approx:
		return fmt.Sprintf("eps=%g, delta=%g", b.eps, b.delta)
	case Concentrated:
		return fmt.Sprintf("rho=%g (zCDP)", b.rho)
	}
	return "no budget"
}

// Noise returns the noise distribution that meets b: Laplace for pure ε-DP,
// Gaussian otherwise.
func (b Budget) Noise() NoiseKind { return b.kind.Noise() }

// ZCDPRho returns the smallest ρ for which every mechanism meeting b is
// ρ-zCDP:
//
//   - ρ-zCDP: ρ itself;
//   - pure ε-DP ⇒ ε²/2-zCDP (Bun & Steinke 2016, Proposition 1.4).
//
// (ε,δ)-DP with δ > 0 implies no zCDP bound, so it is an error.
func (b Budget) ZCDPRho() (float64, error) {
	if b.IsZero() {
		return 0, ErrNoBudget
	}
	switch b.kind {
	case Concentrated:
		return b.rho, nil
	case Pure:
		return b.eps * b.eps / 2, nil
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
	if b.IsZero() {
		return 0, ErrNoBudget
	}
	if !(delta > 0 && delta < 1) {
		return 0, inputerr.Errorf("calibrate", "delta must lie in the open interval (0,1), got %v", delta)
	}
	switch b.kind {
	case Concentrated:
		return b.rho + 2*math.Sqrt(b.rho*math.Log(1/delta)), nil
	case Pure:
		return b.eps, nil
	}
	if delta < b.delta {
		return 0, inputerr.Errorf("calibrate", "an (ε,%v)-DP budget gives no guarantee at the smaller delta %v", b.delta, delta)
	}
	return b.eps, nil
}
