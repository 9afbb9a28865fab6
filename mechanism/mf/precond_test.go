package mf

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The preconditioner's blocks come from a sum of exponentials for the
// Cauchy kernel K, so each must equal the corresponding diagonal block of
// the multiplier system 𝒜 — formed here column by column from 𝒜's own
// products (two GEMMs each, K exact) — within relative error precTol in
// the quadratic form: every eigenvalue of L⁻¹·Ã·L⁻ᵀ (𝒜's block = L·Lᵀ)
// lies in [1 − precTol, 1 + precTol]. Two cases: one block holding every
// pattern (k = 3) and several blocks of several patterns each (k = 8:
// 29 multipliers a pattern, 8 patterns a block, 2 blocks), each on
// momentum 0.9, whose strongly coupled consecutive patterns are what the
// blocks are for.
func TestBlockPreconditionerMatchesSystem(t *testing.T) {
	for _, c := range []struct{ n, k, groups int }{{24, 3, 1}, {128, 8, 2}} {
		w, err := ParseWorkload("momentum:0.9", c.n)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := newEpochSolver(w.V, c.k, nil)
		if !ok {
			t.Fatal("factoring V failed")
		}
		e.start()
		if _, ok := objective(e.f, e.x, e.u, e.t); !ok || !e.whiten() {
			t.Fatal("start not definite or eigendecomposition failed")
		}
		pc := newBlockJacobi(e)
		pc.build()
		if len(pc.blocks) != c.groups {
			t.Fatalf("n=%d k=%d: %d blocks, want %d", c.n, c.k, len(pc.blocks), c.groups)
		}
		m := e.b * e.perPattern()
		exact := mat.NewDense(m, m, nil) // 𝒜, column by column
		unit, col := make([]float64, m), make([]float64, m)
		for j := 0; j < m; j++ {
			unit[j] = 1
			e.apply(unit, col)
			unit[j] = 0
			exact.SetCol(j, col)
		}
		off := 0
		for gi, u := range pc.blocks {
			if !pc.ok[gi] {
				t.Fatalf("n=%d k=%d: block %d not positive definite", c.n, c.k, gi)
			}
			d := u.Rows
			lo, hi := blockRatioRange(t, exact, off, d, mat.NewDense(d, d, u.Data))
			if lo < 1-precTol || hi > 1+precTol {
				t.Errorf("n=%d k=%d block %d: Ã/𝒜 in [%.4f, %.4f], outside 1 ± %g", c.n, c.k, gi, lo, hi, precTol)
			}
			t.Logf("n=%d k=%d block %d (%d multipliers): Ã/𝒜 in [%.4f, %.4f]", c.n, c.k, gi, d, lo, hi)
			off += d
		}
	}
}

// blockRatioRange returns the extreme eigenvalues of L⁻¹·UᵀU·L⁻ᵀ for the
// d×d diagonal block of a at off (= L·Lᵀ) and the upper factor u.
func blockRatioRange(t *testing.T, a *mat.Dense, off, d int, u *mat.Dense) (lo, hi float64) {
	t.Helper()
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, 0.5*(a.At(off+i, off+j)+a.At(off+j, off+i)))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		t.Fatal("𝒜's block is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	var approx mat.Dense
	approx.Mul(u.T(), u) // Ã = UᵀU
	var y, z mat.Dense   // z = L⁻¹·Ã·L⁻ᵀ
	if err := y.Solve(&l, &approx); err != nil {
		t.Fatal(err)
	}
	if err := z.Solve(&l, y.T()); err != nil {
		t.Fatal(err)
	}
	zs := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			zs.SetSym(i, j, 0.5*(z.At(i, j)+z.At(j, i)))
		}
	}
	var ev mat.EigenSym
	if !ev.Factorize(zs, false) {
		t.Fatal("eigendecomposition failed")
	}
	vals := ev.Values(nil)
	return vals[0], vals[len(vals)-1]
}
