package marginals

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// pureInstance is a 2×3×4 domain: overlapping 2-way tables, a 1-way table
// inside one of them, the total, a marginal asked twice, an estimable
// weight-0 marginal and a non-estimable one.
func pureInstance(t *testing.T, obj Objective) (*PurePlan, []float64) {
	t.Helper()
	sizes := []int{2, 3, 4}
	sets := []Set{
		{Attrs: []int{0, 1}, Weight: 1},
		{Attrs: []int{1, 2}, Weight: 2},
		{Attrs: []int{2}, Weight: 0.5},
		{Attrs: nil, Weight: 3},
		{Attrs: []int{0, 1}, Weight: 0.5}, // the same table from another term
		{Attrs: []int{1}, Weight: 0},      // estimable from the measured tables
		{Attrs: []int{0, 2}, Weight: 0},   // not estimable: {0,2} is not seen
	}
	pp, err := NewPurePlan(sizes, sets, obj)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 2*3*4)
	for i := range x {
		x[i] = float64(rng.IntN(40))
	}
	return pp, x
}

// measuredDense stacks the measured tables' matrices M_A and returns them
// with the diagonal GLS weights 1/V_A per row.
func measuredDense(pp *PurePlan, vars []float64) (*mat.Dense, []float64) {
	var stack *mat.Dense
	var w []float64
	for i, tb := range pp.Tables {
		m := marginalDense(pp.Sizes, tb.Attrs)
		r, _ := m.Dims()
		for q := 0; q < r; q++ {
			w = append(w, 1/vars[i])
		}
		if stack == nil {
			stack = m
			continue
		}
		var s mat.Dense
		s.Stack(stack, m)
		stack = &s
	}
	return stack, w
}

// pinvSym returns the pseudo-inverse of a symmetric PSD matrix from its
// eigendecomposition, dropping eigenvalues below 1e-10·λmax (the Gram of
// marginal tables is singular; its nonzero eigenvalues here are ≥ ~1e-3 of
// the largest, far above the cut).
func pinvSym(t *testing.T, g *mat.SymDense) *mat.Dense {
	t.Helper()
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var vec mat.Dense
	eig.VectorsTo(&vec)
	lmax := vals[len(vals)-1]
	n := len(vals)
	out := mat.NewDense(n, n, nil)
	for k, l := range vals {
		if l < 1e-10*lmax {
			continue
		}
		col := vec.ColView(k)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				out.Set(i, j, out.At(i, j)+col.AtVec(i)*col.AtVec(j)/l)
			}
		}
	}
	return out
}

// weightedGramPinv returns (MᵀΩM)⁺ for the measured tables with noise
// variances vars.
func weightedGramPinv(t *testing.T, pp *PurePlan, vars []float64) (*mat.Dense, *mat.Dense, []float64) {
	m, w := measuredDense(pp, vars)
	_, n := m.Dims()
	g := mat.NewSymDense(n, nil)
	r, _ := m.Dims()
	for q := 0; q < r; q++ {
		g.SymRankOne(g, w[q], m.RowView(q))
	}
	return pinvSym(t, g), m, w
}

// (a) The GLS reconstruction equals the dense weighted least-squares
// solution W_S (MᵀΩM)⁺MᵀΩy, Ω = diag(1/V_A), on the noisy tables actually
// drawn. Tolerance 1e-10 of the largest table value (values ~10²–10³; the
// dense route's eigendecomposition loses ~1e-13 relative at this size).
func TestPureReconstructMatchesDenseWLS(t *testing.T) {
	for _, obj := range []Objective{Sum, Max} {
		pp, x := pureInstance(t, obj)
		if len(pp.Tables) != 4 {
			t.Fatalf("%d measured tables, want 4 (the duplicate marginal is measured once)", len(pp.Tables))
		}
		cals, err := pp.Calibrate(budgettest.PureDP(0.8))
		if err != nil {
			t.Fatal(err)
		}
		m, err := pp.Measure(tablesOf(pp.Sizes, [][]int{{0, 1, 2}}, x), noise.NewSeededInsecure(5), cals)
		if err != nil {
			t.Fatal(err)
		}
		if m.Private {
			t.Fatal("a seeded measurement must say it is not private")
		}
		est, err := pp.Reconstruct(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(est) != 6 {
			t.Fatalf("%d estimates, want 6 (the non-estimable marginal is skipped)", len(est))
		}
		vars := make([]float64, len(m.Tables))
		var y []float64
		scale := 0.0
		for i, tb := range m.Tables {
			vars[i] = tb.Variance
			y = append(y, tb.Values...)
			for _, v := range tb.Values {
				scale = math.Max(scale, math.Abs(v))
			}
		}
		gp, mm, w := weightedGramPinv(t, pp, vars)
		wy := make([]float64, len(y))
		for q := range y {
			wy[q] = w[q] * y[q]
		}
		var mty, xhat mat.VecDense
		mty.MulVec(mm.T(), mat.NewVecDense(len(wy), wy))
		xhat.MulVec(gp, &mty)
		for _, e := range est {
			var want mat.VecDense
			want.MulVec(marginalDense(pp.Sizes, e.Attrs), &xhat)
			for q, v := range e.Values {
				if math.Abs(v-want.AtVec(q)) > 1e-10*scale {
					t.Fatalf("%s: marginal %v cell %d: GLS %.15g, dense WLS %.15g", obj, e.Attrs, q, v, want.AtVec(q))
				}
			}
		}
		// Consistency: the two tables sharing attribute 1 agree on it.
		a, b := pp.base.marginalize(est[0].Table, []int{1}), pp.base.marginalize(est[1].Table, []int{1})
		for q := range a {
			if math.Abs(a[q]-b[q]) > 1e-10*scale {
				t.Fatalf("tables {0,1} and {1,2} disagree on {1}: %v vs %v", a, b)
			}
		}
	}
}

// (b) The reported variances equal the dense covariance W_S (MᵀΩM)⁺ W_Sᵀ:
// every cell's variance (the plan's, per unit Laplace variance, and the
// estimate's, for the noise actually drawn), the covariances between cells
// of different marginals (Base().Covariance) and the totals. Relative 1e-10
// (the dense pseudo-inverse loses ~1e-13 here).
func TestPureVariancesEqualDenseCovariance(t *testing.T) {
	for _, obj := range []Objective{Sum, Max} {
		pp, _ := pureInstance(t, obj)
		unit := make([]float64, len(pp.Tables))
		for i, tb := range pp.Tables {
			unit[i] = tb.Scale * tb.Scale
		}
		gp, _, _ := weightedGramPinv(t, pp, unit)
		cov := func(i, j int) *mat.Dense {
			var tmp, c mat.Dense
			tmp.Mul(marginalDense(pp.Sizes, pp.Sets[i].Attrs), gp)
			c.Mul(&tmp, marginalDense(pp.Sizes, pp.Sets[j].Attrs).T())
			return &c
		}
		total, maxv := 0.0, 0.0
		for i, s := range pp.Sets {
			if !pp.Marginals[i].Estimable {
				if i != 6 {
					t.Fatalf("marginal %d should be estimable", i)
				}
				continue
			}
			c := cov(i, i)
			r, _ := c.Dims()
			for q := 0; q < r; q++ {
				if relDiff(c.At(q, q), pp.Marginals[i].CellVariance) > 1e-10 {
					t.Fatalf("%s: marginal %v cell %d: variance %.15g, dense %.15g", obj, s.Attrs, q, pp.Marginals[i].CellVariance, c.At(q, q))
				}
				total += s.Weight * s.Weight * c.At(q, q)
				maxv = math.Max(maxv, s.Weight*s.Weight*c.At(q, q))
			}
		}
		if relDiff(total, pp.TotalSquaredError) > 1e-10 || relDiff(maxv, pp.MaxVariance) > 1e-10 {
			t.Fatalf("%s: totals %.15g / %.15g, dense %.15g / %.15g", obj, pp.TotalSquaredError, pp.MaxVariance, total, maxv)
		}
		// Cross-covariances between the {0,1} and {1,2} tables.
		c := cov(0, 1)
		for _, cell := range [][2][]int{{{0, 2}, {2, 3}}, {{1, 1}, {1, 0}}, {{1, 0}, {2, 1}}} {
			got, err := pp.Base().Covariance(0, cell[0], 1, cell[1])
			if err != nil {
				t.Fatal(err)
			}
			want := c.At(cell[0][0]*3+cell[0][1], cell[1][0]*4+cell[1][1])
			if math.Abs(got-want) > 1e-10*pp.Marginals[0].CellVariance {
				t.Fatalf("%s: covariance %v/%v: %.15g, dense %.15g", obj, cell[0], cell[1], got, want)
			}
		}
		// The noise actually drawn: CellVariances and the estimates agree
		// with the dense covariance for those variances.
		cals, err := pp.Calibrate(budgettest.PureDP(0.3))
		if err != nil {
			t.Fatal(err)
		}
		vars := make([]float64, len(cals))
		for i, c := range cals {
			vars[i] = c.Variance
		}
		cv, err := pp.CellVariances(vars)
		if err != nil {
			t.Fatal(err)
		}
		gp2, _, _ := weightedGramPinv(t, pp, vars)
		for i, s := range pp.Sets {
			if !pp.Marginals[i].Estimable {
				if !math.IsInf(cv[i], 1) {
					t.Fatalf("non-estimable marginal has variance %v", cv[i])
				}
				continue
			}
			w := marginalDense(pp.Sizes, s.Attrs)
			var tmp, c mat.Dense
			tmp.Mul(w, gp2)
			c.Mul(&tmp, w.T())
			if relDiff(c.At(0, 0), cv[i]) > 1e-10 {
				t.Fatalf("marginal %v at ε = 0.3: variance %.15g, dense %.15g", s.Attrs, cv[i], c.At(0, 0))
			}
			// Per unit Laplace variance 2/ε², up to the snapping (~2⁻⁴⁰).
			if relDiff(cv[i], pp.Marginals[i].CellVariance*2/(0.3*0.3)) > 1e-9 {
				t.Fatalf("marginal %v: %.15g at ε = 0.3, plan %.15g·2/ε²", s.Attrs, cv[i], pp.Marginals[i].CellVariance)
			}
		}
	}
}

// (c) Over repeated seeded releases the answers are unbiased, the mean
// squared z-score per marginal is 1 and the total squared error matches the
// expected one. Every estimate is a linear combination of independent
// Laplace variables, whose excess kurtosis is 3, so Var(z²) ≤ 2 + 3 = 5 for
// each cell; the mean of z² over one marginal's cells and N repetitions has
// variance ≤ 5/N (cells perfectly correlated, the worst case), and 5·√(5/N)
// = 0.144 at N = 6000 bounds its deviation from 1 except with probability
// < 1e-6 (Chebyshev would give 1/25; the sum of N independent terms is
// close to normal). A Laplace scale 10% off moves the mean z² by ≥ 0.19, so
// the test detects it (checked below with the scales reported 10% low).
func TestPureEmpiricalVariance(t *testing.T) {
	pp, x := pureInstance(t, Sum)
	tabs := tablesOf(pp.Sizes, pp.Needs(), x)
	cals, err := pp.Calibrate(budgettest.PureDP(1.5))
	if err != nil {
		t.Fatal(err)
	}
	const n = 6000
	s := noise.NewSeededInsecure(17)
	sumZ2, sumZ2off := map[int]float64{}, map[int]float64{}
	cellsOf := map[int]float64{}
	totalErr, totalExp := 0.0, 0.0
	for rep := 0; rep < n; rep++ {
		m, err := pp.Measure(tabs, s, cals)
		if err != nil {
			t.Fatal(err)
		}
		est, err := pp.Reconstruct(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range est {
			truth := tablesOf(pp.Sizes, [][]int{e.Attrs}, x)[0].Values
			for q, v := range e.Values {
				d := v - truth[q]
				sumZ2[e.Set] += d * d / e.CellVariance
				sumZ2off[e.Set] += d * d / (e.CellVariance * 0.9 * 0.9)
				totalErr += d * d
			}
			cellsOf[e.Set] = float64(len(e.Values))
			if rep == 0 {
				totalExp += e.CellVariance * float64(len(e.Values))
			}
		}
	}
	for set, z2 := range sumZ2 {
		mean := z2 / (n * cellsOf[set])
		if math.Abs(mean-1) > 0.144 {
			t.Errorf("marginal %v: mean z² = %.4f, want 1 ± 0.144", pp.Sets[set].Attrs, mean)
		}
		if off := sumZ2off[set] / (n * cellsOf[set]); math.Abs(off-1) <= 0.144 {
			t.Errorf("marginal %v: a 10%% smaller scale gives mean z² = %.4f, not detected", pp.Sets[set].Attrs, off)
		}
	}
	// The total over all estimates is a sum of z²-like terms: its mean over
	// the repetitions has relative standard deviation ≤ √(5/N) = 0.029.
	if r := totalErr / n / totalExp; math.Abs(r-1) > 5*math.Sqrt(5.0/n) {
		t.Errorf("empirical total squared error / expected = %.4f, want 1 ± %.3f", r, 5*math.Sqrt(5.0/n))
	}
}

// (d) Privacy audit of the sensitivity: over every neighbouring pair of
// datasets of a tiny domain (add or remove one record, from a random
// dataset and from the empty one), the L1 change of each measured table is
// at most the sensitivity each calibration used (1), attained, and the
// privacy loss of the whole measurement Σ_A ‖ΔM_A x‖₁ · (snapped
// sensitivity/sensitivity)/scale_A is at most ε. Replace-one neighbours
// change each table by 2, which the docs say is not the relation used.
func TestPureSensitivityAudit(t *testing.T) {
	sizes := []int{2, 3}
	sets := []Set{{Attrs: []int{0}, Weight: 1}, {Attrs: []int{1}, Weight: 2}, {Attrs: []int{0, 1}, Weight: 1}, {Attrs: nil, Weight: 1}}
	pp, err := NewPurePlan(sizes, sets, Sum)
	if err != nil {
		t.Fatal(err)
	}
	const eps = 0.7
	cals, err := pp.Calibrate(budgettest.PureDP(eps))
	if err != nil {
		t.Fatal(err)
	}
	spent := 0.0
	for _, c := range cals {
		spent += c.Budget.Epsilon()
	}
	if spent > eps || spent < eps*(1-1e-12) {
		t.Fatalf("the tables spend ε = %.17g of %v", spent, eps)
	}
	all := [][]int{{0, 1}}
	bases := [][]float64{make([]float64, 6), {3, 0, 1, 4, 2, 7}}
	worst := make([]float64, len(pp.Tables))
	worstLoss := 0.0
	for _, x := range bases {
		for i := range x {
			for _, delta := range []float64{1, -1} {
				if x[i]+delta < 0 {
					continue
				}
				y := append([]float64(nil), x...)
				y[i] += delta
				tx, ty := tablesOf(sizes, all, x)[0], tablesOf(sizes, all, y)[0]
				loss := 0.0
				for k, tb := range pp.Tables {
					a, b := pp.base.marginalize(tx, tb.Attrs), pp.base.marginalize(ty, tb.Attrs)
					l1 := 0.0
					for q := range a {
						l1 += math.Abs(a[q] - b[q])
					}
					worst[k] = math.Max(worst[k], l1)
					// Snapping can add g per cell; the calibration covers it.
					loss += (l1 + cals[k].Grid*tb.Cells) / cals[k].Scale
				}
				worstLoss = math.Max(worstLoss, loss)
			}
		}
	}
	for k, c := range cals {
		if worst[k] != c.Sensitivity {
			t.Fatalf("table %v: largest L1 change %v, calibrated for %v", pp.Tables[k].Attrs, worst[k], c.Sensitivity)
		}
	}
	if worstLoss > eps {
		t.Fatalf("largest privacy loss %.17g exceeds ε = %v", worstLoss, eps)
	}
	// Replace-one: move a record from cell 0 to cell 5.
	x := bases[1]
	y := append([]float64(nil), x...)
	y[0], y[5] = y[0]-1, y[5]+1
	tx, ty := tablesOf(sizes, all, x)[0], tablesOf(sizes, all, y)[0]
	a, b := pp.base.marginalize(tx, []int{0, 1}), pp.base.marginalize(ty, []int{0, 1})
	l1 := 0.0
	for q := range a {
		l1 += math.Abs(a[q] - b[q])
	}
	if l1 != 2 {
		t.Fatalf("replace-one changes the 2-way table by %v, want 2", l1)
	}
}

// directObjective is D(u) = Σ_A W_A c_A/u_A² at u_A = 1/b_A, Σ u_A = 1 (Sum),
// or max_A W_A/u_A² (Max).
func directObjective(pp *PurePlan, u []float64) float64 {
	v := 0.0
	for i, tb := range pp.Tables {
		if pp.Objective == Sum {
			v += tb.Weight2 * tb.Cells / (u[i] * u[i])
		} else {
			v = math.Max(v, tb.Weight2/(u[i]*u[i]))
		}
	}
	return v
}

// (e) The closed-form scales minimize the direct objective: they beat the
// equal split (also for the GLS error actually reported) and match a
// numeric minimization (pairwise exchange on the simplex of u = 1/b: for
// each pair, the split of u_i + u_j minimized by golden-section search,
// sweeps until no pair improves by 1e-15 relative) to 1e-9 relative (the
// searches stop at a bracket of 1e-12, and D is flat to second order at its
// minimum); for Max they are never beaten by 20000 random points of the
// simplex.
func TestPureScalesAreOptimal(t *testing.T) {
	for _, obj := range []Objective{Sum, Max} {
		pp, _ := pureInstance(t, obj)
		k := len(pp.Tables)
		u := make([]float64, k)
		inv := 0.0
		for i, tb := range pp.Tables {
			u[i] = 1 / tb.Scale
			inv += u[i]
		}
		if math.Abs(inv-1) > 1e-14 {
			t.Fatalf("Σ 1/b_A = %.17g, want 1", inv)
		}
		if got := directObjective(pp, u); relDiff(got, pp.DirectValue) > 1e-13 {
			t.Fatalf("%s: DirectValue %.15g, objective at the scales %.15g", obj, pp.DirectValue, got)
		}
		if pp.Value > pp.DirectValue*(1+1e-13) {
			t.Fatalf("%s: GLS value %.15g above the direct estimator's %.15g", obj, pp.Value, pp.DirectValue)
		}
		equal := make([]float64, k)
		for i := range equal {
			equal[i] = 1 / float64(k)
		}
		if d := directObjective(pp, equal); d <= pp.DirectValue {
			t.Fatalf("%s: the equal split's direct objective %.15g is not above the optimum %.15g", obj, d, pp.DirectValue)
		}
		// The GLS error at the equal split (all b_A = k).
		vars := make([]float64, k)
		for i := range vars {
			vars[i] = float64(k * k)
		}
		cv, err := pp.CellVariances(vars)
		if err != nil {
			t.Fatal(err)
		}
		eqTotal, eqMax := 0.0, 0.0
		for i, s := range pp.Sets {
			if s.Weight > 0 {
				w2 := s.Weight * s.Weight
				eqTotal += w2 * pp.Marginals[i].Cells * cv[i]
				eqMax = math.Max(eqMax, w2*cv[i])
			}
		}
		eqValue := eqTotal
		if obj == Max {
			eqValue = eqMax
		}
		if eqValue <= pp.Value {
			t.Fatalf("%s: the equal split's GLS error %.15g is not above the plan's %.15g", obj, eqValue, pp.Value)
		}
		softmax := func(z []float64) []float64 {
			m := z[0]
			for _, v := range z {
				m = math.Max(m, v)
			}
			out := make([]float64, len(z))
			s := 0.0
			for i, v := range z {
				out[i] = math.Exp(v - m)
				s += out[i]
			}
			for i := range out {
				out[i] /= s
			}
			return out
		}
		if obj == Sum {
			v := equal
			for sweep := 0; sweep < 2000; sweep++ {
				before := directObjective(pp, v)
				for i := 0; i < k; i++ {
					for j := i + 1; j < k; j++ {
						sum := v[i] + v[j]
						f := func(a float64) float64 {
							w := append([]float64(nil), v...)
							w[i], w[j] = a, sum-a
							return directObjective(pp, w)
						}
						lo, hi := 0.0, sum
						g := (math.Sqrt(5) - 1) / 2
						for hi-lo > 1e-12*sum {
							a, b := hi-g*(hi-lo), lo+g*(hi-lo)
							if f(a) < f(b) {
								hi = b
							} else {
								lo = a
							}
						}
						v[i], v[j] = (lo+hi)/2, sum-(lo+hi)/2
					}
				}
				if before-directObjective(pp, v) <= 1e-15*before {
					break
				}
			}
			if got := directObjective(pp, v); relDiff(got, pp.DirectValue) > 1e-9 {
				t.Fatalf("numeric minimum %.15g, closed form %.15g", got, pp.DirectValue)
			}
			for i := range v {
				if relDiff(v[i], u[i]) > 1e-4 {
					t.Fatalf("numeric 1/b_%d = %.10g, closed form %.10g", i, v[i], u[i])
				}
			}
			continue
		}
		rng := rand.New(rand.NewPCG(9, 9))
		for trial := 0; trial < 20000; trial++ {
			z := make([]float64, k)
			for i := range z {
				z[i] = 2 * rng.NormFloat64()
			}
			if d := directObjective(pp, softmax(z)); d < pp.DirectValue*(1-1e-12) {
				t.Fatalf("a random split reaches %.15g below the optimum %.15g", d, pp.DirectValue)
			}
		}
	}
}

// Bad input: a non-pure budget, a missing table, no sampler.
func TestPureBadInput(t *testing.T) {
	pp, x := pureInstance(t, Sum)
	if _, err := pp.Calibrate(budgettest.ZCDP(1)); err == nil {
		t.Fatal("a zCDP budget was accepted for a pure plan")
	}
	cals, err := pp.Calibrate(budgettest.PureDP(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pp.Measure(tablesOf(pp.Sizes, [][]int{{0, 1}}, x), noise.NewSeededInsecure(1), cals); err == nil {
		t.Fatal("a missing table was accepted")
	}
	if _, err := pp.Measure(tablesOf(pp.Sizes, pp.Needs(), x), nil, cals); err == nil {
		t.Fatal("a nil sampler was accepted")
	}
	if _, err := NewPurePlan([]int{2}, []Set{{Attrs: []int{0}, Weight: 1}}, "median"); err == nil {
		t.Fatal("an unknown objective was accepted")
	}
}

// A sampled audit of the noise actually drawn: over n seeded measurements
// of a tiny domain, each table's Laplace scale is fitted from the released
// noise (mean absolute deviation: |Z| ~ Exp(b) for Laplace(b), so b̂ has
// relative standard error 1/√(n·cells)), and the privacy loss bound of the
// release, Σ_A Δ_A/b̂_A with Δ_A = 1 (the audited sensitivity above), must
// equal ε to within 4 relative standard errors of the worst table
// (4/√n = 0.028 at n = 20000): the sampler really spends ε, not more. The
// same measurement with every scale halved must fail (it spends 2ε).
func TestPurePrivacyAudit(t *testing.T) {
	sizes := []int{2, 3}
	sets := []Set{{Attrs: []int{0}, Weight: 1}, {Attrs: []int{1}, Weight: 2}, {Attrs: []int{0, 1}, Weight: 1}, {Attrs: nil, Weight: 1}}
	pp, err := NewPurePlan(sizes, sets, Sum)
	if err != nil {
		t.Fatal(err)
	}
	const eps, n = 1.0, 20000
	cals, err := pp.Calibrate(budgettest.PureDP(eps))
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{3, 0, 1, 4, 2, 7}
	tabs := tablesOf(sizes, [][]int{{0, 1}}, x)
	fitted := func(cs []calibrate.Calibration, seed uint64) float64 {
		s := noise.NewSeededInsecure(seed)
		mad := make([]float64, len(pp.Tables))
		for rep := 0; rep < n; rep++ {
			m, err := pp.Measure(tabs, s, cs)
			if err != nil {
				t.Fatal(err)
			}
			for i, tb := range m.Tables {
				truth := pp.base.marginalize(tabs[0], tb.Attrs)
				for c, v := range tb.Values {
					mad[i] += math.Abs(v - truth[c])
				}
			}
		}
		loss := 0.0
		for i, tb := range pp.Tables {
			loss += 1 / (mad[i] / (n * tb.Cells))
		}
		return loss
	}
	tol := 4 / math.Sqrt(n) * eps
	got := fitted(cals, 31)
	t.Logf("audited privacy loss bound %.5f (ε = %v, tolerance %.3f)", got, eps, tol)
	if math.Abs(got-eps) > tol {
		t.Fatalf("the fitted scales spend ε = %.5f, calibrated for %v (±%.3f)", got, eps, tol)
	}
	bad := make([]calibrate.Calibration, len(cals))
	for i, c := range cals {
		c.Calibrated /= 2
		if c.Scale, err = noise.EffectiveScale(c.Calibrated, c.Grid); err != nil {
			t.Fatal(err)
		}
		c.Variance = 2 * c.Scale * c.Scale
		bad[i] = c
	}
	if b := fitted(bad, 32); b <= eps+tol {
		t.Fatalf("the audit missed halved scales: fitted loss %.5f", b)
	}
}
