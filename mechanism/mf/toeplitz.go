package mf

import (
	"math"
	"strings"

	"github.com/dpsolve/dpsolve/model/workload"
)

// MaxToeplitzSteps caps n for the structured (Toeplitz) families, which
// hold a few length-n vectors: 10⁸ steps is 800 MB per vector.
const MaxToeplitzSteps = 100_000_000

// ToeplitzWorkload is a lower-triangular Toeplitz workload A, the only kind
// the structured (Toeplitz) families are scored on in O(n) memory: prefix
// sums (Beta = 0, A_tu = 1) or heavy-ball momentum (A_tu = (1 −
// β^(t−u+1))/(1 − β)). Per-step learning-rate weights (cooldown) make A
// non-Toeplitz and are refused by ParseToeplitzWorkload.
type ToeplitzWorkload struct {
	// Name is the workload's spec ("prefix", "momentum:0.9").
	Name string
	// Beta is the momentum β ∈ [0, 1); 0 is prefix sums.
	Beta float64
}

// ParseToeplitzWorkload reads "prefix" or "momentum:BETA" through
// workload.ParseTraining, the one parser of workload names. A cooldown
// (learning-rate weights) is refused with a message naming the dense and
// banded families, which score any workload.
func ParseToeplitzWorkload(spec string) (ToeplitzWorkload, error) {
	if strings.Contains(spec, "cooldown") {
		return ToeplitzWorkload{}, inputErr("workload %q: learning-rate weights (cooldown) make the workload non-Toeplitz; the structured families (blt, toeplitz) score prefix and momentum:BETA only — use --family dense or banded", spec)
	}
	t, err := workload.ParseTraining(spec)
	if err != nil {
		return ToeplitzWorkload{}, err
	}
	if !(t.Momentum >= 0 && t.Momentum < 1) {
		return ToeplitzWorkload{}, inputErr("momentum β in %q must be a number in [0, 1)", spec)
	}
	return ToeplitzWorkload{Name: spec, Beta: t.Momentum}, nil
}

// Coefs returns A's Toeplitz coefficients a_0…a_{n−1} (column 0 of A).
func (w ToeplitzWorkload) Coefs(n int) []float64 {
	a := make([]float64, n)
	g, s := 0.0, 0.0
	for j := range a {
		g = w.Beta*g + boolf(j == 0)
		s += g
		a[j] = s
	}
	return a
}

// decoder returns the coefficients of B = A·C⁻¹ (lower-triangular Toeplitz)
// from those of C⁻¹: b = a ∗ r, by the filter 1/((1 − z)(1 − βz)) in O(n).
func (w ToeplitzWorkload) decoder(r []float64) []float64 {
	b := make([]float64, len(r))
	g, s := 0.0, 0.0
	for j, rj := range r {
		g = w.Beta*g + rj
		s += g
		b[j] = s
	}
	return b
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ToeplitzEvaluation scores a lower-triangular Toeplitz strategy C on a
// Toeplitz workload under a schema, all per unit noise variance σ².
type ToeplitzEvaluation struct {
	// N is the number of steps.
	N int
	// Sensitivity is sens² with the pattern attaining it (exact: the
	// coefficients are checked non-negative and non-increasing).
	Sensitivity Sensitivity
	// Mean and Max are the mean and the largest per-step squared error
	// ‖row t of A·C⁻¹‖² at unit sensitivity; Total = n·Mean.
	Mean, Max, Total float64
	// MeanLoss = Mean·sens² and MaxLoss = Max·sens²: the per-step squared
	// error at the schema's sensitivity (jax_privacy's loss).
	MeanLoss, MaxLoss float64
	// PerStep is each step's squared error at unit sensitivity, when
	// asked for.
	PerStep []float64
}

// ToeplitzSensitivity is sens² of the lower-triangular Toeplitz strategy
// with coefficients c (c[0] is the diagonal; len(c) = n) under the schema.
// It is exact when c is non-negative and non-increasing: then the worst
// pattern is the earliest one, {0, b, 2b, …} with as many uses as the
// schema allows (a later or wider-spaced use meets columns of C that are
// shorter and, entrywise, no larger, and all of X = CᵀC is non-negative so
// aligned gradients are worst), and sens² = Σ_t (Σ_i c_{t−ib})². Other
// coefficients are refused: this package does not certify their
// sensitivity in O(n).
func ToeplitzSensitivity(c []float64, s Schema) (Sensitivity, error) {
	n := len(c)
	if err := s.validate(n, MaxToeplitzSteps); err != nil {
		return Sensitivity{}, err
	}
	for j, v := range c {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Sensitivity{}, inputErr("Toeplitz coefficient %d is %v: the min-separation sensitivity is exact only for non-negative, non-increasing coefficients", j, v)
		}
		if j > 0 && v > c[j-1]*(1+1e-12) {
			return Sensitivity{}, inputErr("Toeplitz coefficients increase at %d (%v > %v): the min-separation sensitivity is exact only for non-increasing coefficients", j, v, c[j-1])
		}
	}
	k, b := s.Participations(n), s.Period(n)
	pat := make([]int, 0, k)
	for i := 0; i < k && i*b < n; i++ {
		pat = append(pat, i*b)
	}
	sum := 0.0
	for t := 0; t < n; t++ {
		y := 0.0
		for _, p := range pat {
			if p > t {
				break
			}
			y += c[t-p]
		}
		sum += y * y
	}
	return Sensitivity{Squared: sum, Exact: true, Pattern: pat}, nil
}

// EvaluateToeplitz scores the Toeplitz strategy with coefficients c of C
// and r of C⁻¹ (both of length n, r the inverse series of c) on the
// workload: the decoder A·C⁻¹ is Toeplitz with coefficients b = a ∗ r, step
// t's error is Σ_{j≤t} b_j² (non-decreasing in t, so the maximum is the
// last step's), and the mean is Σ_j (n − j)·b_j²/n. O(n·k) time, O(n)
// memory.
func EvaluateToeplitz(w ToeplitzWorkload, c, r []float64, s Schema, perStep bool) (*ToeplitzEvaluation, error) {
	n := len(c)
	if len(r) != n {
		return nil, inputErr("inverse has %d coefficients, strategy %d", len(r), n)
	}
	sens, err := ToeplitzSensitivity(c, s)
	if err != nil {
		return nil, err
	}
	b := w.decoder(r)
	ev := &ToeplitzEvaluation{N: n, Sensitivity: sens}
	if perStep {
		ev.PerStep = make([]float64, n)
	}
	cum, tot := 0.0, 0.0
	for j, bj := range b {
		cum += bj * bj
		tot += cum
		if perStep {
			ev.PerStep[j] = cum
		}
	}
	if math.IsNaN(tot) || math.IsInf(tot, 0) {
		return nil, inputErr("the strategy's error overflows: its inverse is unstable")
	}
	ev.Total, ev.Mean, ev.Max = tot, tot/float64(n), cum
	ev.MeanLoss, ev.MaxLoss = ev.Mean*sens.Squared, ev.Max*sens.Squared
	return ev, nil
}

// InverseSeries returns the first n coefficients of the inverse of the
// lower-triangular Toeplitz matrix with coefficients c (c[0] > 0; c may be
// shorter than n: a banded C), by forward substitution in O(n·len(c)).
func InverseSeries(c []float64, n int) ([]float64, error) {
	if len(c) == 0 || !(c[0] > 0) {
		return nil, inputErr("Toeplitz strategy needs a positive diagonal coefficient")
	}
	r := make([]float64, n)
	for t := 0; t < n; t++ {
		v := boolf(t == 0)
		for j := 1; j < len(c) && j <= t; j++ {
			v -= c[j] * r[t-j]
		}
		r[t] = v / c[0]
	}
	return r, nil
}

// SqrtBands returns the first min(b, n) Toeplitz coefficients of the
// square root of the prefix workload, (1 − z)^(−1/2): c₀ = 1,
// cⱼ = cⱼ₋₁·(2j − 1)/(2j) — a banded Toeplitz strategy with positive,
// decreasing coefficients (so its min-separation sensitivity is exact),
// not optimized for the schema: OptimizeBandedToeplitz's start.
func SqrtBands(b, n int) []float64 {
	c := make([]float64, min(b, n))
	for j := range c {
		if j == 0 {
			c[j] = 1
		} else {
			c[j] = c[j-1] * float64(2*j-1) / float64(2*j)
		}
	}
	return c
}

// ValidateStructured checks the schema against n steps for the structured
// families (n up to MaxToeplitzSteps).
func (s Schema) ValidateStructured(n int) error { return s.validate(n, MaxToeplitzSteps) }
