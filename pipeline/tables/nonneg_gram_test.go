package tables

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/progress"
)

// The warm-started projection equals the bisection reference whatever the
// hint: below τ*, above it (the Newton step back), far off, and −Inf.
func TestProjectSimplexFromAnyHint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(300)
		v := make([]float64, n)
		scale := 0.0
		for i := range v {
			v[i] = rng.NormFloat64() * 10
			if trial%3 == 0 {
				v[i] = math.Exp(rng.NormFloat64() * 8)
			}
			scale = math.Max(scale, math.Abs(v[i]))
		}
		total := rng.Float64() * 100
		want := simplexByBisection(v, total)
		tau := projectSimplexFrom(make([]float64, n), v, total, make([]float64, n), math.Inf(-1))
		for _, hint := range []float64{math.Inf(-1), tau - 1, tau, tau + 1e-9, tau + 3, tau + 1e6, -1e6, math.NaN()} {
			got := make([]float64, n)
			projectSimplexFrom(got, v, total, make([]float64, n), hint)
			for i := range got {
				// As TestProjectSimplexAgainstBisection: a few ulps of the
				// largest |v|.
				require.InDelta(t, want[i], got[i], 1e-13*(1+math.Max(scale, total)), "trial %d hint %g cell %d", trial, hint, i)
			}
		}
	}
}

// The Gram form of the gradient, Σ w²AᵀA x − Σ w Aᵀy, equals the
// strategy's own Σ w Aᵀ(w A x − y) (1e-12 relative to the gradient's
// scale: both are a few products of small factors), and gradInto writes
// the same into a caller's vector.
func TestGramGradientMatchesStrategyGradient(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h, _ := nnlsInstance(t, seed)
		gg := newGramGradient(h)
		require.NoError(t, gg.init())
		rng := rand.New(rand.NewPCG(seed, 9))
		x := make([]float64, len(h.xhat[0]))
		for i := range x {
			x[i] = rng.Float64() * 5
		}
		want := make([]float64, len(x))
		at := make([]*kron.Product, len(h.a))
		for k, a := range h.a {
			at[k] = a.Transpose()
		}
		require.NoError(t, h.gradient(at, x, want))
		got, err := gg.at(x)
		require.NoError(t, err)
		scale := 0.0
		for _, v := range want {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range want {
			assert.InDelta(t, want[i], got[i], 1e-12*scale, "seed %d cell %d", seed, i)
		}
		v := make([]float64, len(x))
		require.NoError(t, gg.gradInto(x, v, make([]float64, len(x))))
		for i := range v {
			assert.InDelta(t, want[i], v[i], 1e-12*scale, "seed %d cell %d", seed, i)
		}
	}
}

// The power estimate of the Lipschitz constant on 1⊥ lies in [λ, 1.05λ·
// (1+1e-4)] of the dense λ_max(P G P), G = Σ w²AᵀA: an upper bound (FISTA
// needs one) with the stated margin.
func TestPowerLipschitzAgainstDense(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h, dense := nnlsInstance(t, seed)
		gg := newGramGradient(h)
		require.NoError(t, gg.init())
		n := len(h.xhat[0])
		got, err := gg.powerLipschitz(context.Background(), make([]float64, n), make([]float64, n), make([]float64, n))
		require.NoError(t, err)
		g := mat.NewDense(n, n, nil)
		for k, d := range dense {
			var gk mat.Dense
			gk.Mul(d.T(), d)
			gk.Scale(h.w[k]*h.w[k], &gk)
			g.Add(g, &gk)
		}
		p := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := -1 / float64(n)
				if i == j {
					v++
				}
				p.Set(i, j, v)
			}
		}
		var pg, pgp mat.Dense
		pg.Mul(p, g)
		pgp.Mul(&pg, p)
		var eig mat.EigenSym
		require.True(t, eig.Factorize(mat.NewSymDense(n, pgp.RawMatrix().Data), false))
		vals := eig.Values(nil)
		want := vals[len(vals)-1]
		t.Logf("seed %d: power estimate %.8g, dense λ_max on 1⊥ %.8g", seed, got, want)
		assert.GreaterOrEqual(t, got, want*(1-1e-12))
		assert.LessOrEqual(t, got, 1.05*want*(1+1e-4))
	}
}

// The estimator reports progress: its last event is Done, with the
// iteration count as Step.
func TestNNLSProgress(t *testing.T) {
	h, _ := nnlsInstance(t, 1)
	var events []progress.Event
	nr, err := h.nnls(context.Background(), h.xhat[h.best], NNLSOptions{Tol: 1e-11, MaxIter: 1000000,
		Progress: func(e progress.Event) { events = append(events, e) }})
	require.NoError(t, err)
	require.NotEmpty(t, events)
	last := events[len(events)-1]
	assert.True(t, last.Done)
	assert.Equal(t, "nonnegative", last.Stage)
	assert.Equal(t, nr.iterations, last.Step)
	assert.Len(t, events, nr.iterations/progressEvery+1)
}

// BenchmarkGramProductAdult times one Kronecker Gram product on the Adult
// kron plan's shape (85·9·16·7·2·2 = 342,720 cells, [I; 1ᵀ]/√2 factors:
// the cost depends on the shape alone; the dense vector keeps the first
// stage a full GEMM); the estimator runs about 430 of them on that plan,
// mostly on sparse iterates, and they are its largest part.
func BenchmarkGramProductAdult(b *testing.B) {
	var fs []mat.Matrix
	for _, d := range []int{85, 9, 16, 7, 2, 2} {
		fs = append(fs, identityTotal(d))
	}
	a, err := kron.New(fs...)
	if err != nil {
		b.Fatal(err)
	}
	gp := newGramProduct(a)
	x, out, tmp := make([]float64, gp.n), make([]float64, gp.n), make([]float64, gp.n)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	for b.Loop() {
		gp.apply(x, out, tmp)
	}
}

// A least-squares total of 0 or below leaves one feasible histogram, 0:
// the estimator returns it, converged, whatever the start.
func TestNNLSNonPositiveTotalIsZero(t *testing.T) {
	for _, total := range []float64{0, -3.5} {
		h, _ := nnlsInstance(t, 2)
		h.total = total
		nr, err := h.nnls(context.Background(), h.xhat[h.best], NNLSOptions{})
		require.NoError(t, err)
		require.True(t, nr.converged, "total %g", total)
		for i, v := range nr.x {
			require.Equal(t, 0.0, v, "total %g cell %d", total, i)
		}
	}
}

// The Gram product on sparse vectors (the first stage on the non-zero
// columns only) equals the strategy's own AᵀA x, at every density from
// none to all (the sparse stage runs up to 60% of the columns, the GEMM
// above), to 1e-12 of the result's scale (a few products of small
// factors); with three stages, and with small neighbours merged (2·2 and
// 6·3: two stages).
func TestGramProductSparseMatchesStrategy(t *testing.T) {
	a1, err := kron.New(prefix(7), identityTotal(5), identityTotal(4))
	require.NoError(t, err)
	a2, err := kron.New(identityTotal(2), identityTotal(2), prefix(6), identityTotal(3))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(12, 13))
	for _, c := range []struct {
		a      *kron.Product
		stages []int
	}{{a1, []int{7, 5, 4}}, {a2, []int{4, 18}}} {
		at := c.a.Transpose()
		gp := newGramProduct(c.a)
		var stages []int
		for _, g := range gp.g {
			stages = append(stages, g.Rows)
		}
		require.Equal(t, c.stages, stages)
		for _, density := range []float64{0, 0.005, 0.02, 0.1, 0.3, 0.6, 1} {
			for trial := 0; trial < 5; trial++ {
				x := make([]float64, gp.n)
				for i := range x {
					if rng.Float64() < density {
						x[i] = rng.NormFloat64() * 10
					}
				}
				ax, err := c.a.MulVec(x)
				require.NoError(t, err)
				want, err := at.MulVec(ax)
				require.NoError(t, err)
				got, tmp := make([]float64, gp.n), make([]float64, gp.n)
				for i := range got {
					got[i], tmp[i] = math.NaN(), math.NaN() // nothing stale may survive
				}
				gp.apply(x, got, tmp)
				scale := 1.0
				for _, v := range want {
					scale = math.Max(scale, math.Abs(v))
				}
				for i := range want {
					require.InDelta(t, want[i], got[i], 1e-12*scale, "stages %v density %g trial %d cell %d", stages, density, trial, i)
				}
			}
		}
	}
}

// at returns (for the tests) the gradient at x in a new vector.
func (gg *gramGradient) at(x []float64) ([]float64, error) {
	g := make([]float64, len(gg.b))
	return g, gg.gradInto(x, g, make([]float64, len(gg.b)))
}

// gradient sets g = Σ_k w_k A_kᵀ(w_k A_k x − y_k), the gradient by the
// strategy itself (the reference the Gram form is tested against; test-only).
func (h *histogramLS) gradient(at []*kron.Product, x, g []float64) error {
	clear(g)
	for k, a := range h.a {
		r, err := a.MulVec(x)
		if err != nil {
			return err
		}
		for i := range r {
			r[i] = h.w[k]*r[i] - h.y[k][i]
		}
		gk, err := at[k].MulVecOverwrite(r)
		if err != nil {
			return err
		}
		for i := range g {
			g[i] += h.w[k] * gk[i]
		}
	}
	return nil
}
