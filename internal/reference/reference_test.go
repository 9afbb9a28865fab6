package reference_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// traceSqrt returns the trace of the square root of the PSD matrix a, by
// gonum's dense symmetric eigensolver (negative rounding-level eigenvalues
// count as 0).
func traceSqrt(t *testing.T, a *mat.SymDense) float64 {
	t.Helper()
	var e mat.EigenSym
	if !e.Factorize(a, false) {
		t.Fatal("eigendecomposition failed")
	}
	var s float64
	for _, l := range e.Values(nil) {
		s += math.Sqrt(math.Max(l, 0))
	}
	return s
}

// bracket returns a weak-duality lower bound and a primal value of
// min tr(V X⁻¹) s.t. diag(X) = 1, both computed here with gonum's dense
// linear algebra from a strategy X that newton.Solve proposes. The check
// does not trust newton's numbers: X is first rescaled to unit diagonal
// (so it is feasible and tr(V X⁻¹) is an upper bound on the optimum
// whatever newton did), and the dual value
// g(y) = 2·tr((D^{1/2} V D^{1/2})^{1/2}) − Σ yᵢ is a lower bound for every
// y > 0, here y = c·diag(X⁻¹VX⁻¹) with the best multiple c
// (g(c·y) = 2√c·tr(·) − c·Σy is maximal at √c = tr(·)/Σy).
func bracket(t *testing.T, v *mat.SymDense) (dual, primal float64) {
	t.Helper()
	n := v.SymmetricDim()
	res, err := newton.Solve(context.Background(), v, &newton.Options{Tol: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x.SetSym(i, j, res.X.At(i, j)/math.Sqrt(res.X.At(i, i)*res.X.At(j, j)))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(x) {
		t.Fatal("X is not positive definite")
	}
	var xinv mat.SymDense
	if err := ch.InverseTo(&xinv); err != nil {
		t.Fatal(err)
	}
	var vx mat.Dense
	vx.Mul(v, &xinv)
	primal = mat.Trace(&vx)
	var m mat.Dense
	m.Mul(&xinv, &vx) // X⁻¹ V X⁻¹
	y := make([]float64, n)
	var sumY float64
	for i := range y {
		y[i] = m.At(i, i)
		sumY += y[i]
	}
	dvd := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			dvd.SetSym(i, j, math.Sqrt(y[i]*y[j])*v.At(i, j))
		}
	}
	tr := traceSqrt(t, dvd)
	sc := tr / sumY
	return 2*sc*tr - sc*sc*sumY, primal
}

// Every constant lies in the dense certified bracket [dual, primal] of its
// workload, which is at most 1e-12 wide (relative): a wrong constant, or a
// wrong X, fails it. The 1e-12 slack covers the dense computations'
// rounding (n ≤ 256, condition numbers below 1e6); the constants are
// rounded to 13 significant digits, ±5e-13 relative.
func TestCertifiedOptima(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    func() (workload.Workload, error)
		c    float64
	}{
		{"prefix n=32", func() (workload.Workload, error) { return workload.NewPrefix(32) }, reference.PrefixN32},
		{"prefix n=64", func() (workload.Workload, error) { return workload.NewPrefix(64) }, reference.PrefixN64},
		{"prefix n=256", func() (workload.Workload, error) { return workload.NewPrefix(256) }, reference.PrefixN256},
		{"allrange n=64", func() (workload.Workload, error) { return workload.NewAllRange(64) }, reference.AllRangeN64},
		{"allrange n=256", func() (workload.Workload, error) { return workload.NewAllRange(256) }, reference.AllRangeN256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := tc.w()
			if err != nil {
				t.Fatal(err)
			}
			dual, primal := bracket(t, w.Gram())
			t.Logf("%s: bracket [%.16g, %.16g], constant %.13g", tc.name, dual, primal, tc.c)
			const tol = 1e-12
			if !(dual <= tc.c*(1+tol) && tc.c <= primal*(1+tol)) {
				t.Fatalf("reference %.13g is outside the certified bracket [%.16g, %.16g]", tc.c, dual, primal)
			}
			if (primal-dual)/primal > tol {
				t.Fatalf("bracket [%.16g, %.16g] too wide to check 13 digits", dual, primal)
			}
		})
	}
}

// The published values the constants replace are each within their
// solver's stated accuracy of the certified constant, and differ from it:
// tests must use the certified constant, not accept both by widening a
// tolerance.
func TestPublishedValuesAgree(t *testing.T) {
	for _, tc := range []struct {
		name            string
		published, c    float64
		accuracy, below float64
	}{
		// CVXOPT's interior-point value for Prefix n = 32 is off in the 8th digit.
		{"prefix n=32 (CVXOPT)", 114.559696, reference.PrefixN32, 1e-7, 1e-8},
		{"prefix n=64", reference.PrefixN64Published, reference.PrefixN64, 1e-9, 0},
		{"prefix n=256", reference.PrefixN256Published, reference.PrefixN256, 1e-9, 0},
	} {
		d := math.Abs(tc.published-tc.c) / tc.c
		if d > tc.accuracy {
			t.Errorf("%s: published %.10g is %.2g away from the certified %.13g (more than %.0g)", tc.name, tc.published, d, tc.c, tc.accuracy)
		}
		if d < tc.below {
			t.Errorf("%s: published %.10g should differ from the certified %.13g", tc.name, tc.published, tc.c)
		}
	}
}

// Marginals3Way4x5 against its closed form, evaluated here in float64
// (a few roundings: 1e-15 relative), to the constant's 15 digits (5e-15).
func TestMarginals3Way4x5(t *testing.T) {
	tr := 4*math.Sqrt(10) + 60*math.Sqrt(6) + 360*math.Sqrt(3) + 1080
	closed := tr * tr / 1024
	if d := math.Abs(closed-reference.Marginals3Way4x5) / closed; d > 1e-14 {
		t.Fatalf("closed form %.16g, constant %.15g (relative %.2g)", closed, reference.Marginals3Way4x5, d)
	}
}
