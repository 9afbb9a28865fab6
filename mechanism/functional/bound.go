package functional

import "math"

// Accuracy holds the ingredients of the accuracy bound of the package doc.
type Accuracy struct {
	// Smoothing is |x̄ − x*|: the distance between the minimizer of the noise-free
	// post-processed sum and the true minimizer (computed, not bounded).
	Smoothing float64
	// GradientBound is M_K = sup_D (Σ_k |∇φ_k|²)^{1/2} (basis.GradientBound).
	GradientBound float64
	// Alpha is the strong-convexity modulus guaranteed on X for every
	// post-processed function (project.Projector.Guaranteed().Alpha).
	Alpha float64
	// NoiseNorms[i] is an upper bound on E‖ηᵢ‖ for agent i
	// (Mechanism.ExpectedNoiseNorm).
	NoiseNorms []float64
	// Diameter of the constraint set X; the error never exceeds it.
	Diameter float64
}

// Bound returns min(Diameter, Smoothing + M_K Σᵢ E‖ηᵢ‖ / (n α)), an upper bound
// on E|x̃ − x*|.
func (a Accuracy) Bound() (float64, error) {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	if bad(a.Smoothing) || bad(a.GradientBound) || bad(a.Diameter) || !(a.Alpha > 0) || math.IsInf(a.Alpha, 0) {
		return 0, inputErrorf("accuracy bound needs finite non-negative terms and α > 0: %+v", a)
	}
	if len(a.NoiseNorms) == 0 {
		return 0, inputErrorf("accuracy bound needs at least one agent")
	}
	s := 0.0
	for _, v := range a.NoiseNorms {
		if bad(v) {
			return 0, inputErrorf("noise norm %v is not finite and non-negative", v)
		}
		s += v
	}
	n := float64(len(a.NoiseNorms))
	return math.Min(a.Diameter, a.Smoothing+a.GradientBound*s/(n*a.Alpha)), nil
}
