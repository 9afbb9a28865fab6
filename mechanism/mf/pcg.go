package mf

import "math"

// pcg runs preconditioned conjugate gradients on A·x = r from x = 0 (x must
// hold zeros on entry) until ‖r‖ ≤ eta·‖r₀‖, maxSteps products with A, or a
// direction of non-positive curvature (A is positive definite in exact
// arithmetic, so that only happens at rounding level). apply writes A·p into
// ap, prec writes M⁻¹·r into z; r is overwritten with the final residual.
// It returns the number of products with A. Both Newton solvers (banded and
// fixed-epoch) share it.
func pcg(apply func(p, ap []float64), prec func(r, z []float64), x, r []float64, eta float64, maxSteps int) int {
	m := len(r)
	z, p, ap := make([]float64, m), make([]float64, m), make([]float64, m)
	prec(r, z)
	copy(p, z)
	rz, r0 := dot(r, z), math.Sqrt(dot(r, r))
	steps := 0
	for steps < maxSteps && math.Sqrt(dot(r, r)) > eta*r0 {
		apply(p, ap)
		steps++
		pap := dot(p, ap)
		if !(pap > 0) {
			break
		}
		a := rz / pap
		for i := range r {
			x[i] += a * p[i]
			r[i] -= a * ap[i]
		}
		prec(r, z)
		rzNew := dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	return steps
}
