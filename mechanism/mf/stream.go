package mf

import (
	"math"

	"github.com/dpsolve/dpsolve/privacy/noise"
)

// StreamGenerator produces a Toeplitz strategy's correlated noise one
// training step at a time in O(state) memory: step t's noise is
// (C⁻¹Z)ₜ ∈ ℝᵈⁱᵐ with Z's rows i.i.d. Gaussian. For a BLT it keeps d
// buffers (C⁻¹ is a BLT with decays θ̂ and scales ω̂:
// wₜ = zₜ + Σᵢ ω̂ᵢ·Sᵢ, Sᵢ ← θ̂ᵢ·Sᵢ + zₜ); for a banded Toeplitz C with b
// coefficients the last b − 1 outputs (wₜ = (zₜ − Σ_{j≥1} cⱼ·wₜ₋ⱼ)/c₀).
//
// Three modes: Next draws Z from the Source at scale σ (noise.NewSecure
// for training; noise.NewSeededInsecure only for simulations, which are
// not private — Private says which) and returns σ·(C⁻¹Z)ₜ, where σ is the
// noise multiplier: multiply by the clipping norm to get the noise added
// to the sum of clipped gradients. NextFrom takes the caller's standard
// normal zₜ and returns (C⁻¹Z)ₜ unscaled (tests, and the Python module's
// cross-check).
type StreamGenerator struct {
	invTheta, invOmega []float64 // BLT
	coefs              []float64 // banded Toeplitz
	dim                int
	sigma, grid, scale float64
	src                noise.Source
	state              [][]float64 // BLT buffers, or the ring of past outputs
	t                  int
}

// NewBLTGenerator streams the BLT's noise for dim-dimensional gradients.
// src may be nil when only NextFrom is used; sigma is then ignored.
func NewBLTGenerator(b *BLT, dim int, sigma float64, src noise.Source) (*StreamGenerator, error) {
	if b == nil || b.Buffers() == 0 || len(b.InvTheta) != len(b.InvOmega) {
		return nil, inputErr("nil or empty BLT")
	}
	for i, th := range b.InvTheta {
		if !(math.Abs(th) < 1) || !finite(b.InvOmega[i]) {
			return nil, inputErr("BLT inverse decay %v or scale %v unusable", th, b.InvOmega[i])
		}
	}
	g, err := newStream(dim, sigma, src, b.Buffers())
	if err != nil {
		return nil, err
	}
	g.invTheta, g.invOmega = b.InvTheta, b.InvOmega
	return g, nil
}

// NewToeplitzGenerator streams the noise of the banded lower-triangular
// Toeplitz C with coefficients coefs (coefs[0] > 0).
func NewToeplitzGenerator(coefs []float64, dim int, sigma float64, src noise.Source) (*StreamGenerator, error) {
	if len(coefs) == 0 || !(coefs[0] > 0) || !finite(coefs...) {
		return nil, inputErr("Toeplitz coefficients need a positive first entry and finite values")
	}
	g, err := newStream(dim, sigma, src, max(len(coefs)-1, 1))
	if err != nil {
		return nil, err
	}
	g.coefs = coefs
	return g, nil
}

func newStream(dim int, sigma float64, src noise.Source, state int) (*StreamGenerator, error) {
	if dim < 1 {
		return nil, inputErr("dimension %d, want ≥ 1", dim)
	}
	g := &StreamGenerator{dim: dim, src: src, state: make([][]float64, state)}
	for i := range g.state {
		g.state[i] = make([]float64, dim)
	}
	if !noise.Missing(src) {
		if !(sigma > 0) || math.IsInf(sigma, 0) {
			return nil, inputErr("noise multiplier σ = %v, want finite and positive", sigma)
		}
		grid, err := noise.Grid(sigma)
		if err != nil {
			return nil, inputErr("%v", err)
		}
		g.sigma, g.grid = sigma, grid
	}
	return g, nil
}

// Step is the index of the next step (0-based).
func (g *StreamGenerator) Step() int { return g.t }

// Scale is the Gaussian scale actually drawn by Next (≥ σ; 0 before).
func (g *StreamGenerator) Scale() float64 { return g.scale }

// Private reports whether Next draws from a secure source; a seeded
// source is a simulation and its noise is not private.
func (g *StreamGenerator) Private() bool {
	s, ok := g.src.(*noise.Sampler)
	return ok && s != nil && s.Private()
}

// Next draws Zₜ (scale σ) and returns σ·(C⁻¹Z)ₜ.
func (g *StreamGenerator) Next() ([]float64, error) {
	if noise.Missing(g.src) {
		return nil, inputErr("no noise source: use NextFrom")
	}
	z := make([]float64, g.dim)
	sc, err := g.src.AddGaussian(z, g.sigma, g.grid)
	if err != nil {
		return nil, err
	}
	g.scale = sc
	return g.apply(z), nil
}

// NextFrom returns (C⁻¹Z)ₜ for the caller's zₜ (length dim, not kept).
func (g *StreamGenerator) NextFrom(z []float64) ([]float64, error) {
	if len(z) != g.dim {
		return nil, inputErr("normal vector has %d entries, want %d", len(z), g.dim)
	}
	return g.apply(append([]float64(nil), z...)), nil
}

// apply turns z into step t's output in place and advances.
func (g *StreamGenerator) apply(z []float64) []float64 {
	if g.coefs == nil {
		w := z
		out := append([]float64(nil), z...)
		for i, S := range g.state {
			om, th := g.invOmega[i], g.invTheta[i]
			for k := range out {
				out[k] += om * S[k]
				S[k] = th*S[k] + w[k]
			}
		}
		g.t++
		return out
	}
	c := g.coefs
	ring := len(g.state)
	for j := 1; j < len(c) && j <= g.t; j++ {
		if c[j] == 0 {
			continue
		}
		prev := g.state[(g.t-j)%ring]
		for k := range z {
			z[k] -= c[j] * prev[k]
		}
	}
	for k := range z {
		z[k] /= c[0]
	}
	copy(g.state[g.t%ring], z)
	g.t++
	return z
}
