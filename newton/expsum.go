package newton

import (
	"math"
)

// expSum approximates 1/x on [lo, hi] (0 < lo ≤ hi) by a sum of
// exponentials, 1/x ≈ Σ_r w_r·exp(−t_r·x), with relative error at most about
// tol, by the trapezoid rule applied to 1/x = ∫ exp(s − x·eˢ) ds (sinc
// quadrature). All weights are positive, so the approximate Hessian it
// induces stays positive definite.
//
// Error budget (tol split in halves): the integrand is analytic in the strip
// |Im s| < π/2, so the trapezoid rule with step h has relative error
// C·exp(−π²/h); measured over x ∈ [1e-3, 1e3] and h ∈ [0.5, 1.5], C ≤ 18, so
// h = π²/ln(40/tol) keeps it below tol/2. Truncating at s_min = ln(tol/(2·hi)) and
// s_max = ln(ln(2/tol)/lo) loses at most tol/2 relative on each side.
// The node count grows like (ln(hi/lo) + 2·ln(2/tol))/h.
func expSum(lo, hi, tol float64) (t, w []float64) {
	l2 := math.Log(2 / tol)
	h := math.Pi * math.Pi / math.Log(40/tol)
	sMin := math.Log(tol / (2 * hi))
	sMax := math.Log(l2 / lo)
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
