package calibrate

// SciPySigma returns the analytic-Gaussian σ for unit sensitivity that
// scipyReference holds for (eps, delta), so that the external tests use
// the one table rather than copies of its values; 0 when the table has no
// such entry.
func SciPySigma(eps, delta float64) float64 {
	for _, c := range scipyReference {
		if c.eps == eps && c.delta == delta {
			return c.sigma
		}
	}
	return 0
}
