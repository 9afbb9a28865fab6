package mf

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Bound is a lower bound on the loss of every mechanism (any strategy C,
// not only a structured one) under a schema.
type Bound struct {
	// Total bounds the total squared error over the n steps × sens², per
	// unit σ²; Mean = Total/n bounds the mean per-step loss (and so the
	// max).
	Total, Mean float64
	// Rows and Cols are the size of the compressed matrix whose nuclear
	// norm gave it (n and the pattern count when nothing was compressed).
	Rows, Cols int
	// Source names the bound.
	Source string
}

// DefaultBoundDim caps the compressed matrix of ToeplitzLowerBound.
const DefaultBoundDim = 600

// ToeplitzLowerBound is a lower bound, valid for every strategy, on the
// loss of the Toeplitz workload under the schema, at any n in
// O(maxDim² · k + maxDim³) time and O(n + maxDim²) memory.
//
// Derivation. Take the b' = min(b, n) disjoint patterns π_r = {r, r+b, …}
// with K uses each (K = the schema's participations, only uses below n),
// E the n×b' matrix of their indicators, and Λ = E·Eᵀ ⪰ 0. Each π_r is a
// pattern the schema allows (fixed-epoch patterns are min-separation
// patterns), so ‖C·1_{π_r}‖² ≤ sens² and tr(ΛX) = Σ_r ‖C·1_{π_r}‖² ≤
// b'·sens². Weak duality, tr(V X⁻¹) + y·tr(ΛX) ≥ 2√y·‖A·Λ^{1/2}‖_* for
// every y > 0 and X ≻ 0, optimized over y, gives
//
//	tr(V X⁻¹)·sens² ≥ T²/b',  T = ‖A·Λ^{1/2}‖_* = ‖A·E‖_*.
//
// For single participation (b' = n, E = I) this is the SVD bound. A·E is
// n×b'; at large n its nuclear norm is bounded below by that of the
// compressed Pᵀ·A·E·Q (P, Q average consecutive rows and columns in
// blocks, scaled to orthonormal columns: compression never raises a
// nuclear norm), at most maxDim on a side, whose entries are rectangle
// sums of A's Toeplitz coefficients from their double prefix sums.
func ToeplitzLowerBound(w ToeplitzWorkload, n int, s Schema, maxDim int) (*Bound, error) {
	if err := s.validate(n, MaxToeplitzSteps); err != nil {
		return nil, err
	}
	if maxDim <= 0 {
		maxDim = DefaultBoundDim
	}
	K, b := s.Participations(n), s.Period(n)
	bp := min(b, n)
	a := w.Coefs(n)
	// H(x) = Σ_{y≤x} Σ_{z≤y} a_z; H(x) = 0 for x < 0.
	H := make([]float64, n)
	f, h := 0.0, 0.0
	for x := 0; x < n; x++ {
		f += a[x]
		h += f
		H[x] = h
	}
	hat := func(x int) float64 {
		if x < 0 {
			return 0
		}
		return H[min(x, n-1)] + float64(max(0, x-n+1))*f // never needed beyond n−1
	}
	rect := func(t0, t1, u0, u1 int) float64 { // Σ_{t∈[t0,t1)} Σ_{u∈[u0,u1)} a_{t−u}
		return hat(t1-1-u0) - hat(t0-1-u0) - hat(t1-1-u1) + hat(t0-1-u1)
	}
	rows := blocks(n, maxDim)
	cols := blocks(bp, maxDim)
	m := mat.NewDense(len(rows)-1, len(cols)-1, nil)
	for I := 0; I+1 < len(rows); I++ {
		t0, t1 := rows[I], rows[I+1]
		for J := 0; J+1 < len(cols); J++ {
			r0, r1 := cols[J], cols[J+1]
			v := 0.0
			for j := 0; j < K && r0+j*b < n; j++ {
				v += rect(t0, t1, r0+j*b, r1+j*b)
			}
			m.Set(I, J, v/math.Sqrt(float64((t1-t0)*(r1-r0))))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(m, mat.SVDNone) {
		return nil, inputErr("singular value decomposition failed")
	}
	T := 0.0
	for _, v := range svd.Values(nil) {
		T += v
	}
	bd := &Bound{Total: T * T / float64(bp), Rows: len(rows) - 1, Cols: len(cols) - 1}
	bd.Mean = bd.Total / float64(n)
	bd.Source = "nuclear-norm dual bound ‖A·E‖²_*/b over the schema's b disjoint patterns"
	if bd.Rows < n || bd.Cols < bp {
		bd.Source += " (compressed by block averaging)"
	}
	return bd, nil
}

// blocks splits [0, n) into at most m nearly equal consecutive blocks and
// returns their boundaries.
func blocks(n, m int) []int {
	m = min(m, n)
	out := make([]int, m+1)
	for i := 0; i <= m; i++ {
		out[i] = int(int64(i) * int64(n) / int64(m))
	}
	return out
}
