package marginals

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/privacy/noise"
)

// measureInstance is a small domain with weighted sets, one weight-0
// marginal inside the measured residuals (estimable) and one outside.
func measureInstance(t *testing.T, obj Objective) (*Plan, []float64) {
	t.Helper()
	sizes := []int{3, 4, 5, 2}
	sets := []Set{
		{Attrs: []int{0, 1}, Weight: 2},
		{Attrs: []int{1, 2}, Weight: 0.5},
		{Attrs: []int{2}, Weight: 3},
		{Attrs: nil, Weight: 1},
		{Attrs: []int{1}, Weight: 0},    // estimable: its residuals are measured
		{Attrs: []int{0, 3}, Weight: 0}, // not estimable: {3} and {0,3} are not measured
	}
	p, err := NewPlan(sizes, sets, obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 3*4*5*2)
	for i := range x {
		x[i] = float64(rng.IntN(50))
	}
	return p, x
}

// tablesOf returns the exact marginal tables W_S x of the given sets.
func tablesOf(sizes []int, sets [][]int, x []float64) []Table {
	out := make([]Table, len(sets))
	for i, s := range sets {
		w := marginalDense(sizes, s)
		var y mat.VecDense
		y.MulVec(w, mat.NewVecDense(len(x), x))
		out[i] = Table{Attrs: s, Values: y.RawVector().Data}
	}
	return out
}

// Reconstruction equals the dense least-squares solution W_S A⁺ (y/σ) of the
// explicitly built strategy, for the noisy measurement actually drawn.
// Tolerance 1e-9 of the table's scale (counts up to ~10³; the dense route
// goes through (AAᵀ)⁻¹ of condition ≤ ~10³).
func TestReconstructMatchesDenseLeastSquares(t *testing.T) {
	for _, obj := range []Objective{Sum, Max} {
		p, x := measureInstance(t, obj)
		if p.Marginals[4].Estimable != true || p.Marginals[5].Estimable != false {
			t.Fatalf("estimable flags %v %v", p.Marginals[4].Estimable, p.Marginals[5].Estimable)
		}
		if !math.IsInf(p.Marginals[5].CellVariance, 1) {
			t.Fatalf("non-estimable marginal has variance %v", p.Marginals[5].CellVariance)
		}
		m, err := p.Measure(tablesOf(p.Sizes, p.Needs(), x), noise.NewSeededInsecure(7), 3)
		if err != nil {
			t.Fatal(err)
		}
		if m.Private {
			t.Fatal("a seeded measurement must say it is not private")
		}
		est, err := p.Reconstruct(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(est) != 5 || est[4].Set != 4 {
			t.Fatalf("%d estimates (last for set %d), want 5 (the non-estimable marginal is skipped)", len(est), est[len(est)-1].Set)
		}
		// Dense: y' = stacked y_T / σ_T, x̂ = Aᵀ(AAᵀ)⁻¹y'.
		a := strategyDense(p)
		var yv []float64
		for j, r := range m.Residuals {
			for _, v := range r.Values {
				yv = append(yv, v/math.Sqrt(p.Residuals[j].Variance))
			}
		}
		var aat mat.SymDense
		aat.SymOuterK(1, a)
		var ch mat.Cholesky
		if !ch.Factorize(&aat) {
			t.Fatal("A Aᵀ not positive definite")
		}
		var z, xhat mat.VecDense
		if err := ch.SolveVecTo(&z, mat.NewVecDense(len(yv), yv)); err != nil {
			t.Fatal(err)
		}
		xhat.MulVec(a.T(), &z)
		for _, e := range est {
			var want mat.VecDense
			want.MulVec(marginalDense(p.Sizes, e.Attrs), &xhat)
			for q, v := range e.Values {
				if math.Abs(v-want.AtVec(q)) > 1e-9*1e3 {
					t.Fatalf("%s: marginal %v cell %d: %.12g, dense least squares %.12g", obj, e.Attrs, q, v, want.AtVec(q))
				}
			}
		}
	}
}

// Over repeated seeded measurements the estimates are unbiased and their
// per-cell mean squared error matches the planned CellVariance·σ². With N
// repetitions, the mean of z² over the cells of one marginal has variance
// at most 2/N (cells perfectly correlated, the worst case), so 5·√(2/N)
// bounds its deviation from 1 except with probability < 1e-6; at N = 3000
// that is 0.13, while a noise scale 10% too small or too large moves the
// mean by ≥ 0.19.
func TestEmpiricalVariance(t *testing.T) {
	p, x := measureInstance(t, Sum)
	tables := tablesOf(p.Sizes, p.Needs(), x)
	truth := map[int][]float64{}
	for i, s := range p.Sets {
		if p.Marginals[i].Estimable {
			truth[i] = tablesOf(p.Sizes, [][]int{s.Attrs}, x)[0].Values
		}
	}
	const n = 3000
	const sigma = 2.5
	s := noise.NewSeededInsecure(11)
	sumZ2 := map[int]float64{}
	sumE := map[int][]float64{}
	for rep := 0; rep < n; rep++ {
		m, err := p.Measure(tables, s, sigma)
		if err != nil {
			t.Fatal(err)
		}
		est, err := p.Reconstruct(m)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for i := range p.Sets {
			if !p.Marginals[i].Estimable {
				continue
			}
			e := est[k]
			k++
			want := p.Marginals[i].CellVariance * sigma * sigma
			if d := relDiff(e.CellVariance, want); d > 1e-9 {
				t.Fatalf("estimate variance %.15g, planned %.15g", e.CellVariance, want)
			}
			if sumE[i] == nil {
				sumE[i] = make([]float64, len(e.Values))
			}
			for q, v := range e.Values {
				d := v - truth[i][q]
				sumZ2[i] += d * d / want / float64(len(e.Values))
				sumE[i][q] += d
			}
		}
	}
	bound := 5 * math.Sqrt(2.0/n)
	for i, z2 := range sumZ2 {
		mean := z2 / n
		if math.Abs(mean-1) > bound {
			t.Errorf("marginal %v: mean z² = %.4f, want 1 ± %.3f", p.Sets[i].Attrs, mean, bound)
		}
		sd := math.Sqrt(p.Marginals[i].CellVariance * sigma * sigma / n)
		for q, e := range sumE[i] {
			if math.Abs(e/n) > 5*sd {
				t.Errorf("marginal %v cell %d: mean error %.4g, 5 standard errors %.4g", p.Sets[i].Attrs, q, e/n, 5*sd)
			}
		}
		t.Logf("marginal %v: mean z² %.4f", p.Sets[i].Attrs, mean)
	}
}

// Measure reaches every residual from any covering tables, including the
// workload's own sets, and refuses missing or malformed tables.
func TestMeasureInput(t *testing.T) {
	p, x := measureInstance(t, Sum)
	var own [][]int
	for _, s := range p.Sets {
		if s.Weight > 0 {
			own = append(own, s.Attrs)
		}
	}
	if _, err := p.Measure(tablesOf(p.Sizes, own, x), noise.NewSeededInsecure(1), 1); err != nil {
		t.Fatalf("workload tables: %v", err)
	}
	needs := p.Needs()
	if len(needs) != 2 || !equalInts(needs[0], []int{0, 1}) || !equalInts(needs[1], []int{1, 2}) {
		t.Fatalf("Needs() = %v, want [[0 1] [1 2]]", needs)
	}
	good := tablesOf(p.Sizes, needs, x)
	short := []Table{good[0], {Attrs: good[1].Attrs, Values: good[1].Values[:3]}}
	nan := []Table{good[0], {Attrs: good[1].Attrs, Values: append([]float64{math.NaN()}, good[1].Values[1:]...)}}
	for name, c := range map[string]struct {
		tabs  []Table
		s     *noise.Sampler
		sigma float64
	}{
		"missing":  {good[:1], noise.NewSeededInsecure(1), 1},
		"short":    {short, noise.NewSeededInsecure(1), 1},
		"nan":      {nan, noise.NewSeededInsecure(1), 1},
		"unsorted": {[]Table{{Attrs: []int{1, 0}, Values: good[0].Values}}, noise.NewSeededInsecure(1), 1},
		"sampler":  {good, nil, 1},
		"sigma":    {good, noise.NewSeededInsecure(1), 0},
	} {
		if _, err := p.Measure(c.tabs, c.s, c.sigma); !errors.Is(err, ErrInput) {
			t.Errorf("%s: error %v, want ErrInput", name, err)
		}
	}
	if _, err := p.Reconstruct(&Measurement{}); !errors.Is(err, ErrInput) {
		t.Errorf("foreign measurement: error %v, want ErrInput", err)
	}
}

// The fast Helmert transforms agree with the dense matrix.
func TestHelmert(t *testing.T) {
	for _, d := range []int{2, 3, 7} {
		u := helmertDense(d)
		src := make([]float64, d)
		for i := range src {
			src[i] = float64(i*i) - 2.5
		}
		got := make([]float64, d-1)
		helmertT(got, src)
		var want mat.VecDense
		want.MulVec(u, mat.NewVecDense(d, src))
		for j := range got {
			if math.Abs(got[j]-want.AtVec(j)) > 1e-13 {
				t.Fatalf("d=%d: Uᵀx[%d] = %v, want %v", d, j, got[j], want.AtVec(j))
			}
		}
		back := make([]float64, d)
		helmert(back, got)
		var w2 mat.VecDense
		w2.MulVec(u.T(), &want)
		for i := range back {
			if math.Abs(back[i]-w2.AtVec(i)) > 1e-13 {
				t.Fatalf("d=%d: U y[%d] = %v, want %v", d, i, back[i], w2.AtVec(i))
			}
		}
	}
}
