package noise

// Source is dpsolve's one interface for additive Laplace and Gaussian noise:
// every mechanism (release, lrm, functional, distributed) draws through it.
// *Sampler implements it — NewSecure for real releases, NewSeededInsecure for
// reproducible simulations that are NOT private. Both methods replace each
// values[i] by g·(round(values[i]/g) + Z), Z exact discrete noise of scale
// ⌈scale/g⌉ grid units, and return that scale times g (see Sampler).
type Source interface {
	// AddLaplace adds discrete Laplace noise of scale ≥ scale on the grid.
	AddLaplace(values []float64, scale, grid float64) (float64, error)
	// AddGaussian adds discrete Gaussian noise of scale ≥ sigma on the grid.
	AddGaussian(values []float64, sigma, grid float64) (float64, error)
}

var _ Source = (*Sampler)(nil)

// Missing reports whether s is nil or a nil *Sampler (a typed nil that a
// plain s == nil misses), so that callers reject it as bad input instead of
// panicking on the first draw.
func Missing(s Source) bool {
	if s == nil {
		return true
	}
	sp, ok := s.(*Sampler)
	return ok && sp == nil
}
