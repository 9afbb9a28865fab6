package mf

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/privacy/noise"
)

// maxZ is the largest standardized deviation of the empirical covariance
// of d independent replicates (the columns of w, n×d) from σ²·Σ: the
// sample covariance of Gaussian data has Var(Ŝᵢⱼ) = (ΣᵢᵢΣⱼⱼ + Σᵢⱼ²)/d.
func maxZ(w *mat.Dense, sigma2 float64, sig *mat.SymDense) float64 {
	n, d := w.Dims()
	worst := 0.0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s := 0.0
			for k := 0; k < d; k++ {
				s += w.At(i, k) * w.At(j, k)
			}
			s /= float64(d)
			want := sigma2 * sig.At(i, j)
			sd := sigma2 * math.Sqrt((sig.At(i, i)*sig.At(j, j)+sig.At(i, j)*sig.At(i, j))/float64(d))
			worst = math.Max(worst, math.Abs(s-want)/sd)
		}
	}
	return worst
}

// The generated noise has covariance σ²(CᵀC)⁻¹: with d = 20000 replicates
// (the coordinates of the noise vector, independent by construction) every
// entry of the empirical covariance lies within 5 standard errors (the
// chance that one of the 36 entries of this n = 8 test exceeds that by
// luck is below 2e-5). Power: the same statistic rejects the covariances a
// wrong generator would produce — white noise σ²I, the transposed
// factorization σ²(CCᵀ)⁻¹ — by far. The source is seeded: a simulation,
// not a private release.
func TestGeneratorCovariance(t *testing.T) {
	const n, d, sigma = 8, 20000, 1.5
	for _, sch := range []Schema{{Kind: FixedEpoch, Epochs: 2}, {Kind: MinSep, MinSep: 3}} {
		wl, _ := Momentum(n, 0.8, nil)
		res, err := Solve(context.Background(), wl, sch, nil)
		if err != nil {
			t.Fatal(err)
		}
		bands := 0
		if sch.Kind == MinSep {
			bands = 3
		}
		g, err := NewGenerator(res.C, bands, d, sigma, noise.NewSeededInsecure(7))
		if err != nil {
			t.Fatal(err)
		}
		w := mat.NewDense(n, d, nil)
		for s := 0; s < n; s++ {
			z, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			w.SetRow(s, z)
		}
		if _, err := g.Next(); err == nil {
			t.Error("step n+1: want an error")
		}
		var xinv mat.SymDense
		xinv.CopySym(res.X)
		var ch mat.Cholesky
		ch.Factorize(res.X)
		ch.InverseTo(&xinv)
		sc := g.Scale()
		z0 := maxZ(w, sc*sc, &xinv)
		t.Logf("%v: max z %.2f under the claimed covariance", sch, z0)
		if z := z0; z > 5 {
			t.Errorf("%v: covariance off by %.1f standard errors", sch, z)
		}
		ident := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			ident.SetSym(i, i, 1)
		}
		var cct mat.SymDense
		cct.SymOuterK(1, res.C)
		var ch2 mat.Cholesky
		ch2.Factorize(&cct)
		var wrong mat.SymDense
		ch2.InverseTo(&wrong)
		for name, alt := range map[string]*mat.SymDense{"white": ident, "CCᵀ": &wrong} {
			z := maxZ(w, sc*sc, alt)
			t.Logf("%v: max z %.1f under %s", sch, z, name)
			if z < 10 {
				t.Errorf("%v: the test cannot tell the %s covariance apart (z = %.1f)", sch, name, z)
			}
		}
	}
}

func TestGeneratorErrors(t *testing.T) {
	c := mat.NewTriDense(3, mat.Lower, []float64{1, 0, 0, 0.5, 1, 0, 0.2, 0.1, 1})
	src := noise.NewSeededInsecure(1)
	if _, err := NewGenerator(c, 2, 4, 1, src); err == nil {
		t.Error("C[2,0] ≠ 0 with bands = 2: want an error")
	}
	if _, err := NewGenerator(c, 0, 0, 1, src); err == nil {
		t.Error("d = 0: want an error")
	}
	if _, err := NewGenerator(c, 0, 4, math.NaN(), src); err == nil {
		t.Error("σ = NaN: want an error")
	}
	if _, err := NewGenerator(c, 0, 4, 1, nil); err == nil {
		t.Error("nil source: want an error")
	}
}
