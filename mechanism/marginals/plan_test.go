package marginals

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// The small instances of the "Must show" list.
type instance struct {
	name  string
	sizes []int
	sets  []Set
}

func smallInstances(t *testing.T) []instance {
	upto2, err := UpTo(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	return []instance{
		{"2x3x4x5 upto 2", []int{2, 3, 4, 5}, Weighted(upto2, 1)},
		{"3x4x5 weighted", []int{3, 4, 5}, []Set{
			{Attrs: []int{0, 1}, Weight: 2},
			{Attrs: []int{1, 2}, Weight: 0.5},
			{Attrs: []int{2}, Weight: 3},
			{Attrs: []int{0}, Weight: 1},
			{Attrs: nil, Weight: 1.5},
		}},
		{"2x2x3x1x4 mixed", []int{2, 2, 3, 1, 4}, []Set{
			{Attrs: []int{0, 1, 2}, Weight: 1},
			{Attrs: []int{2, 3, 4}, Weight: 0.25},
			{Attrs: []int{1, 4}, Weight: 4},
		}},
	}
}

// The sum plan equals newton's dense certified optimum: newton's lower bound
// never exceeds it, newton's strategy does no better, and it equals the SVD
// bound newton computes densely. newton regularizes singular Grams (every
// instance here is singular) and ends ~1e-5 above the optimum, so its
// Objective is only an upper bound; 1e-9 relative against the dense SVD bound
// leaves six orders of magnitude for rounding in n ≤ 120-dimensional
// eigenvalue sums, and 1e-12 is the slack for comparing against bounds.
func TestSumMatchesNewton(t *testing.T) {
	for _, in := range smallInstances(t) {
		t.Run(in.name, func(t *testing.T) {
			p, err := NewPlan(in.sizes, in.sets, Sum, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := newton.Solve(context.Background(), denseGram(in.sizes, in.sets), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstNewton(t, p, res)
		})
	}
}

func checkAgainstNewton(t *testing.T, p *Plan, res *newton.Result) {
	t.Helper()
	if d := relDiff(p.Value, res.SVDBound); d > 1e-9 {
		t.Errorf("plan %.15g vs newton's dense SVD bound %.15g: relative %.3g", p.Value, res.SVDBound, d)
	}
	if res.LowerBound > p.Value*(1+1e-12) {
		t.Errorf("newton's certified lower bound %.15g exceeds the plan %.15g", res.LowerBound, p.Value)
	}
	if res.Objective < p.Value*(1-1e-12) {
		t.Errorf("newton's strategy %.15g beats the plan %.15g", res.Objective, p.Value)
	}
	if d := relDiff(p.Value, p.LowerBound); d > 1e-12 || p.Gap > 1e-12 {
		t.Errorf("plan %.15g vs its own spectral bound %.15g (gap %.3g)", p.Value, p.LowerBound, p.Gap)
	}
	t.Logf("plan %.15g, newton objective %.15g, lower bound %.15g, SVD bound %.15g", p.Value, res.Objective, res.LowerBound, res.SVDBound)
}

// All 3-way marginals over 4⁵: the optimum reference.Marginals3Way4x5 of
// ResidualPlanner's closed form (Xiao, Kifer et al., NeurIPS 2023; given to
// 15 digits, so 1e-13 relative), which is also the SVD bound.
func TestFourToTheFiveKnownOptimum(t *testing.T) {
	sets, err := KWay(5, 3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan([]int{4, 4, 4, 4, 4}, Weighted(sets, 1), Sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := reference.Marginals3Way4x5
	if d := relDiff(p.Value, want); d > 1e-13 {
		t.Errorf("optimum %.15g, want %.15g (relative %.3g)", p.Value, want, d)
	}
	if d := relDiff(p.LowerBound, want); d > 1e-13 {
		t.Errorf("SVD bound %.15g, want %.15g", p.LowerBound, want)
	}
	if len(p.Residuals) != 1+5+10+10 {
		t.Errorf("%d residual subsets, want 26", len(p.Residuals))
	}
}

// newton's dense solve at 1024 cells (a singular Gram: regularized by
// continuation) took 48 s on the shared 2-core machine with OpenBLAS, and
// pure Go is ten times slower, so it runs only on request:
// DPSOLVE_HEAVY=1 go test -run FourToTheFiveAgainstNewton ./mechanism/marginals.
func TestFourToTheFiveAgainstNewton(t *testing.T) {
	if os.Getenv("DPSOLVE_HEAVY") == "" || blas.Default().Name() == blas.Gonum.Name() {
		t.Skip("dense newton at n = 1024: set DPSOLVE_HEAVY=1 (cgo build)")
	}
	sets, _ := KWay(5, 3)
	sizes := []int{4, 4, 4, 4, 4}
	p, err := NewPlan(sizes, Weighted(sets, 1), Sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A loose tolerance keeps it to a few iterations: the comparisons hold at
	// any tolerance (bound ≤ optimum ≤ objective; the SVD bound is exact).
	wm, err := workload.NewMarginals(sizes, 3)
	if err != nil {
		t.Fatal(err)
	}
	res, err := newton.Solve(context.Background(), wm.Gram(), &newton.Options{Tol: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstNewton(t, p, res)
}

// The plan's per-marginal variances equal the dense diag(W_S (AᵀA)⁺ W_Sᵀ)
// of its explicitly built strategy, whose columns all have unit norm
// (sensitivity 1), and its total equals tr(V (AᵀA)⁺). Tolerance 1e-9: the
// dense route squares the condition number of A Aᵀ (at most ~1e3 here).
func TestVariancesMatchDense(t *testing.T) {
	ins := smallInstances(t)
	sets, _ := KWay(5, 3)
	ins = append(ins, instance{"4^5 k=3", []int{4, 4, 4, 4, 4}, Weighted(sets, 1)})
	for _, in := range ins {
		for _, obj := range []Objective{Sum, Max} {
			t.Run(in.name+" "+string(obj), func(t *testing.T) {
				if testing.Short() && len(in.sizes) == 5 && in.sizes[0] == 4 {
					t.Skip("1024 cells")
				}
				p, err := NewPlan(in.sizes, in.sets, obj, nil)
				if err != nil {
					t.Fatal(err)
				}
				a := strategyDense(p)
				_, n := a.Dims()
				for j := 0; j < n; j++ {
					c := 0.0
					for i := 0; i < a.RawMatrix().Rows; i++ {
						c += a.At(i, j) * a.At(i, j)
					}
					if math.Abs(c-1) > 1e-12 {
						t.Fatalf("column %d has squared norm %.15g, want 1", j, c)
					}
				}
				dv := denseCellVariances(p, pinvGram(t, a))
				total := 0.0
				for i, m := range p.Marginals {
					for q, v := range dv[i] {
						if d := relDiff(v, m.CellVariance); d > 1e-9 {
							t.Fatalf("marginal %v cell %d: dense variance %.15g, plan %.15g", m.Attrs, q, v, m.CellVariance)
						}
						total += m.Weight * m.Weight * v
					}
				}
				if d := relDiff(total, p.TotalSquaredError); d > 1e-9 {
					t.Errorf("dense total %.15g, plan %.15g", total, p.TotalSquaredError)
				}
			})
		}
	}
}

// The max plan: certified gap ≤ 1e-8, a largest variance no larger than
// the sum plan's, and for a workload symmetric under every attribute
// permutation (all k-way marginals, equal sizes and weights) both plans
// coincide, because the sum plan already gives every marginal the same
// variance. The certificate is re-derived here from the plan's public
// fields: the primal value from the variances, the bound from Plan.LowerBound
// checked to lie below the sum plan's max variance.
func TestMaxPlan(t *testing.T) {
	ins := smallInstances(t)
	adult := []int{85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2}
	upto3, _ := UpTo(len(adult), 3)
	ins = append(ins, instance{"adult upto 3", adult, Weighted(upto3, 1)})
	for _, in := range ins {
		t.Run(in.name, func(t *testing.T) {
			ps, err := NewPlan(in.sizes, in.sets, Sum, nil)
			if err != nil {
				t.Fatal(err)
			}
			pm, err := NewPlan(in.sizes, in.sets, Max, nil)
			if err != nil {
				t.Fatal(err)
			}
			if pm.Gap > 1e-8 {
				t.Errorf("gap %.3g > 1e-8", pm.Gap)
			}
			if pm.MaxVariance > ps.MaxVariance*(1+1e-12) {
				t.Errorf("max plan's largest variance %.15g > sum plan's %.15g", pm.MaxVariance, ps.MaxVariance)
			}
			if pm.LowerBound > pm.MaxVariance || pm.LowerBound <= 0 {
				t.Errorf("lower bound %.15g not in (0, %.15g]", pm.LowerBound, pm.MaxVariance)
			}
			checkSensitivity(t, pm)
			t.Logf("sum plan max variance %.10g, max plan %.10g (bound %.10g, %d iterations)", ps.MaxVariance, pm.MaxVariance, pm.LowerBound, pm.Iterations)
		})
	}
	sets, _ := KWay(6, 2)
	sizes := []int{3, 3, 3, 3, 3, 3}
	ps, _ := NewPlan(sizes, Weighted(sets, 1), Sum, nil)
	pm, err := NewPlan(sizes, Weighted(sets, 1), Max, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1e-8: the solver's certified gap.
	if d := relDiff(ps.MaxVariance, pm.MaxVariance); d > 1e-8 {
		t.Errorf("symmetric workload: max plan %.15g, sum plan %.15g", pm.MaxVariance, ps.MaxVariance)
	}
}

// checkSensitivity verifies Σ_T Δ_T²/σ_T² = 1 from the residuals' fields.
func checkSensitivity(t *testing.T, p *Plan) {
	t.Helper()
	s := 0.0
	for _, r := range p.Residuals {
		s += r.Sensitivity2 / r.Variance
	}
	if math.Abs(s-1) > 1e-12 {
		t.Errorf("Σ Δ²/σ² = %.15g, want 1", s)
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		sizes []int
		sets  []Set
		obj   Objective
		want  string
	}{
		{"no attributes", nil, []Set{{Weight: 1}}, Sum, "at least one attribute"},
		{"zero size", []int{2, 0}, []Set{{Weight: 1}}, Sum, "size 0"},
		{"empty list", []int{2, 3}, nil, Sum, "no marginals"},
		{"twice", []int{2, 3}, []Set{{Attrs: []int{1, 1}, Weight: 1}}, Sum, "attribute 1 twice"},
		{"out of range", []int{2, 3}, []Set{{Attrs: []int{2}, Weight: 1}}, Sum, "attribute 2"},
		{"negative", []int{2, 3}, []Set{{Attrs: []int{0}, Weight: -1}}, Sum, "weight -1"},
		{"nan", []int{2, 3}, []Set{{Attrs: []int{0}, Weight: math.NaN()}}, Sum, "weight NaN"},
		{"inf", []int{2, 3}, []Set{{Attrs: []int{0}, Weight: math.Inf(1)}}, Sum, "weight +Inf"},
		{"all zero", []int{2, 3}, []Set{{Attrs: []int{0}, Weight: 0}}, Sum, "weight 0"},
		{"objective", []int{2, 3}, []Set{{Attrs: []int{0}, Weight: 1}}, "median", "objective"},
		{"huge set", make([]int, 40), nil, Sum, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "huge set" {
				all := make([]int, 40)
				for i := range all {
					c.sizes[i] = 2
					all[i] = i
				}
				c.sets = []Set{{Attrs: all, Weight: 1}}
				c.want = "pairs"
			}
			_, err := NewPlan(c.sizes, c.sets, c.obj, nil)
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrInput mentioning %q", err, c.want)
			}
		})
	}
	for _, c := range []struct {
		n, k int
		up   bool
		want string
	}{
		{5, 6, false, "k = 6 is larger than the number of attributes (5)"},
		{5, 6, true, "upto = 6 is larger"},
		{5, -1, true, "non-negative"},
		{0, 0, false, "at least one attribute"},
		{500, 4, false, "C(500, 4) = 2.57e+09"},
		{300, 3, true, "C(300, 3) = 4.46e+06"},
	} {
		var err error
		if c.up {
			_, err = UpTo(c.n, c.k)
		} else {
			_, err = KWay(c.n, c.k)
		}
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("n=%d k=%d upto=%v: error %v, want ErrInput mentioning %q", c.n, c.k, c.up, err, c.want)
		}
	}
}

// The builders' order: lexicographic in positions, smaller sets first for
// UpTo, and counts C(n, k).
func TestSetBuilders(t *testing.T) {
	k, _ := KWay(4, 2)
	want := [][]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	if len(k) != len(want) {
		t.Fatalf("KWay(4,2) = %v", k)
	}
	for i := range want {
		if !equalInts(k[i], want[i]) {
			t.Fatalf("KWay(4,2) = %v, want %v", k, want)
		}
	}
	u, _ := UpTo(3, 2)
	wantU := [][]int{{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}}
	for i := range wantU {
		if !equalInts(u[i], wantU[i]) {
			t.Fatalf("UpTo(3,2) = %v, want %v", u, wantU)
		}
	}
	u3, _ := UpTo(100, 3)
	if len(u3) != 1+100+4950+161700 {
		t.Errorf("UpTo(100, 3) has %d sets, want 166751", len(u3))
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Needs on a large lattice: the maximal residuals of all ≤3-way marginals
// over 60 binary attributes are the C(60, 3) triples.
func TestNeedsLarge(t *testing.T) {
	sizes := make([]int, 60)
	for i := range sizes {
		sizes[i] = 2
	}
	sets, _ := UpTo(60, 3)
	p, err := NewPlan(sizes, Weighted(sets, 1), Sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	needs := p.Needs()
	if len(needs) != 34220 || !equalInts(needs[0], []int{0, 1, 2}) || !equalInts(needs[len(needs)-1], []int{57, 58, 59}) {
		t.Fatalf("%d needed tables, first %v", len(needs), needs[0])
	}
}

// Random small workloads (sizes 1…4 including size-1 attributes, random
// sets, duplicate sets, weights 0…3): both plans' per-cell variances equal
// the dense diag(W_S (AᵀA)⁺ W_Sᵀ) of their explicit strategies (1e-9, as in
// TestVariancesMatchDense), every strategy column has norm 1, the sum plan
// equals its spectral bound and the max plan is certified.
func TestRandomWorkloads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 25; trial++ {
		k := 1 + rng.IntN(4)
		sizes := make([]int, k)
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(4)
		}
		var sets []Set
		for j := 0; j < 1+rng.IntN(5); j++ {
			var s []int
			for a := 0; a < k; a++ {
				if rng.IntN(2) == 0 {
					s = append(s, a)
				}
			}
			w := float64(rng.IntN(4))
			if j == 0 {
				w = 0.5 + rng.Float64()
			}
			sets = append(sets, Set{Attrs: s, Weight: w})
		}
		for _, obj := range []Objective{Sum, Max} {
			p, err := NewPlan(sizes, sets, obj, nil)
			if err != nil {
				t.Fatalf("trial %d %s sizes %v sets %v: %v", trial, obj, sizes, sets, err)
			}
			checkSensitivity(t, p)
			if obj == Sum && relDiff(p.Value, p.LowerBound) > 1e-12 {
				t.Fatalf("trial %d: sum %.15g vs bound %.15g", trial, p.Value, p.LowerBound)
			}
			if p.Gap > 1e-8 {
				t.Fatalf("trial %d %s: gap %.3g", trial, obj, p.Gap)
			}
			dv := denseCellVariances(p, pinvGram(t, strategyDense(p)))
			for i, m := range p.Marginals {
				if !m.Estimable {
					continue
				}
				for _, v := range dv[i] {
					if relDiff(v, m.CellVariance) > 1e-9 {
						t.Fatalf("trial %d %s sizes %v: marginal %v dense %.15g plan %.15g", trial, obj, sizes, m.Attrs, v, m.CellVariance)
					}
				}
			}
		}
	}
}

// Covariance equals the dense W_{S₁} (AᵀA)⁺ W_{S₂}ᵀ for every pair of cells of
// every pair of estimable marginals (1e-9 of the largest variance: the dense
// route as in TestVariancesMatchDense).
func TestCovarianceMatchesDense(t *testing.T) {
	for _, obj := range []Objective{Sum, Max} {
		p, _ := measureInstance(t, obj)
		xp := pinvGram(t, strategyDense(p))
		scale := 0.0
		for _, m := range p.Marginals {
			if m.Estimable {
				scale = math.Max(scale, m.CellVariance)
			}
		}
		for i := range p.Sets {
			for j := range p.Sets {
				if !p.Marginals[i].Estimable || !p.Marginals[j].Estimable {
					if _, err := p.Covariance(i, make([]int, len(p.Sets[i].Attrs)), j, make([]int, len(p.Sets[j].Attrs))); !errors.Is(err, ErrInput) {
						t.Fatalf("non-estimable pair (%d, %d): %v", i, j, err)
					}
					continue
				}
				wi, wj := marginalDense(p.Sizes, p.Sets[i].Attrs), marginalDense(p.Sizes, p.Sets[j].Attrs)
				var tmp, c mat.Dense
				tmp.Mul(wi, xp)
				c.Mul(&tmp, wj.T())
				ri, rj := c.Dims()
				for a := 0; a < ri; a++ {
					for b := 0; b < rj; b++ {
						got, err := p.Covariance(i, cellOf(p, i, a), j, cellOf(p, j, b))
						if err != nil {
							t.Fatal(err)
						}
						if math.Abs(got-c.At(a, b)) > 1e-9*scale {
							t.Fatalf("%s: Cov(%v[%d], %v[%d]) = %.15g, dense %.15g", obj, p.Sets[i].Attrs, a, p.Sets[j].Attrs, b, got, c.At(a, b))
						}
					}
				}
			}
		}
	}
}

// cellOf returns the values of row r of marginal i's table (row-major).
func cellOf(p *Plan, i, r int) []int {
	attrs := p.Sets[i].Attrs
	c := make([]int, len(attrs))
	for k := len(attrs) - 1; k >= 0; k-- {
		d := p.Sizes[attrs[k]]
		c[k] = r % d
		r /= d
	}
	return c
}

// The dense Grams the newton comparisons use agree with workload.Marginals'
// closed form V_ij = C(agree(i,j), K) (summed over K for ≤K-way), an
// independent construction.
func TestDenseGramMatchesWorkload(t *testing.T) {
	sizes := []int{2, 3, 4, 5}
	sets, _ := UpTo(4, 2)
	mine := denseGram(sizes, Weighted(sets, 1))
	n := mine.SymmetricDim()
	want := mat.NewSymDense(n, nil)
	for k := 0; k <= 2; k++ {
		w, err := workload.NewMarginals(sizes, k)
		if err != nil {
			t.Fatal(err)
		}
		want.AddSym(want, w.Gram())
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if mine.At(i, j) != want.At(i, j) {
				t.Fatalf("V[%d,%d] = %v, workload.Marginals %v", i, j, mine.At(i, j), want.At(i, j))
			}
		}
	}
}
