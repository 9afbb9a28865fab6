package reference_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/mechanism/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// symSqrt returns the trace of the square root of the PSD matrix a, by
// gonum's dense symmetric eigensolver (negative rounding-level eigenvalues
// count as 0).
func traceSqrt(t *testing.T, a *mat.SymDense) float64 {
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

// The constant lies in [dual bound, primal value] of a strategy X, both
// computed here with gonum's dense linear algebra (an independent dense
// certificate: weak duality makes every dual value a lower bound on the
// optimum). X comes from newton.Solve, but the check does not trust its
// numbers: a wrong constant, or a wrong X, fails it. The bracket is
// ~1e-13 wide; 1e-12 relative allows the dense computations' rounding.
func TestPrefixN32(t *testing.T) {
	const n = 32
	w, err := workload.NewPrefix(n)
	if err != nil {
		t.Fatal(err)
	}
	v := w.Gram()
	res, err := newton.Solve(context.Background(), v, &newton.Options{Tol: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	x := res.X
	// Primal: tr(V X⁻¹) by Cholesky solve.
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
	primal := mat.Trace(&vx)
	// Dual at y = diag(X⁻¹VX⁻¹), scaled by the best multiple c (g(c·y) =
	// 2√c·tr(·) − c·Σy is maximal at √c = tr(·)/Σy).
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
	dual := 2*sc*tr - sc*sc*sumY
	const tol = 1e-12
	c := reference.PrefixN32
	if !(dual <= c*(1+tol) && c <= primal*(1+tol)) {
		t.Fatalf("reference %.13g is outside the certified bracket [%.13g, %.13g]", c, dual, primal)
	}
	if (primal-dual)/primal > 1e-12 {
		t.Fatalf("bracket [%.13g, %.13g] too wide to check 13 digits", dual, primal)
	}
	// The brief's interior-point value is off in the 8th digit.
	if math.Abs(114.559696-c)/c < 1e-8 {
		t.Fatal("the constant should differ from the brief's rounded CVXOPT value")
	}
}
