package domain_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/testkit"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// randomUnitDiagPD returns a random positive definite d×d matrix with unit
// diagonal: BᵀB + I/2 rescaled, B Gaussian.
func randomUnitDiagPD(rng *rand.Rand, d int) *mat.SymDense {
	b := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	x := mat.NewSymDense(d, nil)
	x.SymOuterK(1, b.T())
	for i := 0; i < d; i++ {
		x.SetSym(i, i, x.At(i, i)+0.5)
	}
	s := make([]float64, d)
	for i := range s {
		s[i] = 1 / math.Sqrt(x.At(i, i))
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			x.SetSym(i, j, x.At(i, j)*s[i]*s[j])
		}
	}
	return x
}

// densePinvTrace is tr(V X⁺) computed densely with gonum's SVD of X
// (independent of Pinv's eigendecomposition), +Inf if V ∉ range(X).
func densePinvTrace(t *testing.T, v, x *mat.SymDense) float64 {
	t.Helper()
	var svd mat.SVD
	require.True(t, svd.Factorize(x, mat.SVDFull))
	var u mat.Dense
	svd.UTo(&u)
	s := svd.Values(nil)
	n := len(s)
	pinv := mat.NewDense(n, n, nil)
	proj := mat.NewDense(n, n, nil)
	for k, sk := range s {
		if sk <= 1e-10*s[0] {
			continue
		}
		uk := mat.Col(nil, k, &u)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				pinv.Set(i, j, pinv.At(i, j)+uk[i]*uk[j]/sk)
				proj.Set(i, j, proj.At(i, j)+uk[i]*uk[j])
			}
		}
	}
	var tr, trp, trv float64
	for i := 0; i < n; i++ {
		trv += v.At(i, i)
		for j := 0; j < n; j++ {
			tr += v.At(i, j) * pinv.At(j, i)
			trp += v.At(i, j) * proj.At(j, i)
		}
	}
	if trv-trp > 1e-8*trv {
		return math.Inf(1)
	}
	return tr
}

func denseKron(xs []*mat.SymDense) *mat.SymDense { return domain.KronSym(xs...) }

func testKron(t *testing.T) *domain.Kron {
	t.Helper()
	k, err := domain.ParseSpec(strings.NewReader(`{
	  "domain": [{"name": "a", "size": 4}, {"name": "b", "size": 8}, {"name": "c", "size": 6}],
	  "workload": [
	    {"name": "t1", "weight": 2, "product": {"a": "identity", "b": "prefix"}},
	    {"name": "t2", "product": {"b": {"ranges": [[0, 3], [2, 7]]}, "c": "allrange"}},
	    {"name": "t3", "weight": 0.5, "product": {"a": "identitytotal", "b": "width:k=3", "c": "identity"}},
	    {"name": "m",  "marginals": {"upto": 1}}
	  ]}`), "", workload.Blocks)
	require.NoError(t, err)
	return k
}

// On 192 cells the structured expected error of a Kronecker strategy equals
// tr(V X⁻¹) computed densely from the explicit kron of the factors and the
// explicit V = WᵀW of the explicit W. Tolerance 1e-10 relative: both sides
// are sums of O(n²) products of O(1) numbers; the dense Cholesky solve
// loses at most cond(X)·1e-16 ≈ 1e-13 for these well-conditioned factors.
func TestKronErrorMatchesDense(t *testing.T) {
	k := testKron(t)
	assert.Equal(t, 192, k.Cells())
	w, err := k.DenseMatrix(1024)
	require.NoError(t, err)
	m, n := w.Dims()
	require.Equal(t, k.Queries(), m)
	require.Equal(t, 192, n)
	v := testkit.ExplicitGram(w)
	vg, err := k.DenseGram(1024)
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(v, vg, 1e-12), "DenseGram equals WᵀW of DenseMatrix")

	rng := rand.New(rand.NewPCG(7, 8))
	xs := make([]*mat.SymDense, 3)
	for i, a := range k.Attributes() {
		xs[i] = randomUnitDiagPD(rng, a.Size)
	}
	total, perTerm, err := k.KronError(xs)
	require.NoError(t, err)
	var chol mat.Cholesky
	require.True(t, chol.Factorize(denseKron(xs)))
	var xiv mat.Dense
	require.NoError(t, chol.SolveTo(&xiv, v))
	want := mat.Trace(&xiv)
	assert.InDelta(t, want, total, 1e-10*want)

	// Per term: the dense error of the term's own rows.
	row := 0
	for j, term := range k.Terms() {
		q := term.Queries()
		wj := w.Slice(row, row+q, 0, n).(*mat.Dense)
		row += q
		var xwj mat.Dense
		require.NoError(t, chol.SolveTo(&xwj, wj.T()))
		var e mat.Dense
		e.Mul(wj, &xwj)
		assert.InDelta(t, mat.Trace(&e), perTerm[j], 1e-10*mat.Trace(&e), "term %s", term.Name)
	}
}

// A singular factor (the 1×d total strategy, X = J) on an attribute that is
// "total" in every term: the structured error uses X⁺ and agrees with the
// dense pseudo-inverse; an attribute the strategy cannot answer gives +Inf.
func TestKronErrorSingularFactor(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(`{
	  "domain": [{"name": "a", "size": 3}, {"name": "b", "size": 5}, {"name": "c", "size": 4}],
	  "workload": [{"product": {"a": "identity", "c": "prefix"}},
	               {"weight": 3, "product": {"a": "prefix", "c": "identity"}}]}`), "", workload.Blocks)
	require.NoError(t, err)
	v, err := k.DenseGram(1024)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	j5 := mat.NewSymDense(5, nil)
	for i := 0; i < 5; i++ {
		for l := i; l < 5; l++ {
			j5.SetSym(i, l, 1)
		}
	}
	xs := []*mat.SymDense{randomUnitDiagPD(rng, 3), j5, randomUnitDiagPD(rng, 4)}
	total, _, err := k.KronError(xs)
	require.NoError(t, err)
	want := densePinvTrace(t, v, denseKron(xs))
	assert.InDelta(t, want, total, 1e-9*want)

	// J on attribute a cannot answer the identity on a.
	j3 := mat.NewSymDense(3, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1})
	total, perTerm, err := k.KronError([]*mat.SymDense{j3, j5, randomUnitDiagPD(rng, 4)})
	require.NoError(t, err)
	assert.True(t, math.IsInf(total, 1))
	assert.True(t, math.IsInf(perTerm[0], 1))
}

// A union of Kronecker parts, each term answered from its own part: the
// structured per-term error equals the dense tr(Vⱼ (wₚ²·⊗Xₚ)⁺), and the
// stacked strategy's column norms are 1 when Σ wₚ² = 1.
func TestUnionErrorMatchesDense(t *testing.T) {
	k := testKron(t)
	w, err := k.DenseMatrix(1024)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	mk := func() []*mat.SymDense {
		xs := make([]*mat.SymDense, 3)
		for i, a := range k.Attributes() {
			xs[i] = randomUnitDiagPD(rng, a.Size)
		}
		return xs
	}
	parts := []domain.UnionPart{{Weight: 0.6, X: mk(), Terms: []int{0, 2}}, {Weight: 0.8, X: mk(), Terms: []int{1, 3}}}
	total, perTerm, err := k.UnionError(parts)
	require.NoError(t, err)
	row, sum := 0, 0.0
	owner := map[int]int{0: 0, 2: 0, 1: 1, 3: 1}
	for j, term := range k.Terms() {
		q := term.Queries()
		wj := w.Slice(row, row+q, 0, k.Cells()).(*mat.Dense)
		row += q
		p := parts[owner[j]]
		xd := denseKron(p.X)
		xd.ScaleSym(p.Weight*p.Weight, xd)
		var chol mat.Cholesky
		require.True(t, chol.Factorize(xd))
		var xwj, e mat.Dense
		require.NoError(t, chol.SolveTo(&xwj, wj.T()))
		e.Mul(wj, &xwj)
		assert.InDelta(t, mat.Trace(&e), perTerm[j], 1e-10*mat.Trace(&e))
		sum += mat.Trace(&e)
	}
	assert.InDelta(t, sum, total, 1e-10*sum)

	_, _, err = k.UnionError(parts[:1])
	assert.ErrorIs(t, err, inputerr.ErrInput, "terms 1 and 3 in no part")
	bad := []domain.UnionPart{parts[0], {Weight: 0.8, X: parts[1].X, Terms: []int{1, 2, 3}}}
	_, _, err = k.UnionError(bad)
	assert.ErrorIs(t, err, inputerr.ErrInput, "term 2 in two parts")
}

// The one-attribute case of the structured workload is the dense workload
// of the same name: one vocabulary.
func TestOneAttributeIsTheDenseWorkload(t *testing.T) {
	for _, name := range []string{"identity", "total", "prefix", "allrange", "width:k=5", "wrange:m=40,seed=3"} {
		k, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "x", "size": 33}],
		  "workload": [{"product": {"x": "`+name+`"}}]}`), "", workload.Blocks)
		require.NoError(t, err, name)
		want, err := workload.Parse(name, 33)
		require.NoError(t, err)
		v, err := k.DenseGram(1024)
		require.NoError(t, err)
		assert.True(t, mat.Equal(v, want.Gram()), name)
		assert.Equal(t, want.Queries(), k.Queries(), name)
	}
}

func TestUncoveredCellNamesTheValue(t *testing.T) {
	// Cells with a = 1 and b ≥ 2 are in no query: t1 covers a = 0 (all b),
	// t2 covers b ∈ {0, 1} (all a), t3 has weight 0.
	_, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 4}],
	  "workload": [{"name": "t1", "product": {"a": {"ranges": [[0, 0]]}}},
	               {"name": "t2", "product": {"b": {"ranges": [[0, 1]]}}},
	               {"name": "t3", "weight": 0, "product": {"a": "identity", "b": "identity"}}]}`), "", workload.Blocks)
	require.Error(t, err)
	assert.True(t, errors.Is(err, inputerr.ErrInput))
	assert.Contains(t, err.Error(), "a = 1, b = 2")
}

// A cover that needs every product: no single product touches every cell,
// yet their union does, so the spec is valid.
func TestCoverByUnionIsAccepted(t *testing.T) {
	_, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 3}],
	  "workload": [{"product": {"a": {"ranges": [[0, 1]]}, "b": {"ranges": [[0, 0]]}}},
	               {"product": {"a": {"ranges": [[2, 2]]}}},
	               {"product": {"b": {"ranges": [[1, 2]]}}}]}`), "", workload.Blocks)
	require.NoError(t, err)
}

// A part holds copies of the listed terms, renumbered, on the same domain:
// its queries, per-term errors and dense Gram are those of the terms
// taken alone (the dense Gram of a Kron is the sum over its products, so
// the part's is the sum over the listed terms' products, computed here
// from the parent's blocks), the parent is unchanged, and it may leave a
// cell unqueried.
func TestKronPart(t *testing.T) {
	k := testKron(t)
	require.GreaterOrEqual(t, len(k.Terms()), 2)
	last := len(k.Terms()) - 1
	p, err := k.Part([]int{last, 0})
	require.NoError(t, err)
	assert.Equal(t, k.Attributes(), p.Attributes())
	require.Len(t, p.Terms(), 2)
	assert.Equal(t, k.Terms()[last].Name, p.Terms()[0].Name)
	assert.Equal(t, k.Terms()[0].Name, p.Terms()[1].Name)
	assert.Equal(t, k.Terms()[last].Queries()+k.Terms()[0].Queries(), p.Queries())
	assert.Len(t, p.Products(), len(k.Terms()[last].Products)+len(k.Terms()[0].Products))
	for j, tm := range p.Terms() {
		for _, pr := range tm.Products {
			assert.Equal(t, j, pr.Term, "the part's products are renumbered")
		}
	}
	for j, tm := range k.Terms() {
		for _, pr := range tm.Products {
			assert.Equal(t, j, pr.Term, "the parent's products keep their term index")
		}
	}
	want := mat.NewSymDense(k.Cells(), nil)
	for _, j := range []int{last, 0} {
		w2 := k.Terms()[j].Weight * k.Terms()[j].Weight
		for _, pr := range k.Terms()[j].Products {
			fs := make([]*mat.SymDense, len(pr.Blocks))
			for i, b := range pr.Blocks {
				fs[i] = b.Gram()
			}
			g := domain.KronSym(fs...)
			g.ScaleSym(w2, g)
			want.AddSym(want, g)
		}
	}
	got, err := p.DenseGram(1024)
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(want, got, 1e-12))
	xs := make([]*mat.SymDense, len(k.Attributes()))
	for i, a := range k.Attributes() {
		xs[i] = eye(a.Size)
	}
	_, full, err := k.KronError(xs)
	require.NoError(t, err)
	_, part, err := p.KronError(xs)
	require.NoError(t, err)
	assert.InDelta(t, full[last], part[0], 1e-9*full[last])
	assert.InDelta(t, full[0], part[1], 1e-9*full[0])

	// A part may leave cells unqueried: a range on one value of "a".
	attrs := []domain.Attribute{{Name: "a", Size: 3}}
	r, err := domain.RangesBlock(3, [][2]int{{0, 0}})
	require.NoError(t, err)
	t1, err := domain.NewProductTerm("r", 1, attrs, map[string]*domain.Block{"a": r})
	require.NoError(t, err)
	t2, err := domain.NewMarginalsTerm("m", 1, attrs, [][]int{{0}})
	require.NoError(t, err)
	both, err := domain.NewKron(attrs, []*domain.Term{t1, t2})
	require.NoError(t, err)
	_, err = domain.NewKron(attrs, []*domain.Term{t1})
	require.ErrorIs(t, err, domain.ErrInput, "the range alone leaves cells unqueried")
	alone, err := both.Part([]int{0})
	require.NoError(t, err)
	assert.Equal(t, 1, alone.Queries())

	for _, bad := range [][]int{nil, {2}, {-1}, {0, 0}} {
		_, err := both.Part(bad)
		assert.ErrorIs(t, err, domain.ErrInput, "%v", bad)
	}
}

// The domain's own identity and total blocks are exactly workload.Parse's
// (the blocks they replaced): the same query count, Gram and matrix, entry
// for entry. Every other built-in name needs the Builtins: without them it
// is refused with an error wrapping ErrInput, in a block and in a spec.
func TestOwnBlocksEqualParse(t *testing.T) {
	for d := 1; d <= 6; d++ {
		for _, name := range []string{"identity", "total", " Identity ", "TOTAL"} {
			b, err := domain.NewBlock(name, d, nil)
			require.NoError(t, err)
			w, err := workload.Parse(name, d)
			require.NoError(t, err)
			assert.Equal(t, w.Queries(), b.Queries(), "%s d=%d", name, d)
			assert.True(t, mat.Equal(w.Gram(), b.Gram()), "%s d=%d: Gram", name, d)
			m, err := b.Matrix()
			require.NoError(t, err)
			assert.True(t, mat.Equal(w.(workload.Explicit).Matrix(), m), "%s d=%d: matrix", name, d)
		}
	}
	_, err := domain.NewBlock("prefix", 4, nil)
	assert.ErrorIs(t, err, domain.ErrInput)
	assert.Contains(t, err.Error(), `block "prefix": unknown block`)
	_, err = domain.NewBlock("identity:k=1", 4, nil)
	assert.ErrorIs(t, err, domain.ErrInput, "parameters go to the Builtins, and there are none")
	_, err = domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 4}], "workload": [{"product": {"a": "prefix"}}]}`), "", nil)
	assert.ErrorIs(t, err, domain.ErrInput)
	k, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 4}], "workload": [{"marginals": {"upto": 1}}, {"product": {"a": {"ranges": [[0, 1]]}}}]}`), "", nil)
	require.NoError(t, err, "marginals and ranges need no Builtins")
	assert.Equal(t, 1+4+1, k.Queries())
}

// DenseMatrix's entry limit is queries·cells ≤ maxCells², exact at the
// boundary and without overflow at maxCells = math.MaxInt (DenseKron's).
func TestDenseMatrixLimit(t *testing.T) {
	k := testKron(t)
	q, n := k.Queries(), k.Cells()
	m := int(math.Ceil(math.Sqrt(float64(q * n))))
	for m*m < q*n {
		m++
	}
	for (m-1)*(m-1) >= q*n {
		m--
	}
	require.Greater(t, m-1, n, "the boundary is the entry limit, not the cell limit")
	_, err := k.DenseMatrix(m)
	assert.NoError(t, err, "q·n = %d ≤ %d²", q*n, m)
	_, err = k.DenseMatrix(m - 1)
	assert.ErrorIs(t, err, domain.ErrInput, "q·n = %d > %d²", q*n, m-1)
	w, err := k.DenseMatrix(math.MaxInt)
	require.NoError(t, err)
	r, c := w.Dims()
	assert.Equal(t, [2]int{q, n}, [2]int{r, c})
}
