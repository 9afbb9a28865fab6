package tables

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// randomFactor returns an m×n matrix I·shift (on its top n rows) plus
// uniform noise: well-conditioned for a large shift.
func randomFactor(rng *rand.Rand, m, n int, shift float64) *mat.Dense {
	f := mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			f.Set(i, j, rng.Float64())
		}
		if i < n {
			f.Set(i, i, f.At(i, i)+shift)
		}
	}
	return f
}

// withQRFrom lowers qrMinCols for a test.
func withQRFrom(t *testing.T, n int) {
	old := qrMinCols
	qrMinCols = n
	t.Cleanup(func() { qrMinCols = old })
}

// TestQRPseudoInverseEqualsSVD: the QR pseudo-inverse of square and tall
// well-conditioned factors is the SVD one (kron.Product.PseudoInverse) to
// 1e-12 of its largest entry (both are backward stable; κ < 100 here, so
// the difference is a few hundred ε); rank-deficient, ill-conditioned,
// too tall or too narrow factors take the SVD path and give its result
// exactly.
func TestQRPseudoInverseEqualsSVD(t *testing.T) {
	withQRFrom(t, 8)
	rng := rand.New(rand.NewPCG(5, 6))
	deficient := randomFactor(rng, 12, 12, 0)
	for j := 0; j < 12; j++ {
		deficient.Set(j, 11, deficient.At(j, 0)+deficient.At(j, 1)) // column 11 = column 0 + column 1
	}
	ill := randomFactor(rng, 10, 10, 5)
	for j := 0; j < 10; j++ {
		ill.Set(j, 9, ill.At(j, 0)+1e-9*ill.At(j, 9))
	}
	for _, c := range []struct {
		name string
		fs   []*mat.Dense
		fast bool
	}{
		{"square", []*mat.Dense{randomFactor(rng, 20, 20, 10)}, true},
		{"tall", []*mat.Dense{randomFactor(rng, 50, 16, 5)}, true},
		{"two factors, one narrow", []*mat.Dense{identityTotal(3), randomFactor(rng, 9, 9, 4)}, true},
		{"narrow", []*mat.Dense{randomFactor(rng, 6, 6, 4)}, false},
		{"too tall", []*mat.Dense{randomFactor(rng, 40, 8, 4)}, false},
		{"wide", []*mat.Dense{randomFactor(rng, 8, 12, 4)}, false},
		{"rank-deficient", []*mat.Dense{deficient}, false},
		{"ill-conditioned", []*mat.Dense{ill}, false},
	} {
		var ms []mat.Matrix
		for _, f := range c.fs {
			ms = append(ms, f)
		}
		a, err := kron.New(ms...)
		require.NoError(t, err)
		want, err := a.PseudoInverse()
		require.NoError(t, err)
		got, err := pseudoInverseOf(a)
		require.NoError(t, err)
		fast := false
		for i := 0; i < a.Len(); i++ {
			_, ok := qrPseudoInverse(a.Factor(i))
			fast = fast || ok
			w, g := want.Factor(i), got.Factor(i)
			if !ok {
				assert.True(t, mat.Equal(w, g), "%s factor %d: the SVD path", c.name, i)
				continue
			}
			scale := mat.Norm(w, math.Inf(1))
			assert.True(t, mat.EqualApprox(w, g, 1e-12*scale), "%s factor %d", c.name, i)
		}
		assert.Equal(t, c.fast, fast, c.name)
	}
}

// TestDenseReleaseQREqualsSVD: a dense release whose strategy is inverted
// through QR has the answers and variances of the SVD path (to 1e-10
// relative: the pseudo-inverses agree to ~1e-13 and an answer sums up to
// 48 of their entries times counts below 50).
func TestDenseReleaseQREqualsSVD(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "x", "size": 48}],
	  "workload": [{"name": "p", "product": {"x": "prefix"}}, {"name": "v", "product": {"x": "identity"}, "weight": 0.5}]}`), ".", workload.Blocks)
	require.NoError(t, err)
	w, err := explicitOf(k)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 8))
	s := DenseStrategy{A: randomFactor(rng, 60, 48, 3)}
	x := make([]float64, 48)
	for i := range x {
		x[i] = float64(rng.IntN(50))
	}
	run := func(from int) ([][]float64, [][]float64) {
		withQRFrom(t, from)
		r, err := prepare(w, s, zcdp(1))
		require.NoError(t, err)
		res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(2), nil, Publishable{})
		require.NoError(t, err)
		return res.Answers, r.Variances()
	}
	_, ok := qrPseudoInverse(s.A)
	require.False(t, ok, "48 columns are below the default qrMinCols")
	withQRFrom(t, 8)
	_, ok = qrPseudoInverse(s.A)
	require.True(t, ok)
	wantA, wantV := run(1 << 30)
	gotA, gotV := run(8)
	for ti := range wantA {
		require.Len(t, gotA[ti], len(wantA[ti]))
		for i := range wantA[ti] {
			assert.InDelta(t, wantA[ti][i], gotA[ti][i], 1e-10*(1+math.Abs(wantA[ti][i])))
			assert.InEpsilon(t, wantV[ti][i], gotV[ti][i], 1e-10)
		}
	}
}
