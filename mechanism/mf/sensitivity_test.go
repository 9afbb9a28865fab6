package mf

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteSensitivity enumerates every subset of the n steps, keeps those the
// schema allows (defined here from the schema's words, not from the
// package's pattern code) and returns the largest uᵀX_πu over them and all
// sign vectors u: the sensitivity for scalar gradients, which for the
// matrices tested (pattern blocks entrywise non-negative or diagonal)
// equals the supremum over gradients in any dimension.
func bruteSensitivity(x *mat.SymDense, allowed func([]int) bool) float64 {
	n := x.SymmetricDim()
	best := math.Inf(-1)
	for mask := 1; mask < 1<<n; mask++ {
		var p []int
		for i := 0; i < n; i++ {
			if mask>>i&1 == 1 {
				p = append(p, i)
			}
		}
		if !allowed(p) {
			continue
		}
		for signs := 0; signs < 1<<len(p); signs++ {
			s := 0.0
			for a, i := range p {
				for c, j := range p {
					sa, sc := 1.0, 1.0
					if signs>>a&1 == 1 {
						sa = -1
					}
					if signs>>c&1 == 1 {
						sc = -1
					}
					s += sa * sc * x.At(i, j)
				}
			}
			best = math.Max(best, s)
		}
	}
	return best
}

func randomGram(n int, rng *rand.Rand, nonneg bool, keep func(i, j int) bool) *mat.SymDense {
	for {
		x := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			x.SetSym(i, i, 1+rng.Float64())
			for j := i + 1; j < n; j++ {
				if !keep(i, j) {
					continue
				}
				v := 0.3 * (rng.Float64() - 0.5)
				if nonneg {
					v = math.Abs(v)
				}
				x.SetSym(i, j, v)
			}
		}
		var ch mat.Cholesky
		if ch.Factorize(x) {
			return x
		}
	}
}

func TestSensitivityByEnumeration(t *testing.T) {
	const n = 8
	rng := rand.New(rand.NewPCG(1, 2))
	all := func(i, j int) bool { return true }
	for _, k := range []int{1, 2, 4, 8} {
		b := n / k
		fixed := func(p []int) bool { // exactly the steps r, r+b, …, r+(k−1)b
			if len(p) != k {
				return false
			}
			for a := 1; a < len(p); a++ {
				if p[a]-p[a-1] != b {
					return false
				}
			}
			return true
		}
		offPattern := func(i, j int) bool { return i%b != j%b }
		for trial, x := range []*mat.SymDense{randomGram(n, rng, true, all), randomGram(n, rng, false, offPattern)} {
			got, err := StrategySensitivity(x, Schema{Kind: FixedEpoch, Epochs: k})
			if err != nil {
				t.Fatal(err)
			}
			want := bruteSensitivity(x, fixed)
			if !got.Exact || math.Abs(got.Squared-want) > 1e-12*want {
				t.Errorf("fixed-epoch k=%d trial %d: sens² %v (exact %v), enumeration %v", k, trial, got.Squared, got.Exact, want)
			}
		}
	}
	for _, c := range []struct{ b, k, bands int }{{1, 0, 1}, {2, 3, 2}, {3, 2, 3}, {3, 0, 2}, {5, 4, 5}} {
		sepOK := func(p []int) bool {
			if c.k > 0 && len(p) > c.k {
				return false
			}
			for a := 1; a < len(p); a++ {
				if p[a]-p[a-1] < c.b {
					return false
				}
			}
			return true
		}
		x := randomGram(n, rng, false, func(i, j int) bool { return j-i < c.bands })
		got, err := StrategySensitivity(x, Schema{Kind: MinSep, MinSep: c.b, Epochs: c.k, Bands: c.bands})
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteSensitivity(x, sepOK); math.Abs(got.Squared-want) > 1e-12*want {
			t.Errorf("min-sep %+v: sens² %v, enumeration %v", c, got.Squared, want)
		}
		if p := got.Pattern; !sepOK(p) {
			t.Errorf("min-sep %+v: reported pattern %v not allowed", c, p)
		}
	}
	x := randomGram(n, rng, false, all)
	got, _ := StrategySensitivity(x, Schema{Kind: Single})
	if want := bruteSensitivity(x, func(p []int) bool { return len(p) == 1 }); got.Squared != want {
		t.Errorf("single: %v, enumeration %v", got.Squared, want)
	}
}

// A negative entry among three uses makes Σ|X_ij| only a bound: the
// package must say so rather than claim exactness.
func TestSensitivityInexactFlag(t *testing.T) {
	x := mat.NewSymDense(3, []float64{1, -0.2, 0.3, -0.2, 1, 0.1, 0.3, 0.1, 1})
	got, err := StrategySensitivity(x, Schema{Kind: FixedEpoch, Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	brute := bruteSensitivity(x, func(p []int) bool { return len(p) == 3 })
	if got.Exact || got.Squared < brute {
		t.Errorf("sens² %v exact=%v, scalar-gradient enumeration %v: want an inexact upper bound", got.Squared, got.Exact, brute)
	}
}

func TestSchemaErrors(t *testing.T) {
	x := mat.NewSymDense(6, nil)
	for i := 0; i < 6; i++ {
		x.SetSym(i, i, 1)
	}
	bad := []Schema{{Kind: FixedEpoch, Epochs: 4}, {Kind: FixedEpoch, Epochs: 0}, {Kind: MinSep, MinSep: 7},
		{Kind: MinSep, MinSep: 2, Bands: 3}, {Kind: "nope"}, {Kind: MinSep, MinSep: 2, Epochs: -1}}
	for _, s := range bad {
		if _, err := StrategySensitivity(x, s); err == nil || !errorsIsInput(err) {
			t.Errorf("%+v: err %v, want an input error", s, err)
		}
	}
	x.SetSym(0, 5, 0.1)
	if _, err := StrategySensitivity(x, Schema{Kind: MinSep, MinSep: 2}); err == nil {
		t.Error("non-banded strategy under min-sep: want an error")
	}
}
