// Package expsum approximates 1/x by sums of exponentials, the device that
// turns Cauchy kernels 1/(λᵢ+λⱼ) into sums of rank-one terms
// Σᵣ wᵣ·e^{−tᵣλᵢ}·e^{−tᵣλⱼ}: newton's Hessians and mechanism/mf's
// preconditioner are built from it.
package expsum

import (
	"math"
)

// Reciprocal approximates 1/x on [lo, hi] (0 < lo ≤ hi) by a sum of
// exponentials, 1/x ≈ Σ_r w_r·exp(−t_r·x), with relative error at most about
// tol, by the trapezoid rule applied to 1/x = ∫ exp(s − x·eˢ) ds (sinc
// quadrature). All weights are positive, so the approximate Hessian it
// induces stays positive definite.
//
// Error budget: the integrand is analytic in the strip |Im s| < π/2, so the
// trapezoid rule with step h has relative error C·exp(−π²/h) (C ≈ 18,
// measured); truncating at s_min = ln(tol/(2·hi)) and s_max =
// ln(ln(2/tol)/lo) loses at most tol/2 relative at either end. Those bounds
// are each attained only at one end of [lo, hi], so the three errors never
// add up fully: pulling both ends in by 0.25 saves a node and keeps the
// error below tol (TestExpSumAccuracy checks on a dense grid for κ up to
// 1e18 and tol from 1e-1 to 1e-10). The node count grows like
// (ln(hi/lo) + 2·ln(1/tol))/h.
func Reciprocal(lo, hi, tol float64) (t, w []float64) {
	l2 := math.Log(2 / tol)
	h := math.Pi * math.Pi / math.Log(40/tol)
	sMin := math.Log(tol/(2*hi)) + 0.25
	sMax := math.Log(l2/lo) - 0.25
	k := int(math.Ceil((sMax-sMin)/h)) + 1
	t = make([]float64, k)
	w = make([]float64, k)
	for i := range t {
		s := sMin + float64(i)*h
		t[i] = math.Exp(s)
		w[i] = h * t[i]
	}
	return t, w
}
