// Package calibrate computes the noise scale that makes an additive-noise
// mechanism differentially private for a given privacy budget and sensitivity.
//
// A query f with L2 sensitivity Δ₂ = max ‖f(x) − f(x')‖₂ over neighbouring
// inputs x, x' is released as f(x) + Z with Z ~ N(0, σ²I); with L1 sensitivity
// Δ₁ it is released as f(x) + Z with i.i.d. Laplace(b) coordinates. This
// package answers "which σ (or b)?":
//
//   - GaussianSigma: the analytic Gaussian mechanism of Balle & Wang (ICML 2018,
//     "Improving the Gaussian Mechanism for Differential Privacy: Analytical
//     Calibration and Optimal Denoising", Theorem 8). The Gaussian mechanism is
//     (ε,δ)-DP if and only if
//
//     δ(σ) = Φ(Δ₂/(2σ) − εσ/Δ₂) − e^ε Φ(−Δ₂/(2σ) − εσ/Δ₂) ≤ δ,
//
//     Φ the standard normal CDF. δ(σ) is strictly decreasing in σ, so the
//     smallest admissible σ is found by bracketed root finding on an accurate evaluation
//     of δ(σ) (a quadrature of a positive integrand, free of the closed
//     form's cancellation); the returned σ always satisfies δ(σ) ≤ δ and is
//     within a relative ~1e-11 of the exact root. This is the smallest σ for
//     which the Gaussian mechanism is (ε,δ)-DP, valid for every ε > 0.
//
//   - ClassicGaussianSigma: σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014,
//     Theorem A.1). It is a sufficient condition proven only for ε < 1, and is
//     always larger than GaussianSigma; it is provided for comparison.
//
//   - ZCDPSigma: σ² = Δ₂²/(2ρ) makes the Gaussian mechanism ρ-zCDP
//     (Bun & Steinke 2016, Proposition 1.6).
//
//   - LaplaceScale: b = Δ₁/ε makes the Laplace mechanism ε-DP
//     (Dwork, McSherry, Nissim & Smith 2006).
//
// Every function returns an error, never NaN or a panic, for a budget outside
// its domain (ε ≤ 0, δ ∉ (0,1), ρ ≤ 0, non-finite values) or a sensitivity
// that is not positive and finite.
package calibrate

import (
	"math"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// checkEps validates ε.
func checkEps(eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return inputerr.Errorf("calibrate", "epsilon must be positive and finite, got %v", eps)
	}
	return nil
}

// checkDelta validates δ for approximate DP.
func checkDelta(delta float64) error {
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return inputerr.Errorf("calibrate", "delta must lie in the open interval (0,1), got %v", delta)
	}
	return nil
}

// checkSens validates a sensitivity.
func checkSens(name string, s float64) error {
	if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
		return inputerr.Errorf("calibrate", "%s sensitivity must be positive and finite, got %v", name, s)
	}
	return nil
}

// Gauss–Legendre rule on [−1, 1] used by the privacy-profile quadrature.
var glX, glW = func() ([]float64, []float64) {
	x, w := make([]float64, 12), make([]float64, 12)
	quad.Legendre{}.FixedLocations(x, w, -1, 1)
	return x, w
}()

// logGaussianDeltaUnit returns log δ(σ) for unit L2 sensitivity, where δ(σ)
// is Balle & Wang's Theorem 8 profile Φ(a−b) − e^ε Φ(−a−b), a = 1/(2σ),
// b = εσ. The closed form subtracts two nearly equal tail probabilities and
// loses up to half the significant digits for small ε and δ, so it is
// evaluated instead through the equivalent integral of a positive function
// (the hockey-stick divergence of the privacy-loss distribution
// L ~ N(μ, 2μ), μ = 1/(2σ²)):
//
//	δ = E[(1 − e^{ε−L})₊] = ∫₀^∞ (1 − e^{−cs}) φ(z₀ + s) ds,
//	c = 1/σ, z₀ = b − a,
//
// by adaptive Gauss–Legendre quadrature. A positive integrand sums without
// cancellation, so the relative error is ~1e-13 (dominated by the rounding of
// z₀²/2 in the factored-out exponent), at every ε and δ. The log is returned
// so that δ far below the smallest double still compares correctly.
func logGaussianDeltaUnit(sigma, eps float64) float64 {
	c := 1 / sigma
	z0 := eps*sigma - 1/(2*sigma)
	f := math.Max(z0, 0) // φ(z₀+s) = φ(f)·exp(−e(s)), factored out when z₀ > 0
	expo := func(s float64) float64 {
		if z0 > 0 {
			return s * (z0 + s/2) // ((z₀+s)² − z₀²)/2 without cancellation
		}
		z := z0 + s
		return z * z / 2
	}
	h := func(s float64) float64 { return -math.Expm1(-c*s) * math.Exp(-expo(s)) }
	gl := func(a, b float64) float64 {
		mid, half := (a+b)/2, (b-a)/2
		var sum float64
		for i, x := range glX {
			sum += glW[i] * h(mid+half*x)
		}
		return sum * half
	}
	var adapt func(a, b, whole float64, depth int) float64
	adapt = func(a, b, whole float64, depth int) float64 {
		m := (a + b) / 2
		left, right := gl(a, m), gl(m, b)
		if depth >= 12 || math.Abs(left+right-whole) <= 4e-15*(left+right) {
			return left + right
		}
		return adapt(a, m, left, depth+1) + adapt(m, b, right, depth+1)
	}
	// Beyond sMax the integrand is below e^{−90} of its scale: the neglected
	// tail is < 1e-39 relative for any c ≥ 1e-20.
	sMax := -z0 + math.Sqrt(f*f+180)
	w := 1 / math.Max(1, math.Max(z0, c)) // the integrand's shortest length scale
	var total float64
	for a := 0.0; a < sMax; {
		b := math.Min(sMax, math.Max(w, 2*a)) // geometrically graded panels
		total += adapt(a, b, gl(a, b), 0)
		a = b
	}
	if total <= 0 {
		return math.Inf(-1)
	}
	return -f*f/2 - 0.5*math.Log(2*math.Pi) + math.Log(total)
}

// GaussianDelta returns the smallest δ for which the Gaussian mechanism with
// noise standard deviation sigma and L2 sensitivity l2Sensitivity is
// (ε,δ)-DP (Balle & Wang 2018, Theorem 8): it is the exact privacy profile,
// the inverse of GaussianSigma.
func GaussianDelta(sigma, eps, l2Sensitivity float64) (float64, error) {
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	if err := checkSens("L2", l2Sensitivity); err != nil {
		return 0, err
	}
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma <= 0 {
		return 0, inputerr.Errorf("calibrate", "sigma must be positive and finite, got %v", sigma)
	}
	return math.Exp(logGaussianDeltaUnit(sigma/l2Sensitivity, eps)), nil
}

// GaussianSigma returns the smallest standard deviation σ such that adding
// N(0, σ²I) noise to a query of L2 sensitivity l2Sensitivity is (ε,δ)-DP: the
// analytic Gaussian mechanism of Balle & Wang (2018). The result satisfies
// GaussianDelta(σ) ≤ δ and is within a relative ~1e-11 of the exact minimum.
func GaussianSigma(eps, delta, l2Sensitivity float64) (float64, error) {
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	if err := checkSens("L2", l2Sensitivity); err != nil {
		return 0, err
	}
	// Solve for the root of log δ(σ) = log δ − 1e-11: the target sits a
	// relative 1e-11 below δ, a hundred times the evaluation error of the
	// profile (~1e-13), so the returned σ truly satisfies δ(σ) ≤ δ while
	// staying within ~1e-11 of the exact minimum.
	target := math.Log(delta) - 1e-11
	f := func(s float64) float64 { return logGaussianDeltaUnit(s, eps) - target } // decreasing in s
	// Bracket the unit-sensitivity root: δ(σ) decreases from 1 (σ → 0) to 0
	// (σ → ∞). Invariant from here on: f(lo) > 0 ≥ f(hi).
	lo, hi := 1.0, 1.0
	flo, fhi := f(1), f(1)
	for fhi > 0 {
		lo, flo = hi, fhi
		hi *= 2
		if hi > 1e300 {
			return 0, inputerr.Errorf("calibrate", "no finite sigma reaches delta=%v at epsilon=%v", delta, eps)
		}
		fhi = f(hi)
	}
	if lo == hi {
		for flo <= 0 {
			hi, fhi = lo, flo
			lo /= 2
			if lo < 1e-300 {
				return 0, inputerr.Errorf("calibrate", "sigma underflows for delta=%v at epsilon=%v", delta, eps)
			}
			flo = f(lo)
		}
	}
	// Shrink the bracket to a relative width of 1e-14 (double precision is
	// ~2e-16) by the Illinois variant of regula falsi: superlinear, and,
	// unlike plain regula falsi, it moves both ends. A secant point that
	// falls outside the open bracket (rounding) is replaced by bisection.
	fl, fh := flo, fhi // possibly halved function values used by Illinois
	side := 0
	for i := 0; i < 200 && hi-lo > 1e-14*hi; i++ {
		x := (lo*fh - hi*fl) / (fh - fl)
		if !(x > lo && x < hi) {
			x = lo + (hi-lo)/2
		}
		fx := f(x)
		if fx > 0 {
			lo, fl = x, fx
			if side == -1 {
				fh /= 2
			}
			side = -1
		} else {
			hi, fh = x, fx
			if side == +1 {
				fl /= 2
			}
			side = +1
		}
	}
	// The privacy-loss profile is evaluated in floating point; at extreme
	// ε (≳ 1e150) it is NaN and the bracketing above ends at an arbitrary
	// σ. Verify the root rather than return a σ that was never checked.
	if d := logGaussianDeltaUnit(hi, eps); math.IsNaN(d) || d > math.Log(delta) {
		return 0, inputerr.Errorf("calibrate", "epsilon=%v is outside the range where the Gaussian calibration can be evaluated", eps)
	}
	// Round the scaling up so that the scaled σ never falls below the root.
	return math.Nextafter(hi*l2Sensitivity, math.Inf(1)), nil
}

// ClassicGaussianSigma returns σ = Δ₂·√(2 ln(1.25/δ))/ε, the classic
// calibration of the Gaussian mechanism (Dwork & Roth 2014, Theorem A.1).
// That theorem proves (ε,δ)-DP only for ε < 1, so ε ≥ 1 is an error; the
// analytic GaussianSigma is smaller and valid for every ε > 0.
func ClassicGaussianSigma(eps, delta, l2Sensitivity float64) (float64, error) {
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	if eps >= 1 {
		return 0, inputerr.Errorf("calibrate", "the classic Gaussian calibration is proven only for epsilon < 1, got %v (use the analytic calibration, valid for every epsilon)", eps)
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	if err := checkSens("L2", l2Sensitivity); err != nil {
		return 0, err
	}
	return l2Sensitivity * math.Sqrt(2*math.Log(1.25/delta)) / eps, nil
}

// ZCDPSigma returns σ = Δ₂/√(2ρ), the standard deviation for which the
// Gaussian mechanism with L2 sensitivity l2Sensitivity is ρ-zCDP
// (σ² = Δ₂²/(2ρ); Bun & Steinke 2016, Proposition 1.6).
func ZCDPSigma(rho, l2Sensitivity float64) (float64, error) {
	if math.IsNaN(rho) || math.IsInf(rho, 0) || rho <= 0 {
		return 0, inputerr.Errorf("calibrate", "rho must be positive and finite, got %v", rho)
	}
	if err := checkSens("L2", l2Sensitivity); err != nil {
		return 0, err
	}
	return l2Sensitivity / math.Sqrt(2*rho), nil
}

// LaplaceScale returns b = Δ₁/ε, the Laplace scale for which adding i.i.d.
// Laplace(b) noise to a query of L1 sensitivity l1Sensitivity is ε-DP.
func LaplaceScale(eps, l1Sensitivity float64) (float64, error) {
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	if err := checkSens("L1", l1Sensitivity); err != nil {
		return 0, err
	}
	return l1Sensitivity / eps, nil
}
