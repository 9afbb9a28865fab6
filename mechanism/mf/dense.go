package mf

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
)

// Dense helpers over blas.General (row-major, full symmetric storage).

// upperFactor returns an upper-triangular F with FᵀF = V: V's Cholesky
// factor when V is numerically definite, else the triangular factor of
// diag(√μ)·Qᵀ from V's eigendecomposition with eigenvalues at rounding level
// dropped (which lowers V, so a dual bound computed with it stays a bound).
func upperFactor(v blas.General) (blas.General, bool) {
	n := v.Rows
	f := blas.NewSquare(n)
	blas.Copy(f, v)
	if blas.Cholesky(f) {
		return f, true
	}
	blas.Copy(f, v)
	mu := make([]float64, n)
	if !blas.SymEig(f, mu, true) {
		return f, false
	}
	cut := 32 * float64(n) * 2.2e-16 * math.Abs(mu[n-1])
	w := blas.NewSquare(n) // w = diag(√μ)·Qᵀ
	for i := 0; i < n; i++ {
		s := 0.0
		if mu[i] > cut {
			s = math.Sqrt(mu[i])
		}
		for j := 0; j < n; j++ {
			w.Data[i*n+j] = s * f.Data[j*n+i]
		}
	}
	return w, blas.UpperTrapezoid(w)
}

// objective returns tr(V X⁻¹) = ‖F U⁻¹‖²_F for X = UᵀU, leaving U (upper)
// in u and F·U⁻¹ in t; ok is false if X is not numerically definite.
func objective(f, x, u, t blas.General) (float64, bool) {
	blas.Copy(u, x)
	if !blas.Cholesky(u) {
		return math.Inf(1), false
	}
	blas.Copy(t, f)
	blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, u, t)
	s := 0.0
	for _, v := range t.Data {
		s += v * v
	}
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return math.Inf(1), false
	}
	return s, true
}

// sumSqrtEig returns Σ √μᵢ over the eigenvalues μ of the positive
// semidefinite a (destroyed), negative rounding-level values counted as 0.
func sumSqrtEig(a blas.General) (float64, bool) {
	n := a.Rows
	mu := make([]float64, n)
	if !blas.SymEig(a, mu, false) {
		return 0, false
	}
	s := 0.0
	for _, m := range mu {
		if m > 0 {
			s += math.Sqrt(m)
		}
	}
	return s, true
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

func row(g blas.General, i int) []float64 { return g.Data[i*g.Stride : i*g.Stride+g.Cols] }
