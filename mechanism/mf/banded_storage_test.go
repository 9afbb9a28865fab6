package mf

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The band factor reproduces dense linear algebra: tr(V X⁻¹), G = F·X⁻¹
// and X⁻¹ from the block bidiagonal factor agree with gonum's dense
// inverse, on sizes where the last block is short (n = 77 in blocks of 32)
// and where one block holds everything. X has unit diagonal and
// off-diagonal rows summing to at most 0.4, so κ(X) ≤ 2.4 and both sides'
// rounding stays near n·ε ≈ 2e-14: the tolerance 1e-12 leaves a factor 50.
func TestBandFactorMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ n, b int }{{77, 9}, {77, 40}, {20, 20}, {33, 1}} {
		w, err := Momentum(c.n, 0.7, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := newBandSolver(w.V, c.b, nil)
		if !ok {
			t.Fatal("factoring V failed")
		}
		x := newBand(c.n, c.b)
		dense := mat.NewSymDense(c.n, nil)
		for i := 0; i < c.n; i++ {
			for k := 0; k < c.b && k <= i; k++ {
				v := 1.0
				if k > 0 {
					v = 0.4 * (rng.Float64() - 0.5) / float64(c.b)
				}
				x.v[i*c.b+k] = v
				dense.SetSym(i, i-k, v)
			}
		}
		obj, ok := bandObjective(s.f, x, s.fac, s.t)
		if !ok {
			t.Fatalf("%+v: X not definite", c)
		}
		var inv mat.Dense
		if err := inv.Inverse(dense); err != nil {
			t.Fatal(err)
		}
		want := 0.0 // tr(V X⁻¹)
		for i := 0; i < c.n; i++ {
			for j := 0; j < c.n; j++ {
				want += w.V.At(i, j) * inv.At(j, i)
			}
		}
		if d := math.Abs(obj-want) / want; d > 1e-12 {
			t.Errorf("%+v: objective %v, dense %v (rel %.1e)", c, obj, want, d)
		}
		s.gram() // s.t = F·X⁻¹
		var fd, g mat.Dense
		fd.Mul(mat.NewDense(c.n, c.n, append([]float64(nil), s.f.Data...)), &inv)
		g.Sub(mat.NewDense(c.n, c.n, s.t.Data), &fd)
		if d := mat.Norm(&g, math.Inf(1)) / mat.Norm(&fd, math.Inf(1)); d > 1e-12 {
			t.Errorf("%+v: G = F·X⁻¹ off by %.1e", c, d)
		}
		if !s.inverse() {
			t.Fatalf("%+v: inverse failed", c)
		}
		var e mat.Dense
		e.Sub(mat.NewDense(c.n, c.n, s.xinv.Data), &inv)
		if d := mat.Norm(&e, math.Inf(1)) / mat.Norm(&inv, math.Inf(1)); d > 1e-12 {
			t.Errorf("%+v: X⁻¹ off by %.1e", c, d)
		}
	}
}
