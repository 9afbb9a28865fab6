package pinv

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lowRank returns an m×n matrix of rank r with entries of order 1.
func lowRank(rng *rand.Rand, m, n, r int) *mat.Dense {
	b := mat.NewDense(m, r, nil)
	c := mat.NewDense(r, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < r; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	for i := 0; i < r; i++ {
		for j := 0; j < n; j++ {
			c.Set(i, j, rng.NormFloat64())
		}
	}
	var a mat.Dense
	a.Mul(b, c)
	return &a
}

// maxDiff returns max |a−b| over the entries.
func maxDiff(a, b mat.Matrix) float64 {
	m, n := a.Dims()
	d := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			d = math.Max(d, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return d
}

// The four Moore–Penrose conditions, which define A⁺ uniquely, hold to
// rounding (1e-10 on entries of order 1: the inputs' condition numbers on
// their ranges are below 1e3, so the errors are ≲ 1e3·n·ε), and the rank
// is the one built in. A full-rank square matrix gets its inverse.
func TestDenseMoorePenrose(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ m, n, r int }{{7, 5, 3}, {5, 7, 2}, {6, 6, 6}, {9, 4, 1}, {1, 8, 1}} {
		a := lowRank(rng, c.m, c.n, c.r)
		p, r, err := Dense(a)
		if err != nil {
			t.Fatal(err)
		}
		if r != c.r {
			t.Errorf("%d×%d rank %d: got rank %d", c.m, c.n, c.r, r)
		}
		if pm, pn := p.Dims(); pm != c.n || pn != c.m {
			t.Fatalf("A⁺ is %d×%d, want %d×%d", pm, pn, c.n, c.m)
		}
		var ap, pa, apa, pap mat.Dense
		ap.Mul(a, p)
		pa.Mul(p, a)
		apa.Mul(&ap, a)
		pap.Mul(&pa, p)
		for name, d := range map[string]float64{
			"A A⁺ A − A": maxDiff(&apa, a), "A⁺ A A⁺ − A⁺": maxDiff(&pap, p),
			"(A A⁺)ᵀ − A A⁺": maxDiff(ap.T(), &ap), "(A⁺ A)ᵀ − A⁺ A": maxDiff(pa.T(), &pa),
		} {
			if d > 1e-10 {
				t.Errorf("%d×%d rank %d: max |%s| = %g", c.m, c.n, c.r, name, d)
			}
		}
	}
}

// A zero matrix has rank 0 and A⁺ = 0; a NaN entry is reported, not
// inverted.
func TestDenseDegenerate(t *testing.T) {
	p, r, err := Dense(mat.NewDense(2, 3, nil))
	if err != nil || r != 0 || maxDiff(p, mat.NewDense(3, 2, nil)) != 0 {
		t.Errorf("zero matrix: rank %d, err %v, A⁺ %v", r, err, mat.Formatted(p))
	}
	a := mat.NewDense(2, 2, []float64{1, math.NaN(), 0, 1})
	if p, r, err := Dense(a); err == nil && r != 0 {
		t.Errorf("NaN entry: rank %d, A⁺ %v, no error", r, mat.Formatted(p))
	} else if err != nil && !errors.Is(err, ErrNoConvergence) {
		t.Errorf("NaN entry: %v", err)
	}
}

// NewSym on the Gram of a rank-r matrix keeps r eigenvalues, and the X⁺
// assembled from the kept ones equals Dense's pseudo-inverse of X (two
// decompositions, one rule) to rounding.
func TestSymAgreesWithDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ m, n, r int }{{8, 6, 3}, {4, 6, 4}, {6, 6, 6}, {3, 5, 1}} {
		a := lowRank(rng, c.m, c.n, c.r)
		x := mat.NewSymDense(c.n, nil)
		x.SymOuterK(1, a.T())
		s, err := NewSym(x)
		if err != nil {
			t.Fatal(err)
		}
		if s.Rank() != c.r {
			t.Errorf("Gram of rank %d: NewSym keeps %d (values %v, cutoff %g)", c.r, s.Rank(), s.Values, s.Cutoff)
		}
		xp := mat.NewDense(c.n, c.n, nil)
		for k, l := range s.Values {
			if !s.Kept(k) {
				continue
			}
			q := mat.Col(nil, k, s.Vectors)
			for i := range q {
				for j := range q {
					xp.Set(i, j, xp.At(i, j)+q[i]*q[j]/l)
				}
			}
		}
		want, r, err := Dense(x)
		if err != nil || r != c.r {
			t.Fatalf("Dense(X): rank %d, %v", r, err)
		}
		scale := mat.Norm(want, math.Inf(1))
		if d := maxDiff(xp, want); d > 1e-9*scale {
			t.Errorf("Gram of rank %d: max |X⁺(eig) − X⁺(SVD)| = %g (scale %g)", c.r, d, scale)
		}
	}
}

// TestQRMatchesDense: on a well-conditioned full-column-rank matrix QR's
// R⁻¹Qᵀ equals the SVD pseudo-inverse (an independent algorithm) within
// 1e-12 of its largest entry (both errors are about κ·ε with κ ≈ 10 here);
// a rank-deficient, an ill-conditioned, a wide, a too-tall and a
// non-finite matrix are declined.
func TestQRMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	randn := func(m, n int) *mat.Dense {
		a := mat.NewDense(m, n, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		return a
	}
	a := randn(90, 60)
	got, ok := QR(a)
	if !ok {
		t.Fatal("QR declined a well-conditioned 90×60 Gaussian matrix")
	}
	want, r, err := Dense(a)
	if err != nil || r != 60 {
		t.Fatalf("Dense: rank %d, %v", r, err)
	}
	var d mat.Dense
	d.Sub(got, want)
	if e := mat.Norm(&d, math.Inf(1)) / mat.Norm(want, math.Inf(1)); e > 1e-12 {
		t.Fatalf("QR and SVD pseudo-inverses differ by %g relative", e)
	}
	deficient := randn(90, 60)
	for i := 0; i < 90; i++ { // column 59 = column 0 + column 1
		deficient.Set(i, 59, deficient.At(i, 0)+deficient.At(i, 1))
	}
	illcond := randn(90, 60)
	for i := 0; i < 90; i++ {
		illcond.Set(i, 7, 1e-9*illcond.At(i, 7))
	}
	nan := randn(90, 60)
	nan.Set(3, 4, math.NaN())
	for name, m := range map[string]*mat.Dense{
		"rank deficient": deficient, "ill-conditioned": illcond,
		"wide": randn(40, 60), "too tall": randn(250, 60), "NaN": nan,
	} {
		if _, ok := QR(m); ok {
			t.Errorf("QR accepted the %s matrix", name)
		}
	}
}
