package synth

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// randomData returns n records over sizes with some dependence between
// neighbouring attributes.
func randomData(sizes []int, n int, seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, 1))
	cols := make([][]int32, len(sizes))
	for a := range cols {
		cols[a] = make([]int32, n)
	}
	for i := 0; i < n; i++ {
		prev := 0
		for a, d := range sizes {
			v := r.IntN(d)
			if a > 0 && r.Float64() < 0.6 {
				v = prev % d
			}
			cols[a][i] = int32(v)
			prev = v
		}
	}
	return &Data{Sizes: sizes, Cols: cols}
}

// measure measures the marginals sets of d with the residual plan at scale
// sigma, seeded.
func measure(t *testing.T, d *Data, sets [][]int, sigma float64, seed uint64) []Measurement {
	t.Helper()
	p, err := marginals.NewPlan(d.Sizes, marginals.Weighted(sets, 1), marginals.Sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tabs []marginals.Table
	for _, s := range sets {
		tabs = append(tabs, marginals.Table{Attrs: s, Values: d.Marginal(s)})
	}
	m, err := p.Measure(tabs, noise.NewSeededInsecure(seed), sigma)
	if err != nil {
		t.Fatal(err)
	}
	return FromResiduals(d.Sizes, m)
}

// The residual tables equal P_T of the true marginal when the noise is
// negligible: checks helmertUp against the plan's Helmert coordinates.
func TestFromResidualsIsCenteredMarginal(t *testing.T) {
	d := randomData([]int{3, 4, 2}, 500, 1)
	ms := measure(t, d, [][]int{{0, 1}, {1, 2}}, 1e-6, 2)
	if len(ms) != 6 { // ∅, {0}, {1}, {2}, {0,1}, {1,2}
		t.Fatalf("got %d residuals", len(ms))
	}
	for _, m := range ms {
		want := d.Marginal(m.Attrs)
		center(d.Sizes, m.Attrs, want)
		for i := range want {
			// 1e-4: noise of std ~1e-6 (a few σ), plus rounding.
			if math.Abs(m.Values[i]-want[i]) > 1e-4 {
				t.Fatalf("residual %v cell %d: %v, want %v", m.Attrs, i, m.Values[i], want[i])
			}
		}
	}
}

// lossOf evaluates L on a full joint distribution p (row-major over all
// attributes) by brute force.
func lossOf(sizes []int, ms []Measurement, p []float64, total float64) float64 {
	all := make([]int, len(sizes))
	for i := range all {
		all[i] = i
	}
	l := 0.0
	for _, m := range combine(ms) {
		if len(m.Attrs) == 0 {
			continue
		}
		mu := make([]float64, len(m.Values))
		sumInto(mu, p, subIndex(sizes, all, m.Attrs))
		for i := range mu {
			mu[i] *= total
		}
		center(sizes, m.Attrs, mu)
		for i := range mu {
			r := mu[i] - m.Values[i]
			l += r * r / m.Variance
		}
	}
	return l
}

// projectSimplex is the Euclidean projection onto {p ≥ 0, Σp = 1}.
func projectSimplex(v []float64) {
	u := slices.Clone(v)
	slices.Sort(u)
	slices.Reverse(u)
	css, theta := 0.0, 0.0
	for i, x := range u {
		css += x
		if tt := (css - 1) / float64(i+1); x-tt > 0 {
			theta = tt
		}
	}
	for i := range v {
		v[i] = math.Max(v[i]-theta, 0)
	}
}

// bruteForce minimizes L over the full simplex by accelerated projected
// gradient (FISTA) on all Π d cells: an independent algorithm over the whole
// distribution, not the model's parametrization.
func bruteForce(sizes []int, ms []Measurement, total float64) (float64, []float64) {
	all := make([]int, len(sizes))
	for i := range all {
		all[i] = i
	}
	n := cells(sizes, all)
	cm := combine(ms)
	lip := 0.0
	for _, m := range cm {
		if len(m.Attrs) > 0 {
			lip += 2 * total * total / m.Variance * float64(n/len(m.Values))
		}
	}
	grad := func(p []float64) []float64 {
		g := make([]float64, n)
		for _, m := range cm {
			if len(m.Attrs) == 0 {
				continue
			}
			idx := subIndex(sizes, all, m.Attrs)
			mu := make([]float64, len(m.Values))
			sumInto(mu, p, idx)
			for i := range mu {
				mu[i] *= total
			}
			center(sizes, m.Attrs, mu)
			for i := range mu {
				mu[i] = 2 * total * (mu[i] - m.Values[i]) / m.Variance
			}
			addFrom(g, mu, idx, 1)
		}
		return g
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = 1 / float64(n)
	}
	y := slices.Clone(x)
	tk := 1.0
	for it := 0; it < 200000; it++ {
		g := grad(y)
		xn := make([]float64, n)
		for i := range xn {
			xn[i] = y[i] - g[i]/lip
		}
		projectSimplex(xn)
		tn := (1 + math.Sqrt(1+4*tk*tk)) / 2
		for i := range y {
			y[i] = xn[i] + (tk-1)/tn*(xn[i]-x[i])
		}
		x, tk = xn, tn
	}
	return lossOf(sizes, ms, x, total), x
}

// The fitted model reaches the exact minimum of the likelihood loss over all
// distributions (found by brute force over the full joint), within its own
// certified gap, at small and large noise (where the non-negativity
// constraints bind).
func TestFitMatchesBruteForce(t *testing.T) {
	sizes := []int{2, 3, 2, 3}
	// 60 records at σ = 3 and 20: the measurements are inconsistent with
	// every non-negative distribution, so the constraints bind and the loss
	// is positive (at small noise the residuals are fitted exactly).
	d := randomData(sizes, 60, 3)
	for _, sigma := range []float64{3, 20} {
		ms := measure(t, d, [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}}, sigma, 4)
		model, res, err := Fit(context.Background(), sizes, ms, &FitOptions{MaxIter: 20000, Tol: 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		total := model.Total
		bf, _ := bruteForce(sizes, ms, total)
		// The model's loss evaluated independently on its full joint.
		joint, err := model.Marginal([]int{0, 1, 2, 3}, 1e6)
		if err != nil {
			t.Fatal(err)
		}
		lm := lossOf(sizes, ms, joint, total)
		t.Logf("sigma %v: fit loss %.10g (recomputed %.10g), gap %.3g, brute force %.10g, %d iterations", sigma, res.Loss, lm, res.Gap, bf, res.Iterations)
		if lm < 1 {
			t.Fatalf("loss %v: the constraints do not bind, the test would not test them", lm)
		}
		// Same loss through two computations: 1e-9 relative (rounding).
		if math.Abs(lm-res.Loss) > 1e-9*lm {
			t.Fatalf("loss %v recomputed as %v", res.Loss, lm)
		}
		// Optimality: within 1e-6 relative of the brute-force minimum, and
		// the certificate is honest (the fit is never below the minimum by
		// more than FISTA's own inaccuracy, and above it by at most Gap).
		if lm > bf*(1+1e-6)+1e-9 || lm < bf*(1-1e-6) {
			t.Fatalf("fit loss %v, brute-force minimum %v", lm, bf)
		}
		if lm-bf > res.Gap+1e-6*bf {
			t.Fatalf("loss above the minimum by %v, more than the certified gap %v", lm-bf, res.Gap)
		}
	}
}
