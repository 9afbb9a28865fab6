package kron

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsolve/dpsolve/status"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// Tolerances: every comparison below is between two double-precision
// computations of the same quantity on matrices with entries O(1) and
// condition numbers O(10); their rounding differs by O(n·ε·κ) ≈ 1e-13, so
// 1e-10 relative (of the vectors' norms) separates rounding from any real
// discrepancy, which would be O(1).
const tol = 1e-10

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	d := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d.Set(i, j, rng.NormFloat64())
		}
	}
	return d
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// dense returns the explicit Kronecker product (gonum's Kronecker: the
// reference we compare the factor-by-factor code against).
func dense(fs ...mat.Matrix) *mat.Dense {
	out := mat.DenseCopyOf(fs[0])
	for _, f := range fs[1:] {
		var k mat.Dense
		k.Kronecker(out, f)
		out = &k
	}
	return out
}

func mulDense(a mat.Matrix, x []float64) []float64 {
	r, _ := a.Dims()
	y := make([]float64, r)
	mat.NewVecDense(r, y).MulVec(a, mat.NewVecDense(len(x), x))
	return y
}

func assertClose(t *testing.T, want, got []float64, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	var diff, norm float64
	for i := range want {
		diff = math.Max(diff, math.Abs(want[i]-got[i]))
		norm = math.Max(norm, math.Abs(want[i]))
	}
	assert.LessOrEqual(t, diff, tol*math.Max(norm, 1), msg)
}

// factors: square, tall, wide-rank-deficient (a total row), in the order
// of a 4×3×5×2 domain (120 cells; the explicit product is at most 240×120).
func testFactors(rng *rand.Rand) []mat.Matrix {
	total := mat.NewDense(1, 5, []float64{1, 1, 1, 1, 1})
	return []mat.Matrix{randDense(rng, 4, 4), randDense(rng, 5, 3), total, randDense(rng, 2, 2)}
}

func TestMulVecEqualsDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fs := testFactors(rng)
	p, err := New(fs...)
	require.NoError(t, err)
	r, c := p.Dims()
	assert.Equal(t, []int{40, 120}, []int{r, c})
	x := randVec(rng, c)
	want := mulDense(dense(fs...), x)
	got, err := p.MulVec(x)
	require.NoError(t, err)
	assertClose(t, want, got, "MulVec")
	xc := append([]float64(nil), x...)
	got2, err := p.MulVecOverwrite(xc)
	require.NoError(t, err)
	assertClose(t, want, got2, "MulVecOverwrite")
	// A single factor and a 1024-cell four-factor product too.
	one, _ := New(fs[1])
	g, _ := one.MulVec(x[:3])
	assertClose(t, mulDense(fs[1], x[:3]), g, "one factor")
	big := []mat.Matrix{randDense(rng, 4, 4), randDense(rng, 6, 8), randDense(rng, 8, 8), randDense(rng, 3, 4)}
	pb, _ := New(big...)
	xb := randVec(rng, 1024)
	wantb := mulDense(dense(big...), xb)
	gb, err := pb.MulVecOverwrite(xb)
	require.NoError(t, err)
	assertClose(t, wantb, gb, "1024 cells")
}

func TestMulVecOverwriteUsesOneBuffer(t *testing.T) {
	// Square factors: x's array plus one buffer (two vectors in all).
	rng := rand.New(rand.NewPCG(3, 4))
	p, _ := New(randDense(rng, 8, 8), randDense(rng, 8, 8), randDense(rng, 8, 8))
	x := randVec(rng, 512)
	allocs := testing.AllocsPerRun(5, func() { _, _ = p.MulVecOverwrite(x) })
	assert.LessOrEqual(t, allocs, 1.0)
}

// moorePenrose checks the four Penrose conditions X = A⁺ densely.
func moorePenrose(t *testing.T, a, x *mat.Dense) {
	t.Helper()
	var ax, xa, axa, xax mat.Dense
	ax.Mul(a, x)
	xa.Mul(x, a)
	axa.Mul(&ax, a)
	xax.Mul(&xa, x)
	scale := mat.Norm(a, 2) * mat.Norm(x, 2)
	assert.LessOrEqual(t, diffNorm(&axa, a), tol*scale*mat.Norm(a, 2), "AXA = A")
	assert.LessOrEqual(t, diffNorm(&xax, x), tol*scale*mat.Norm(x, 2), "XAX = X")
	assert.LessOrEqual(t, diffNorm(&ax, ax.T()), tol*scale, "AX symmetric")
	assert.LessOrEqual(t, diffNorm(&xa, xa.T()), tol*scale, "XA symmetric")
}

func diffNorm(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2)
}

func TestLeastSquaresEqualsDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// Full column rank: compare with gonum's QR least squares on the
	// explicit product (a different algorithm on the formed matrix).
	fs := []mat.Matrix{randDense(rng, 6, 4), randDense(rng, 3, 3), randDense(rng, 9, 5)}
	p, _ := New(fs...)
	pi, err := p.PseudoInverse()
	require.NoError(t, err)
	a := dense(fs...)
	r, c := a.Dims()
	y := randVec(rng, r)
	var xq mat.VecDense
	require.NoError(t, xq.SolveVec(a, mat.NewVecDense(r, append([]float64(nil), y...))))
	got, err := pi.MulVec(y)
	require.NoError(t, err)
	assertClose(t, xq.RawVector().Data, got, "least squares vs QR")
	assert.Len(t, got, c)
	// Rank deficient (a total factor): ⊗Aᵢ⁺ satisfies the Penrose
	// conditions of the explicit product, so it is its pseudo-inverse.
	fs2 := testFactors(rng)
	p2, _ := New(fs2...)
	pi2, _ := p2.PseudoInverse()
	moorePenrose(t, dense(fs2...), dense(factors(pi2)...))
}

func factors(p *Product) []mat.Matrix {
	out := make([]mat.Matrix, p.Len())
	for i := range out {
		out[i] = p.Factor(i)
	}
	return out
}

func TestVariancesEqualDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	as := []mat.Matrix{randDense(rng, 5, 4), randDense(rng, 3, 3), randDense(rng, 7, 6)}
	prefix := mat.NewDense(3, 3, []float64{1, 0, 0, 1, 1, 0, 1, 1, 1})
	ws := []mat.Matrix{mat.NewDense(1, 4, []float64{1, 1, 1, 1}), prefix, randDense(rng, 2, 6)}
	a, _ := New(as...)
	w, _ := New(ws...)
	pi, _ := a.PseudoInverse()
	require.NoError(t, Estimable(w, a, pi))
	fv, err := FactorVariances(w, pi)
	require.NoError(t, err)
	got := KronVec(fv)
	// Dense reference: diag(W (AᵀA)⁻¹ Wᵀ) with the inverse from a Cholesky
	// factorization of the explicit AᵀA (full column rank here).
	ad, wd := dense(as...), dense(ws...)
	var ata mat.SymDense
	ata.SymOuterK(1, ad.T())
	var ch mat.Cholesky
	require.True(t, ch.Factorize(&ata))
	var inv mat.SymDense
	require.NoError(t, ch.InverseTo(&inv))
	var wi, cov mat.Dense
	wi.Mul(wd, &inv)
	cov.Mul(&wi, wd.T())
	m, _ := cov.Dims()
	want := make([]float64, m)
	sum := 0.0
	for i := range want {
		want[i] = cov.At(i, i)
		sum += want[i]
	}
	assertClose(t, want, got, "per-query variances")
	assert.InDelta(t, sum, TotalVariance(fv), tol*sum)
}

func TestEstimable(t *testing.T) {
	// A strategy of totals cannot estimate an identity workload without bias.
	a, _ := New(mat.NewDense(1, 3, []float64{1, 1, 1}), mat.NewDiagDense(2, []float64{1, 2}))
	pi, _ := a.PseudoInverse()
	w, _ := New(mat.NewDiagDense(3, []float64{1, 1, 1}), mat.NewDense(1, 2, []float64{1, 1}))
	err := Estimable(w, a, pi)
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "factor 1")
	w2, _ := New(mat.NewDense(1, 3, []float64{2, 2, 2}), mat.NewDense(1, 2, []float64{1, 1}))
	assert.NoError(t, Estimable(w2, a, pi))
}

func TestColumnNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	fs := testFactors(rng)
	p, _ := New(fs...)
	d := dense(fs...)
	_, c := d.Dims()
	var best1, best2 float64
	for j := 0; j < c; j++ {
		col := mat.Col(nil, j, d)
		var s1, s2 float64
		for _, v := range col {
			s1 += math.Abs(v)
			s2 += v * v
		}
		best1, best2 = math.Max(best1, s1), math.Max(best2, math.Sqrt(s2))
	}
	assert.InDelta(t, best1, p.ColumnNorm(1), tol*best1)
	assert.InDelta(t, best2, p.ColumnNorm(2), tol*best2)
}

func TestUnionLeastSquaresEqualsDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	// Two parts, each rank deficient on its own (a total factor), full
	// column rank together.
	tot4 := mat.NewDense(1, 4, []float64{1, 1, 1, 1})
	tot6 := mat.NewDense(1, 6, []float64{1, 1, 1, 1, 1, 1})
	p1, _ := New(randDense(rng, 4, 4), tot6)
	p2, _ := New(tot4, randDense(rng, 6, 6))
	p3, _ := New(randDense(rng, 5, 4), randDense(rng, 7, 6))
	u, err := NewUnion(Part{0.6, p1}, Part{0.5, p2}, Part{math.Sqrt(1 - 0.61), p3})
	require.NoError(t, err)
	var stack mat.Dense
	parts := u.Parts()
	ys := make([][]float64, len(parts))
	var all []float64
	for k, pt := range parts {
		d := dense(factors(pt.A)...)
		d.Scale(pt.Weight, d)
		if k == 0 {
			stack = *d
		} else {
			var s mat.Dense
			s.Stack(&stack, d)
			stack = s
		}
		r, _ := d.Dims()
		ys[k] = randVec(rng, r)
		all = append(all, ys[k]...)
	}
	r, _ := stack.Dims()
	var want mat.VecDense
	require.NoError(t, want.SolveVec(&stack, mat.NewVecDense(r, all)))
	got, res, err := u.LeastSquares(context.Background(), ys, CGOptions{Tol: 1e-13})
	require.NoError(t, err)
	assert.Equal(t, status.Converged, res.Status)
	// CG stops at a normal-equations residual of 1e-13 relative; with
	// κ(AᵀA) ≲ 1e3 here the solution error is ≲ 1e-10.
	assertClose(t, want.RawVector().Data, got, "union least squares")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = u.LeastSquares(ctx, ys, CGOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	ny, _ := u.MulVec(make([]float64, u.Cols()))
	assert.Len(t, ny, 3)
}

func TestBadInput(t *testing.T) {
	_, err := New()
	assert.ErrorIs(t, err, ErrInput)
	_, err = New(mat.NewDense(1, 1, []float64{math.NaN()}))
	assert.ErrorIs(t, err, ErrInput)
	big := mat.NewDense(1, 1<<16, nil)
	_, err = New(big, big, big, big)
	assert.ErrorIs(t, err, ErrInput, "2^64 columns overflow")
	p, _ := New(mat.NewDense(2, 2, []float64{1, 0, 0, 1}))
	_, err = p.MulVec([]float64{1})
	assert.ErrorIs(t, err, ErrInput)
	_, err = NewUnion()
	assert.ErrorIs(t, err, ErrInput)
	_, err = NewUnion(Part{0, p})
	assert.ErrorIs(t, err, ErrInput)
	q, _ := New(mat.NewDense(3, 3, nil))
	_, err = NewUnion(Part{1, p}, Part{1, q})
	assert.ErrorIs(t, err, ErrInput)
	u, _ := NewUnion(Part{1, p})
	_, _, err = u.LeastSquares(context.Background(), [][]float64{{1}}, CGOptions{})
	assert.ErrorIs(t, err, ErrInput)
	_, err = FactorVariances(q, p)
	assert.ErrorIs(t, err, ErrInput)
}

func TestBothOrdersEqualDense(t *testing.T) {
	// The in-place (slab) order and the rotated order must both equal the
	// explicit product, with tall, wide and square factors, overwrite or not.
	rng := rand.New(rand.NewPCG(13, 14))
	cases := [][]mat.Matrix{
		testFactors(rng),
		{randDense(rng, 4, 4), randDense(rng, 6, 8), randDense(rng, 8, 8), randDense(rng, 3, 4)},
		{randDense(rng, 2, 2), randDense(rng, 2, 2), randDense(rng, 1, 2), randDense(rng, 3, 2), randDense(rng, 2, 2), randDense(rng, 2, 2)},
	}
	for ci, fs := range cases {
		p, err := New(fs...)
		require.NoError(t, err)
		_, n := p.Dims()
		x := randVec(rng, n)
		want := mulDense(dense(fs...), x)
		for _, force := range []int{+1, -1} {
			p.forceRotation = force
			got, err := p.MulVec(x)
			require.NoError(t, err)
			assertClose(t, want, got, fmt.Sprintf("case %d order %d", ci, force))
			got, err = p.MulVecOverwrite(append([]float64(nil), x...))
			require.NoError(t, err)
			assertClose(t, want, got, fmt.Sprintf("case %d order %d overwrite", ci, force))
		}
	}
	// The heuristic: 20 binary attributes (slabs of a few flops) rotate;
	// the benchmark's 64⁴×16 domain does not.
	bin := make([]mat.Matrix, 20)
	for i := range bin {
		bin[i] = mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	}
	pb, _ := New(bin...)
	assert.True(t, pb.useRotation())
	big := []mat.Matrix{mat.NewDense(64, 64, nil), mat.NewDense(64, 64, nil), mat.NewDense(64, 64, nil), mat.NewDense(64, 64, nil), mat.NewDense(16, 16, nil)}
	pg, _ := New(big...)
	assert.False(t, pg.useRotation())
}
