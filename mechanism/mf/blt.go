package mf

import (
	"math"
	"sort"
)

// BLT is a buffered linear Toeplitz strategy (Dvijotham, McMahan et al.,
// 2024): C is lower-triangular Toeplitz with coefficients
//
//	c₀ = 1,  cⱼ = Σᵢ ωᵢ·θᵢ^(j−1)  (j ≥ 1),
//
// so step t's noise needs d running buffers, and C⁻¹ is a BLT too, with
// decays InvTheta and scales InvOmega. The field names follow jax_privacy's
// BufferedToeplitz (buf_decay, output_scale).
type BLT struct {
	// Theta are C's buffer decays θᵢ ∈ (0, 1), Omega its output scales ωᵢ.
	Theta, Omega []float64
	// InvTheta and InvOmega are the same for C⁻¹.
	InvTheta, InvOmega []float64
}

// NewBLT builds the BLT whose generating function is
// c(z) = Πᵢ(1 − θ̂ᵢz)/Πᵢ(1 − θᵢz) from its decays θ (C's) and θ̂ (C⁻¹'s),
// both in (0, 1) with distinct values: the scales are the partial-fraction
// residues ωᵢ = Πₗ(θᵢ − θ̂ₗ)/Π_{l≠i}(θᵢ − θₗ) and, swapping the roles,
// C⁻¹'s. Interlaced decays θ₁ > θ̂₁ > θ₂ > … > θ̂_d (as the optimizer
// keeps them) give ω ≥ 0 and non-increasing, non-negative coefficients.
func NewBLT(theta, invTheta []float64) (*BLT, error) {
	d := len(theta)
	if d == 0 || len(invTheta) != d {
		return nil, inputErr("a BLT needs d ≥ 1 decays for C and d for C⁻¹, got %d and %d", len(theta), len(invTheta))
	}
	all := append(append([]float64(nil), theta...), invTheta...)
	for _, v := range all {
		if !(v > 0 && v < 1) {
			return nil, inputErr("BLT decay %v outside (0, 1)", v)
		}
	}
	s := append([]float64(nil), all...)
	sort.Float64s(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return nil, inputErr("BLT decays must be distinct (%v repeats)", s[i])
		}
	}
	mt, mi := make([]float64, d), make([]float64, d)
	for i := range mt {
		mt[i], mi[i] = 1-theta[i], 1-invTheta[i]
	}
	return newBLTComplement(mt, mi)
}

// newBLTComplement builds the BLT from the complements 1 − θ and 1 − θ̂,
// whose differences (θᵢ − θ̂ₗ = (1 − θ̂ₗ) − (1 − θᵢ)) keep their relative
// precision for decays near 1.
func newBLTComplement(mTheta, mInv []float64) (*BLT, error) {
	b := &BLT{Omega: residues(mTheta, mInv), InvOmega: residues(mInv, mTheta)}
	for i := range mTheta {
		b.Theta = append(b.Theta, 1-mTheta[i])
		b.InvTheta = append(b.InvTheta, 1-mInv[i])
	}
	return b, nil
}

// residues returns ωᵢ = Πₗ(pᵢ − qₗ)/Π_{l≠i}(pᵢ − pₗ) for decays given by
// their complements mp = 1 − p, mq = 1 − q.
func residues(mp, mq []float64) []float64 {
	w := make([]float64, len(mp))
	for i, pi := range mp {
		v := 1.0
		for l := range mp {
			v *= mq[l] - pi
			if l != i {
				v /= mp[l] - pi
			}
		}
		w[i] = v
	}
	return w
}

// Buffers is d, the number of buffers.
func (b *BLT) Buffers() int { return len(b.Theta) }

// Coefs returns C's first n Toeplitz coefficients in O(n·d).
func (b *BLT) Coefs(n int) []float64 { return bltSeries(b.Theta, b.Omega, n) }

// InverseCoefs returns C⁻¹'s first n Toeplitz coefficients in O(n·d).
func (b *BLT) InverseCoefs(n int) []float64 { return bltSeries(b.InvTheta, b.InvOmega, n) }

func bltSeries(theta, omega []float64, n int) []float64 {
	c := make([]float64, n)
	if n == 0 {
		return c
	}
	c[0] = 1
	pw := make([]float64, len(theta))
	for i := range pw {
		pw[i] = 1
	}
	for j := 1; j < n; j++ {
		v := 0.0
		for i, th := range theta {
			v += omega[i] * pw[i]
			pw[i] *= th
		}
		c[j] = v
	}
	return c
}

// Evaluate scores the BLT over n steps on the workload under the schema.
func (b *BLT) Evaluate(w ToeplitzWorkload, n int, s Schema, perStep bool) (*ToeplitzEvaluation, error) {
	if n < 1 || n > MaxToeplitzSteps {
		return nil, inputErr("number of steps n = %d outside [1, %d]", n, MaxToeplitzSteps)
	}
	return EvaluateToeplitz(w, b.Coefs(n), b.InverseCoefs(n), s, perStep)
}

// finite reports whether every value is finite.
func finite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// BLTParams is one BLT's parameters in jax_privacy's BufferedToeplitz
// naming.
type BLTParams struct {
	BufDecay    []float64 `json:"buf_decay"`
	OutputScale []float64 `json:"output_scale"`
}

// BLTFile is the blt.json layout: C's parameters at the top level and
// C⁻¹'s under "inverse" (C's Toeplitz coefficients are c₀ = 1,
// cⱼ = Σᵢ output_scaleᵢ·buf_decayᵢ^(j−1)).
type BLTFile struct {
	BLTParams
	Inverse BLTParams `json:"inverse"`
}

// BLTJSON returns the BLT in the blt.json layout.
func BLTJSON(b *BLT) BLTFile {
	return BLTFile{BLTParams: BLTParams{b.Theta, b.Omega}, Inverse: BLTParams{b.InvTheta, b.InvOmega}}
}
