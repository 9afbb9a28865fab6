package domain

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/pinv"
)

// NewPinv's cut-off was a fixed 1e-12·λ_max; it is now rank.Cutoff,
// d·ε·λ_max (through pinv.NewSym), which is smaller for d < 4504 and larger
// above. On the strategy Grams NewPinv is given — unit-diagonal Grams of
// full rank (smallest eigenvalue ≳ 1e-9 after regularization), and exactly
// singular ones whose zero eigenvalues are rounding (totals X = J, stacked
// identity-and-total, low-rank unit-diagonal Grams) — both rules keep the
// same eigenvalues, so X⁺, the projector and every Trace are bit for bit
// what they were.
func TestPinvCutoffAgreesWithOld(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	grams := map[string]*mat.SymDense{}
	for _, d := range []int{1, 2, 3, 8, 64, 300} {
		j := mat.NewSymDense(d, nil)
		id := mat.NewSymDense(d, nil)
		for a := 0; a < d; a++ {
			id.SetSym(a, a, 1)
			for b := a; b < d; b++ {
				j.SetSym(a, b, 1)
			}
		}
		grams["total "+strconv.Itoa(d)] = j
		grams["identity "+strconv.Itoa(d)] = id
		// [I; 1ᵀ] scaled to unit column norm: X = (I + J)/2.
		ij := mat.NewSymDense(d, nil)
		ij.AddSym(id, j)
		ij.ScaleSym(0.5, ij)
		grams["identity and total "+strconv.Itoa(d)] = ij
		for _, r := range []int{1, (d + 1) / 2, d} {
			b := mat.NewDense(r, d, nil)
			for c := 0; c < d; c++ {
				norm := 0.0
				for a := 0; a < r; a++ {
					v := rng.NormFloat64()
					b.Set(a, c, v)
					norm += v * v
				}
				for a := 0; a < r; a++ {
					b.Set(a, c, b.At(a, c)/math.Sqrt(norm))
				}
			}
			x := mat.NewSymDense(d, nil)
			x.SymOuterK(1, b.T())
			grams["unit diagonal rank "+strconv.Itoa(r)+" of "+strconv.Itoa(d)] = x
			// A regularized solve of a singular workload: smallest eigenvalue ~1e-9.
			reg := mat.NewSymDense(d, nil)
			reg.ScaleSym(1-1e-9, x)
			for a := 0; a < d; a++ {
				reg.SetSym(a, a, reg.At(a, a)+1e-9)
			}
			grams["regularized rank "+strconv.Itoa(r)+" of "+strconv.Itoa(d)] = reg
		}
	}
	for name, x := range grams {
		e, err := pinv.NewSym(x)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lmax := 0.0
		for _, l := range e.Values {
			lmax = math.Max(lmax, l)
		}
		for k, l := range e.Values {
			if old := l > 1e-12*lmax; old != e.Kept(k) {
				t.Errorf("%s: eigenvalue %g (largest %g): kept %v, the old 1e-12 rule %v", name, l, lmax, e.Kept(k), old)
			}
		}
	}
}
