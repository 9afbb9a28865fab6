package tables

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func zcdp(rho float64) Budget { return budgettest.ZCDP(rho) }

// identityTotal is [I; 1ᵀ]/√2: unit column norms.
func identityTotal(d int) *mat.Dense {
	m := mat.NewDense(d+1, d, nil)
	for i := 0; i < d; i++ {
		m.Set(i, i, 1/math.Sqrt2)
		m.Set(d, i, 1/math.Sqrt2)
	}
	return m
}

func prefix(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			m.Set(i, j, 1)
		}
	}
	return m
}

// smallWorkload: a 3×4×2 domain (24 cells), two marginals and a product
// term (prefix on b, identity on c, total on a).
func smallWorkload() *explicitWorkload {
	dom := []domain.Attribute{{Name: "a", Size: 3}, {Name: "b", Size: 4}, {Name: "c", Size: 2}}
	prod := explicitProduct{Blocks: []*mat.Dense{ones(3), prefix(4), identity(2)}, Kinds: []domain.BlockKind{domain.BlockTotal, domain.BlockMatrix, domain.BlockIdentity}}
	return &explicitWorkload{Domain: dom, Terms: []explicitTerm{
		{Name: "m", Weight: 1, Products: []explicitProduct{marginalProduct(dom, []int{0, 2}), marginalProduct(dom, []int{1})}},
		{Name: "p", Weight: 2, Products: []explicitProduct{prod}},
	}}
}

func kronStrategy(t *testing.T, fs ...mat.Matrix) KronStrategy {
	a, err := kron.New(fs...)
	require.NoError(t, err)
	return KronStrategy{A: a}
}

// denseOf returns the explicit Kronecker product.
func denseOf(fs ...*mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(fs[0])
	for _, f := range fs[1:] {
		var k mat.Dense
		k.Kronecker(out, f)
		out = &k
	}
	return out
}

func TestAnswersAndVariancesEqualDense(t *testing.T) {
	w := smallWorkload()
	fa, fb, fc := identityTotal(3), identityTotal(4), identityTotal(2)
	s := kronStrategy(t, fa, fb, fc)
	r, err := prepare(w, s, zcdp(1e6))
	require.NoError(t, err)
	// Dense reference: diag(W (AᵀA)⁻¹ Wᵀ)·v with the inverse by Cholesky.
	ad := denseOf(fa, fb, fc)
	var ata mat.SymDense
	ata.SymOuterK(1, ad.T())
	var ch mat.Cholesky
	require.True(t, ch.Factorize(&ata))
	var inv mat.SymDense
	require.NoError(t, ch.InverseTo(&inv))
	v := r.Sigma() * r.Sigma()
	vs := r.Variances()
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 24)
	for i := range x {
		x[i] = float64(rng.IntN(50))
	}
	res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(1), nil, Publishable{})
	require.NoError(t, err)
	assert.False(t, res.Private)
	for ti, term := range w.Terms {
		var want, truth []float64
		for _, p := range term.Products {
			wd := denseOf(p.Blocks...)
			var wi, cov mat.Dense
			wi.Mul(wd, &inv)
			cov.Mul(&wi, wd.T())
			m, _ := cov.Dims()
			for i := 0; i < m; i++ {
				want = append(want, v*cov.At(i, i))
			}
			tr := make([]float64, m)
			mat.NewVecDense(m, tr).MulVec(wd, mat.NewVecDense(24, x))
			truth = append(truth, tr...)
		}
		require.Len(t, vs[ti], len(want))
		for i := range want {
			// Two double-precision routes to the same O(v) number: 1e-10.
			assert.InDelta(t, want[i], vs[ti][i], 1e-10*want[i], "term %s query %d", term.Name, i)
			assert.InDelta(t, math.Sqrt(want[i]), res.Std[ti][i], 1e-10*math.Sqrt(want[i]))
			// At ρ = 1e6 the noise sd is ~1e-3 while counts differ by ≥ 1:
			// within 6 sd the answers are the truth in the documented query
			// order (row-major over the kron rows).
			assert.InDelta(t, truth[i], res.Answers[ti][i], 6*res.Std[ti][i], "term %s query %d", term.Name, i)
		}
	}
	sens, norm := r.Sensitivity()
	assert.InDelta(t, 1.0, sens, 1e-15)
	assert.Equal(t, "L2", norm)
	assert.Equal(t, 4*5*3, r.Measurements())
	tot := 0.0
	for _, e := range r.TermErrors() {
		tot += e.TotalVariance
		assert.InDelta(t, z95*e.MaxStd, e.HalfWidth95, 1e-12*e.HalfWidth95)
	}
	assert.InDelta(t, tot, r.ExpectedTotalSquaredError(), 1e-12*tot)
	e := r.TermErrors()
	assert.InDelta(t, e[0].TotalVariance+4*e[1].TotalVariance, r.ExpectedWeightedError(), 1e-12*tot)
}

func TestUnionAnswersEachTermFromItsPart(t *testing.T) {
	w := smallWorkload()
	pa, _ := kron.New(identityTotal(3), identityTotal(4), identityTotal(2))
	pb, _ := kron.New(ones(3), identity(4), identity(2))
	// pb's first factor is a total (1 row): only terms that sum over "a"
	// are estimable from it — term p is.
	s := UnionStrategy{Parts: []UnionPart{{Weight: 0.8, A: pa, Terms: []string{"m"}}, {Weight: 0.6, A: pb, Terms: []string{"p"}}}}
	r, err := prepare(w, s, zcdp(1e6))
	require.NoError(t, err)
	// Term p from part 2 alone: variance of (1/w)·(ones ⊗ prefix ⊗ I) A⁺;
	// ones(3)·ones(3)⁺ = 1, prefix·I⁻¹ rows, so unit variance = Σ prefix row² / w².
	vs := r.Variances()
	v := r.Sigma() * r.Sigma()
	for b := 0; b < 4; b++ {
		for c := 0; c < 2; c++ {
			want := v * float64(b+1) / (0.6 * 0.6)
			assert.InDelta(t, want, vs[1][b*2+c], 1e-12*want)
		}
	}
	x := make([]float64, 24)
	for i := range x {
		x[i] = float64(i)
	}
	res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(2), nil, Publishable{})
	require.NoError(t, err)
	// p[b,c] = Σ_a Σ_{b' ≤ b} x[a,b',c].
	for b := 0; b < 4; b++ {
		for c := 0; c < 2; c++ {
			want := 0.0
			for a := 0; a < 3; a++ {
				for bb := 0; bb <= b; bb++ {
					want += x[a*8+bb*2+c]
				}
			}
			assert.InDelta(t, want, res.Answers[1][b*2+c], 6*res.Std[1][b*2+c])
		}
	}
	// Σw² = 1 with unit-norm factors: sensitivity 1.
	sens, _ := r.Sensitivity()
	assert.InDelta(t, 1.0, sens, 1e-12)
	// Term m is not estimable from part 2: assigning it there is refused.
	bad := UnionStrategy{Parts: []UnionPart{{Weight: 0.8, A: pa, Terms: []string{"p"}}, {Weight: 0.6, A: pb, Terms: []string{"m"}}}}
	_, err = prepare(w, bad, zcdp(1))
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "cannot be answered without bias")
	for _, u := range []UnionStrategy{
		{Parts: []UnionPart{{Weight: 1, A: pa, Terms: []string{"m"}}}},
		{Parts: []UnionPart{{Weight: 1, A: pa, Terms: []string{"m", "p", "zz"}}}},
		{Parts: []UnionPart{{Weight: 0.5, A: pa, Terms: []string{"m", "p"}}, {Weight: 0.5, A: pa, Terms: []string{"p"}}}},
		{Parts: []UnionPart{{Weight: -1, A: pa, Terms: []string{"m", "p"}}}},
	} {
		_, err := prepare(w, u, zcdp(1))
		assert.ErrorIs(t, err, ErrInput)
	}
}

// countingReader counts the random bytes a sampler draws.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil // zeros: never used for a real release
}

func TestNothingSampledOnRefusalOrCancel(t *testing.T) {
	w := smallWorkload()
	r, err := prepare(w, kronStrategy(t, identityTotal(3), identityTotal(4), identityTotal(2)), zcdp(1))
	require.NoError(t, err)
	x := make([]float64, 24)
	src := &countingReader{}
	refused := errors.New("ledger says no")
	_, err = r.Run(context.Background(), Data{Histogram: x}, noise.NewSecureReader(src), func() error { return refused }, Publishable{})
	assert.ErrorIs(t, err, refused)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Run(ctx, Data{Histogram: x}, noise.NewSecureReader(src), nil, Publishable{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, src.n, "no random bit drawn")
	// Bad data is refused before anything is drawn too.
	_, err = r.Run(context.Background(), Data{Histogram: x[:5]}, noise.NewSecureReader(src), nil, Publishable{})
	assert.ErrorIs(t, err, ErrInput)
	x[3] = -1
	_, err = r.Run(context.Background(), Data{Histogram: x}, noise.NewSecureReader(src), nil, Publishable{})
	assert.ErrorIs(t, err, ErrInput)
	assert.Equal(t, 0, src.n)
}

func TestPrepareErrors(t *testing.T) {
	w := smallWorkload()
	s := kronStrategy(t, identityTotal(3), identityTotal(4), identityTotal(2))
	// A bad budget cannot be built (calibrate's tests); the zero Budget,
	// "no budget", is refused.
	_, err := prepare(w, s, Budget{})
	assert.ErrorIs(t, err, ErrInput)
	// A strategy that cannot see the prefix queries (a total on b).
	_, err = prepare(w, kronStrategy(t, identityTotal(3), ones(4), identityTotal(2)), zcdp(1))
	assert.ErrorIs(t, err, ErrInput)
	_, err = prepare(w, kronStrategy(t, identityTotal(3), identityTotal(4)), zcdp(1))
	assert.ErrorIs(t, err, ErrInput)
	_, err = prepare(w, kronStrategy(t, identityTotal(3), identityTotal(5), identityTotal(2)), zcdp(1))
	assert.ErrorIs(t, err, ErrInput)
	_, err = prepare(&explicitWorkload{Domain: w.Domain}, s, zcdp(1))
	assert.ErrorIs(t, err, ErrInput)
	_, err = prepare(w, nil, zcdp(1))
	assert.ErrorIs(t, err, ErrInput)
}

func TestLaplaceUsesL1(t *testing.T) {
	w := smallWorkload()
	// L1 column norm of [I;1ᵀ]/√2 is √2 per factor: Δ₁ = 2√2 in all.
	r, err := prepare(w, kronStrategy(t, identityTotal(3), identityTotal(4), identityTotal(2)), budgettest.PureDP(1))
	require.NoError(t, err)
	sens, norm := r.Sensitivity()
	assert.Equal(t, "L1", norm)
	assert.InDelta(t, 2*math.Sqrt2, sens, 1e-12)
	// b = Δ₁'/ε ≥ Δ₁, per-value variance 2b².
	assert.GreaterOrEqual(t, r.NoiseScale(), sens)
	assert.InDelta(t, math.Sqrt(2)*r.NoiseScale(), r.Sigma(), 1e-12)
}

func TestPostProcess(t *testing.T) {
	w := smallWorkload()
	r, err := prepare(w, kronStrategy(t, identityTotal(3), identityTotal(4), identityTotal(2)), zcdp(0.01))
	require.NoError(t, err)
	x := make([]float64, 24) // all zero: the noise makes some cells negative
	res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(3), nil, Publishable{NonNegative: true, Integer: true})
	require.NoError(t, err)
	assert.True(t, res.PostProcessed)
	for _, a := range res.Answers {
		for _, v := range a {
			assert.GreaterOrEqual(t, v, 0.0)
			assert.Equal(t, math.Round(v), v)
		}
	}
	// Consistency: the marginal on {c} summed over c equals the total
	// implied by the {a,c} marginal (both come from one histogram).
	ac := res.Answers[0][:6]
	sumAC := 0.0
	for _, v := range ac {
		sumAC += v
	}
	b := res.Answers[0][6:10]
	sumB := 0.0
	for _, v := range b {
		sumB += v
	}
	assert.Equal(t, sumAC, sumB)
}

func TestDenseStrategyEqualsKron(t *testing.T) {
	// The explicit product as a dense strategy over the flattened domain
	// must give the same variances (one-factor route vs factor-wise route)
	// and the same answers for the same noise.
	w := smallWorkload()
	fa, fb, fc := identityTotal(3), identityTotal(4), identityTotal(2)
	rk, err := prepare(w, kronStrategy(t, fa, fb, fc), zcdp(0.3))
	require.NoError(t, err)
	rd, err := prepare(w, DenseStrategy{A: denseOf(fa, fb, fc)}, zcdp(0.3))
	require.NoError(t, err)
	assert.Equal(t, "dense", rd.Template())
	vk, vd := rk.Variances(), rd.Variances()
	for ti := range vk {
		for i := range vk[ti] {
			assert.InDelta(t, vk[ti][i], vd[ti][i], 1e-10*vk[ti][i])
		}
	}
	x := make([]float64, 24)
	for i := range x {
		x[i] = float64(i % 5)
	}
	ak, err := rk.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(9), nil, Publishable{})
	require.NoError(t, err)
	ad, err := rd.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(9), nil, Publishable{})
	require.NoError(t, err)
	for ti := range ak.Answers {
		for i := range ak.Answers[ti] {
			// Same noise draws (same measurement order), two rounding paths.
			assert.InDelta(t, ak.Answers[ti][i], ad.Answers[ti][i], 1e-9*(1+math.Abs(ak.Answers[ti][i])))
		}
	}
	_, err = prepare(w, DenseStrategy{A: mat.NewDense(3, 5, nil)}, zcdp(1))
	assert.ErrorIs(t, err, ErrInput)
}

func TestSplit(t *testing.T) {
	b, err := Split(budgettest.ZCDP(0.9), 3)
	require.NoError(t, err)
	assert.InDelta(t, 0.3, b.Rho(), 1e-16)
	b, err = Split(budgettest.ApproxDP(1, 1e-6), 4)
	require.NoError(t, err)
	assert.Equal(t, budgettest.ApproxDP(0.25, 2.5e-7), b)
	b, err = Split(budgettest.PureDP(2), 1)
	require.NoError(t, err)
	assert.Equal(t, budgettest.PureDP(2), b)
	_, err = Split(budgettest.ZCDP(1), 0)
	assert.ErrorIs(t, err, ErrInput)
	_, err = Split(Budget{}, 2)
	assert.ErrorIs(t, err, ErrInput)
}

func TestWriteAnswersCSVQuotes(t *testing.T) {
	dom := []domain.Attribute{{Name: `x,"y"`, Size: 2}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{{Name: "a,b", Weight: 1, Products: []explicitProduct{marginalProduct(dom, []int{0})}}}}
	var buf bytes.Buffer
	require.NoError(t, writeAnswersCSV(&buf, w, &Result{Answers: [][]float64{{1.5, -0}}, Std: [][]float64{{0.25, 0.25}}, Private: true}))
	assert.Equal(t, "term,query,answer,stddev,\"x,\"\"y\"\"\",table\n\"a,b\",0,1.5,0.25,0,\"a,b (x,\"\"y\"\")\"\n\"a,b\",1,0,0.25,1,\"a,b (x,\"\"y\"\")\"\n", buf.String())
	buf.Reset()
	require.NoError(t, writeAnswersCSV(&buf, w, &Result{Answers: [][]float64{{1.5, 2}}, Std: [][]float64{{0.25, 0.25}}}))
	assert.Equal(t, "term,query,answer,stddev,\"x,\"\"y\"\"\",table,private\n\"a,b\",0,1.5,0.25,0,\"a,b (x,\"\"y\"\")\",false\n\"a,b\",1,2,0.25,1,\"a,b (x,\"\"y\"\")\",false\n", buf.String())
}

// SplitTerms: the terms' budgets are the shares' fractions and add up to
// the whole (zCDP, pure and approximate DP compose additively); 1e-15
// relative is the rounding of a few divisions and additions.
func TestSplitTerms(t *testing.T) {
	bs, err := SplitTerms(budgettest.ZCDP(0.9), []float64{1, 2, 6}, 3)
	require.NoError(t, err)
	assert.InDelta(t, 0.1, bs[0].Rho(), 1e-16)
	assert.InDelta(t, 0.6, bs[2].Rho(), 1e-16)
	assert.InEpsilon(t, 0.9, bs[0].Rho()+bs[1].Rho()+bs[2].Rho(), 1e-15)
	bs, err = SplitTerms(budgettest.ApproxDP(1, 1e-6), nil, 4)
	require.NoError(t, err)
	for _, b := range bs {
		assert.Equal(t, budgettest.ApproxDP(0.25, 2.5e-7), b)
	}
	bs, err = SplitTerms(budgettest.PureDP(3), []float64{2, 1}, 2)
	require.NoError(t, err)
	assert.Equal(t, []Budget{budgettest.PureDP(2), budgettest.PureDP(1)}, bs)
	for _, bad := range [][]float64{{1}, {1, 0}, {1, math.NaN()}, {1, math.Inf(1)}} {
		_, err = SplitTerms(budgettest.ZCDP(1), bad, 2)
		assert.ErrorIs(t, err, ErrInput, "%v", bad)
	}
	_, err = SplitTerms(Budget{}, nil, 2)
	assert.ErrorIs(t, err, ErrInput)
}
