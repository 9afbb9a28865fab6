package mf

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/privacy/noise"
)

// Generator produces the correlated noise of DP-FTRL one training step at a
// time: step t's noise is (C⁻¹Z)ₜ ∈ ℝᵈ for Z with i.i.d. Gaussian rows of
// scale σ, found by forward substitution in C·w = Z,
//
//	wₜ = (Zₜ − Σ_{s<t} C_ts·wₛ) / C_tt,
//
// so C⁻¹ is never formed. A dense C keeps every past wₛ (O(n·d) memory); a
// b-banded C only the last b−1 (O(b·d)). The Gaussian rows come from the
// Source: noise.NewSecure for training, noise.NewSeededInsecure only for
// simulations (it is not private). Each Zₜ is the discrete Gaussian of
// privacy/noise on its grid, of scale σ' ≥ σ (Scale reports it).
type Generator struct {
	c      *mat.TriDense
	bands  int // 0: dense
	d      int
	sigma  float64
	grid   float64
	scale  float64
	src    noise.Source
	t      int
	past   [][]float64 // ring of the last len(past) outputs
	zeroed []float64
}

// NewGenerator returns a generator for the lower-triangular strategy C (n×n,
// positive diagonal), d-dimensional gradients and noise multiplier σ.
// bands > 0 declares C bands-banded (entries with t − s ≥ bands are zero,
// checked) and keeps only bands−1 past steps.
func NewGenerator(c *mat.TriDense, bands, d int, sigma float64, src noise.Source) (*Generator, error) {
	if c == nil || noise.Missing(src) {
		return nil, inputErr("nil strategy or noise source")
	}
	n, _ := c.Dims()
	if _, k := c.Triangle(); k != mat.Lower {
		return nil, inputErr("strategy must be lower triangular")
	}
	if d < 1 || bands < 0 || bands > n {
		return nil, inputErr("dimension d = %d or bands = %d invalid for n = %d", d, bands, n)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, inputErr("noise multiplier σ = %v, want finite and positive", sigma)
	}
	for t := 0; t < n; t++ {
		if !(c.At(t, t) > 0) {
			return nil, inputErr("strategy diagonal entry %d is %v, want positive", t, c.At(t, t))
		}
		for s := 0; bands > 0 && s <= t-bands; s++ {
			if c.At(t, s) != 0 {
				return nil, inputErr("strategy is not %d-banded: C[%d,%d] = %v", bands, t, s, c.At(t, s))
			}
		}
	}
	grid, err := noise.Grid(sigma)
	if err != nil {
		return nil, inputErr("%v", err)
	}
	keep := n
	if bands > 0 {
		keep = max(bands-1, 1)
	}
	g := &Generator{c: c, bands: bands, d: d, sigma: sigma, grid: grid, src: src, past: make([][]float64, keep)}
	for i := range g.past {
		g.past[i] = make([]float64, d)
	}
	return g, nil
}

// Step is the index of the next step Next will produce (0-based).
func (g *Generator) Step() int { return g.t }

// Scale is the Gaussian scale actually drawn (≥ σ), 0 before the first step.
func (g *Generator) Scale() float64 { return g.scale }

// Next returns step t's noise (a new slice of length d) and advances.
func (g *Generator) Next() ([]float64, error) {
	n, _ := g.c.Dims()
	t := g.t
	if t >= n {
		return nil, inputErr("all %d steps already generated", n)
	}
	z := make([]float64, g.d)
	sc, err := g.src.AddGaussian(z, g.sigma, g.grid)
	if err != nil {
		return nil, err
	}
	g.scale = sc
	lo := 0
	if g.bands > 0 {
		lo = max(0, t-g.bands+1)
	}
	for s := lo; s < t; s++ {
		cts := g.c.At(t, s)
		if cts == 0 {
			continue
		}
		ws := g.past[s%len(g.past)]
		for i := range z {
			z[i] -= cts * ws[i]
		}
	}
	inv := 1 / g.c.At(t, t)
	for i := range z {
		z[i] *= inv
	}
	copy(g.past[t%len(g.past)], z)
	g.t++
	return z, nil
}
