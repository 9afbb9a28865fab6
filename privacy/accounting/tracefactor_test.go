package accounting

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// TraceFactor (from R⁻¹) agrees with TraceGramPinv (Cholesky of X = RᵀR),
// two different computations of the same tr(V X⁻¹); R is well conditioned
// (unit diagonal plus small entries), so 1e-11 relative is rounding only.
func TestTraceFactorMatchesGram(t *testing.T) {
	const n = 24
	rng := rand.New(rand.NewPCG(3, 4))
	r := mat.NewTriDense(n, mat.Upper, nil)
	for i := 0; i < n; i++ {
		r.SetTri(i, i, 1+rng.Float64())
		for j := i + 1; j < n; j++ {
			r.SetTri(i, j, 0.3*(rng.Float64()-0.5))
		}
	}
	var x mat.SymDense
	x.SymOuterK(1, r.T())
	w, _ := workload.NewAllRange(n)
	v := w.Gram()
	a, err := TraceFactor(v, r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := TraceGramPinv(v, &x)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a-b) > 1e-11*b {
		t.Fatalf("TraceFactor %v, TraceGramPinv %v", a, b)
	}
	if _, err := TraceFactor(v, mat.NewTriDense(3, mat.Upper, nil)); err == nil {
		t.Fatal("size mismatch accepted")
	}
}

// NoiseFor maps calibrate's one budget type onto the unit-sensitivity noise:
// the same values as the per-mechanism constructors, and σ = 1/√(2ρ) for
// zCDP (Bun & Steinke's Proposition 1.6, closed form).
func TestNoiseFor(t *testing.T) {
	lap, _ := LaplaceNoise(0.5)
	if got, err := NoiseFor(budgettest.PureDP(0.5), ""); err != nil || got != lap {
		t.Errorf("pure: %+v, %v; want %+v", got, err, lap)
	}
	if got, err := NoiseFor(budgettest.ApproxDP(1, 1e-6), Classic); err == nil {
		t.Errorf("classic needs ε < 1: got %+v", got)
	}
	want, _ := GaussianNoise(0.5, 1e-6, Classic)
	if got, err := NoiseFor(budgettest.ApproxDP(0.5, 1e-6), Classic); err != nil || got != want {
		t.Errorf("approx: %+v, %v; want %+v", got, err, want)
	}
	z, err := NoiseFor(budgettest.ZCDP(0.5), "")
	if err != nil || z.Mechanism != calibrate.Gaussian || math.Abs(z.Scale-1) > 1e-15 {
		t.Errorf("zcdp: %+v, %v", z, err)
	}
	if _, err := NoiseFor(calibrate.Budget{}, ""); !errors.Is(err, ErrInput) {
		t.Errorf("zero budget: %v", err)
	}
}
