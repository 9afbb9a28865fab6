package tables

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// residualBasis returns an orthonormal basis of 1⊥ in R^d (d × (d−1)) from
// the SVD of I − J/d: a different basis from package marginals' Helmert
// one. Least squares does not depend on the basis, so the variances must
// agree anyway.
func residualBasis(d int) *mat.Dense {
	c := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			c.Set(i, j, -1/float64(d))
		}
		c.Set(i, i, 1-1/float64(d))
	}
	var svd mat.SVD
	if !svd.Factorize(c, mat.SVDFull) {
		panic("svd")
	}
	var u mat.Dense
	svd.UTo(&u)
	return mat.DenseCopyOf(u.Slice(0, d, 0, d-1)) // singular values 1,…,1,0: drop the last
}

func TestMarginalsVariancesEqualDense(t *testing.T) {
	dom := []domain.Attribute{{Name: "a", Size: 3}, {Name: "b", Size: 4}, {Name: "c", Size: 2}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{
		{Name: "m", Weight: 1, Products: []explicitProduct{marginalProduct(dom, []int{0, 2}), marginalProduct(dom, []int{1})}},
		{Name: "t", Weight: 3, Products: []explicitProduct{marginalProduct(dom, []int{})}},
	}}
	r, err := prepare(w, MarginalsStrategy{}, zcdp(1e6))
	require.NoError(t, err)
	// The dense residual strategy A = [Q_T/σ_T]_T, Q_T = ⊗ (Uᵀ on T, 1ᵀ off T).
	var stack *mat.Dense
	for _, res := range r.Plan().Residuals {
		in := map[int]bool{}
		for _, a := range res.Attrs {
			in[a] = true
		}
		fs := make([]*mat.Dense, len(dom))
		for i, a := range dom {
			if in[i] {
				fs[i] = mat.DenseCopyOf(residualBasis(a.Size).T())
			} else {
				fs[i] = ones(a.Size)
			}
		}
		q := denseOf(fs...)
		q.Scale(1/math.Sqrt(res.Variance), q)
		if stack == nil {
			stack = q
		} else {
			var s mat.Dense
			s.Stack(stack, q)
			stack = &s
		}
	}
	// Unit L2 sensitivity: every column of A has norm 1.
	_, n := stack.Dims()
	for j := 0; j < n; j++ {
		assert.InDelta(t, 1, mat.Norm(stack.ColView(j), 2), 1e-12)
	}
	var ata mat.SymDense
	ata.SymOuterK(1, stack.T())
	// The plan measures only the residuals the marginals need, so AᵀA is
	// singular: (AᵀA)⁺ from its eigendecomposition, eigenvalues below
	// 1e-10·λmax dropped (the nonzero ones are c_T/σ_T² ≥ O(0.1) here).
	var eig mat.EigenSym
	require.True(t, eig.Factorize(&ata, true))
	lam := eig.Values(nil)
	var vec mat.Dense
	eig.VectorsTo(&vec)
	inv := mat.NewDense(n, n, nil)
	for k, l := range lam {
		if l <= 1e-10*lam[len(lam)-1] {
			continue
		}
		col := mat.Col(nil, k, &vec)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				inv.Set(i, j, inv.At(i, j)+col[i]*col[j]/l)
			}
		}
	}
	vs := r.Variances()
	v := r.Sigma() * r.Sigma()
	x := make([]float64, 24)
	for i := range x {
		x[i] = float64((i * 37) % 11)
	}
	tabs := marginalTables(x, dom, func() [][]int { _, s := r.Needs(); return s }())
	res, err := r.Run(context.Background(), Data{Tables: tabs}, noise.NewSeededInsecure(4), nil, Publishable{})
	require.NoError(t, err)
	for ti, term := range w.Terms {
		k := 0
		for _, p := range term.Products {
			wd := denseOf(p.Blocks...)
			var wi, cov mat.Dense
			wi.Mul(wd, inv)
			cov.Mul(&wi, wd.T())
			m, _ := cov.Dims()
			truth := make([]float64, m)
			mat.NewVecDense(m, truth).MulVec(wd, mat.NewVecDense(24, x))
			for i := 0; i < m; i++ {
				want := v * cov.At(i, i)
				// Two double-precision routes (closed form vs Cholesky of
				// a well-conditioned 24×24 matrix): 1e-9 relative.
				assert.InDelta(t, want, vs[ti][k], 1e-9*want, "term %s query %d", term.Name, k)
				assert.InDelta(t, truth[i], res.Answers[ti][k], 6*res.Std[ti][k], "term %s query %d", term.Name, k)
				k++
			}
		}
	}
}

// marginalTables sums a histogram into tables (a reference independent of
// package records' CSV path).
func marginalTables(x []float64, dom []domain.Attribute, sets [][]int) []records.Table {
	out := make([]records.Table, len(sets))
	for s, set := range sets {
		sizes := make([]int, len(set))
		n := 1
		for k, a := range set {
			sizes[k] = dom[a].Size
			n *= sizes[k]
		}
		out[s] = records.Table{Attrs: set, Sizes: sizes, Counts: make([]float64, n)}
		codes := make([]int, len(dom))
		for cell, v := range x {
			c := cell
			for i := len(dom) - 1; i >= 0; i-- {
				codes[i] = c % dom[i].Size
				c /= dom[i].Size
			}
			idx := 0
			for k, a := range set {
				idx = idx*sizes[k] + codes[a]
			}
			out[s].Counts[idx] += v
		}
	}
	return out
}

// A pure marginals release reads exactly the tables its Needs lists, also
// when an attribute of size 1 makes those differ from the Gaussian plan's
// maximal residual subsets; the answers are unbiased on average.
func TestPureMarginalsSizeOneAttribute(t *testing.T) {
	dom := []domain.Attribute{{Name: "a", Size: 3}, {Name: "b", Size: 1}, {Name: "c", Size: 2}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{
		{Name: "m", Weight: 1, Products: []explicitProduct{marginalProduct(dom, []int{0, 1}), marginalProduct(dom, []int{1, 2}), marginalProduct(dom, nil)}},
	}}
	r, err := prepare(w, MarginalsStrategy{Pure: true}, budgettest.PureDP(2))
	require.NoError(t, err)
	hist, sets := r.Needs()
	require.False(t, hist)
	assert.Equal(t, [][]int{{}, {0, 1}, {1, 2}}, sets)
	x := []float64{0, 0, 5, 0, 1, 0}
	tabs := marginalTables(x, dom, sets)
	truth := []float64{0, 5, 1} // {a,b}
	const n = 400
	mean := make([]float64, 3)
	for rep := 0; rep < n; rep++ {
		res, err := r.Run(context.Background(), Data{Tables: tabs}, noise.NewSeededInsecure(uint64(rep)), nil, Publishable{})
		require.NoError(t, err)
		for i := range mean {
			mean[i] += res.Answers[0][i] / n
		}
	}
	sd := math.Sqrt(r.Variances()[0][0] / n)
	for i, v := range mean {
		assert.InDelta(t, truth[i], v, 5*sd, "cell %d of {a,b}", i)
	}
}

// TestCoversNeeds: every needed set must be given as a table; sets are
// compared as whole lists ({1,2} is not {12}, {} is the total).
func TestCoversNeeds(t *testing.T) {
	tabs := []records.Table{{Attrs: []int{1, 2}}, {Attrs: []int{}}, {Attrs: []int{0}}}
	assert.NoError(t, coversNeeds(tabs, [][]int{{0}, {1, 2}, {}}))
	assert.NoError(t, coversNeeds(tabs, nil))
	err := coversNeeds(tabs, [][]int{{0}, {12}})
	assert.ErrorIs(t, err, ErrInput)
	assert.ErrorContains(t, err, "[12]")
	assert.ErrorContains(t, coversNeeds(tabs[:2], [][]int{{0}}), "[0]")
	assert.ErrorContains(t, coversNeeds(tabs[1:], [][]int{{1}}), "[1]")
}
