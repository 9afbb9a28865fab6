package functional

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/dpsolve/dpsolve/mechanism/noise"
)

// Noise adds Laplace noise to one value.
type Noise interface {
	// AddLaplace returns x + η with η ~ Laplace(0, scale), density
	// exp(−|η|/scale)/(2 scale). A private source snaps x to the power-of-two
	// grid and adds discrete Laplace noise on it, so the output is a multiple
	// of grid (see package mechanism/noise); scale ≥ grid is required.
	AddLaplace(x, scale, grid float64) (float64, error)
}

// Secure returns the Laplace source for real releases: mechanism/noise's
// sampler on crypto/rand, which snaps the value to the grid and adds an exactly
// sampled discrete Laplace variable of scale ⌈scale/grid⌉·grid (≥ scale), so
// the output has no floating-point artifacts of the input (Mironov 2012). It
// is safe for concurrent use (draws are serialized).
func Secure() Noise { return &secure{s: noise.NewSecure()} }

type secure struct {
	mu sync.Mutex
	s  *noise.Sampler
}

func (n *secure) AddLaplace(x, scale, grid float64) (float64, error) {
	if err := checkArgs(x, scale, grid); err != nil {
		return 0, err
	}
	v := []float64{x}
	n.mu.Lock()
	_, err := n.s.AddLaplace(v, scale, grid)
	n.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// SeededInsecure is a reproducible Laplace source for simulations and tests.
// It is NOT private: its seed determines every sample, and it samples the
// continuous Laplace law by inverse CDF in floating point without snapping.
// Never use it to release data. It is safe for concurrent use (samples are
// serialized).
type SeededInsecure struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewSeededInsecure returns a seeded, non-private Laplace source.
func NewSeededInsecure(seed uint64) *SeededInsecure {
	return &SeededInsecure{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// AddLaplace returns x + η, η ~ Laplace(scale), from the seeded generator; the
// grid is only validated.
func (s *SeededInsecure) AddLaplace(x, scale, grid float64) (float64, error) {
	if err := checkArgs(x, scale, grid); err != nil {
		return 0, err
	}
	s.mu.Lock()
	u := s.rng.Float64() - 0.5 // [−1/2, 1/2)
	for u == -0.5 {
		u = s.rng.Float64() - 0.5
	}
	s.mu.Unlock()
	// Inverse CDF: η = −scale·sign(u)·log(1 − 2|u|).
	return x - scale*math.Copysign(math.Log1p(-2*math.Abs(u)), u), nil
}

func checkArgs(x, scale, grid float64) error {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return inputErrorf("Laplace scale must be positive and finite, got %v", scale)
	}
	if !(grid > 0) || !(grid <= scale) {
		return inputErrorf("grid must be positive and at most the scale, got %v (scale %v)", grid, scale)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return inputErrorf("value to perturb is not finite: %v", x)
	}
	return nil
}
