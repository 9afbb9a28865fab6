package mf

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Kind names a participation schema.
type Kind string

// The participation schemas.
const (
	// Single: every record is used at most once (sens² = max_j X_jj).
	Single Kind = "single"
	// FixedEpoch: n = k·b and a record is used at steps r, r+b, …, r+(k−1)b
	// (Choquette-Choo et al., "Multi-Epoch Matrix Factorization Mechanisms",
	// ICML 2023).
	FixedEpoch Kind = "fixed-epoch"
	// MinSep: any two uses of a record are at least b steps apart and a
	// record is used at most k times; optimized over b-banded strategies
	// (Choquette-Choo et al., "(Amplified) Banded Matrix Factorization",
	// NeurIPS 2023).
	MinSep Kind = "min-sep"
)

// Schema is a participation schema for n steps.
type Schema struct {
	Kind Kind
	// Epochs is k: the participations per record (FixedEpoch: exactly k,
	// n = k·b; MinSep: at most k, 0 meaning as many as the separation
	// allows, ⌈n/b⌉).
	Epochs int
	// MinSep is b for MinSep (the minimum separation); FixedEpoch derives
	// its b = n/k.
	MinSep int
	// Bands is the number of bands of the strategy for MinSep (X_ij = 0 for
	// |i−j| ≥ Bands); 0 means MinSep. It must not exceed MinSep, or two
	// participations of one record would interact.
	Bands int
}

// Validate checks the schema against n steps.
func (s Schema) Validate(n int) error { return s.validate(n, MaxSteps) }

// validate checks the schema against n ≤ most steps (MaxSteps for the
// dense and banded solvers, MaxToeplitzSteps for the structured families).
func (s Schema) validate(n, most int) error {
	if n < 1 || n > most {
		return inputErr("number of steps n = %d outside [1, %d]", n, most)
	}
	switch s.Kind {
	case Single:
		return nil
	case FixedEpoch:
		if s.Epochs < 1 || s.Epochs > n {
			return inputErr("epochs k = %d outside [1, n = %d]", s.Epochs, n)
		}
		if s.Epochs > MaxEpochs {
			return inputErr("epochs k = %d above %d: the fixed-epoch solver's per-pattern systems grow as k⁴", s.Epochs, MaxEpochs)
		}
		if n%s.Epochs != 0 {
			lo := n / s.Epochs * s.Epochs
			hint := fmt.Sprintf("n = %d", lo+s.Epochs)
			if lo > 0 {
				hint = fmt.Sprintf("n = %d or %d", lo, lo+s.Epochs)
			}
			return inputErr("fixed-epoch schema needs n = k·b: n = %d is not divisible by k = %d (nearest valid: %s)", n, s.Epochs, hint)
		}
		return nil
	case MinSep:
		if s.MinSep < 1 || s.MinSep > n {
			return inputErr("minimum separation b = %d outside [1, n = %d]", s.MinSep, n)
		}
		if s.Epochs < 0 {
			return inputErr("participations k = %d is negative", s.Epochs)
		}
		if s.Bands < 0 || s.Bands > s.MinSep {
			return inputErr("bands = %d outside [1, min-sep = %d]: a wider band lets participations interact", s.Bands, s.MinSep)
		}
		return nil
	}
	return inputErr("unknown schema %q (want single, fixed-epoch or min-sep)", s.Kind)
}

// MaxEpochs caps k for the fixed-epoch schema: each pattern carries
// 1 + k(k−1)/2 multipliers, and the preconditioner holds their k⁴/4-entry
// block.
const MaxEpochs = 64

// Period is b: the steps between two participations (FixedEpoch: n/k;
// MinSep: the minimum separation; Single: n).
func (s Schema) Period(n int) int {
	switch s.Kind {
	case FixedEpoch:
		return n / s.Epochs
	case MinSep:
		return s.MinSep
	}
	return n
}

// bands is the band count of a MinSep strategy.
func (s Schema) bands() int {
	if s.Bands > 0 {
		return s.Bands
	}
	return s.MinSep
}

// Participations is the most uses of one record the schema allows in n
// steps: 1, k, or min(k, ⌈n/b⌉).
func (s Schema) Participations(n int) int {
	switch s.Kind {
	case FixedEpoch:
		return s.Epochs
	case MinSep:
		most := (n + s.MinSep - 1) / s.MinSep
		if s.Epochs > 0 && s.Epochs < most {
			return s.Epochs
		}
		return most
	}
	return 1
}

// String names the schema with its parameters.
func (s Schema) String() string {
	switch s.Kind {
	case FixedEpoch:
		return fmt.Sprintf("fixed-epoch k=%d", s.Epochs)
	case MinSep:
		return fmt.Sprintf("min-sep b=%d k=%d bands=%d", s.MinSep, s.Epochs, s.bands())
	}
	return string(s.Kind)
}

// Sensitivity is a strategy's squared L2 sensitivity under a schema.
type Sensitivity struct {
	// Squared is sens²: the largest ‖Σ_{i∈π} C_{:,i}·gᵢᵀ‖_F² over the
	// participation patterns π the schema allows and gradients ‖gᵢ‖ ≤ 1,
	// bounded by Σ_{i,j∈π} |X_ij| (X = CᵀC).
	Squared float64
	// Exact reports that Squared is attained, not only an upper bound:
	// the bound Σ|X_ij| is attained when every pattern's block of X is
	// entrywise non-negative (all gradients equal) or diagonal (orthogonal
	// gradients), as on the feasible sets the solvers optimize over.
	Exact bool
	// Pattern is one participation pattern (0-based steps) attaining it.
	Pattern []int
}

// StrategySensitivity computes sens² of the strategy with Gram X under the
// schema. For MinSep, X must be Bands-banded (|X_ij| ≤ 1e-12·max|X| for
// |i−j| ≥ Bands): then no two uses of a record interact, sens² is the largest
// Σ_{i∈π} X_ii over patterns with separation ≥ b and at most k uses, and a
// dynamic program over the steps finds it exactly.
func StrategySensitivity(x *mat.SymDense, s Schema) (Sensitivity, error) {
	if x == nil {
		return Sensitivity{}, inputErr("nil strategy Gram")
	}
	n := x.SymmetricDim()
	if err := s.Validate(n); err != nil {
		return Sensitivity{}, err
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return Sensitivity{}, inputErr("strategy Gram entry (%d,%d) is %v", i, j, v)
			}
		}
	}
	switch s.Kind {
	case FixedEpoch:
		return epochSensitivity(x, s.Period(n)), nil
	case MinSep:
		return minSepSensitivity(x, s)
	}
	best, at := math.Inf(-1), 0
	for j := 0; j < n; j++ {
		if d := x.At(j, j); d > best {
			best, at = d, j
		}
	}
	return Sensitivity{Squared: best, Exact: true, Pattern: []int{at}}, nil
}

// epochSensitivity is max_r Σ_{i,j∈π_r} |X_ij| over the patterns
// π_r = {r, r+b, …}.
func epochSensitivity(x *mat.SymDense, b int) Sensitivity {
	n := x.SymmetricDim()
	out := Sensitivity{Squared: math.Inf(-1), Exact: true}
	// Entries below 1e-12·max X_ii (rounding in a computed CᵀC) change
	// Σ|X_ij| by less than that relative amount and are not counted as
	// sign information.
	tiny := 0.0
	for i := 0; i < n; i++ {
		tiny = math.Max(tiny, 1e-12*x.At(i, i))
	}
	for r := 0; r < b; r++ {
		sum, neg := 0.0, false
		for i := r; i < n; i += b {
			for j := r; j < n; j += b {
				v := x.At(i, j)
				sum += math.Abs(v)
				neg = neg || i != j && v < -tiny
			}
		}
		if sum > out.Squared {
			out.Squared = sum
			out.Pattern = pattern(r, b, n)
		}
		if neg && patternLen(r, b, n) > 2 {
			// A negative entry among three or more uses: Σ|X_ij| may
			// exceed the supremum. (With two uses, opposite gradients
			// attain it; with none negative, equal gradients do.)
			out.Exact = false
		}
	}
	return out
}

func patternLen(r, b, n int) int { return (n - r + b - 1) / b }

func pattern(r, b, n int) []int {
	var p []int
	for i := r; i < n; i += b {
		p = append(p, i)
	}
	return p
}

// minSepSensitivity maximizes Σ_{i∈π} X_ii over patterns π with gaps ≥ b
// and |π| ≤ k by dynamic programming: best[j][c] is the largest sum of c
// uses among steps ≥ j.
func minSepSensitivity(x *mat.SymDense, s Schema) (Sensitivity, error) {
	n := x.SymmetricDim()
	bw, b := s.bands(), s.MinSep
	scale := 0.0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			scale = math.Max(scale, math.Abs(x.At(i, j)))
		}
	}
	for i := 0; i < n; i++ {
		for j := i + bw; j < n; j++ {
			if math.Abs(x.At(i, j)) > 1e-12*scale {
				return Sensitivity{}, inputErr("strategy is not %d-banded (X[%d,%d] = %.3g): its min-separation sensitivity is computed only for banded strategies", bw, i, j, x.At(i, j))
			}
		}
	}
	k := s.Participations(n)
	best := make([][]float64, n+1)
	for j := range best {
		best[j] = make([]float64, k+1)
	}
	for j := n - 1; j >= 0; j-- {
		for c := 1; c <= k; c++ {
			skip := best[j+1][c]
			take := x.At(j, j)
			if j+b < n {
				take += best[j+b][c-1]
			}
			best[j][c] = math.Max(skip, take)
		}
	}
	out := Sensitivity{Squared: best[0][k], Exact: true}
	for j, c := 0, k; j < n && c > 0; { // trace one maximizer back
		take := x.At(j, j)
		if j+b < n {
			take += best[j+b][c-1]
		}
		if take >= best[j+1][c] {
			out.Pattern = append(out.Pattern, j)
			j, c = j+b, c-1
		} else {
			j++
		}
	}
	return out, nil
}
