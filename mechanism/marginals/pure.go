package marginals

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// PureTable is one marginal table a pure plan measures.
type PureTable struct {
	// Attrs is the table's attribute set A (increasing positions).
	Attrs []int
	// Cells is c_A = Π_{a∈A} d_a.
	Cells float64
	// Weight2 is W_A: Σ w_S² over the workload sets on A (Sum), or the
	// largest w_S² (Max).
	Weight2 float64
	// Scale is b_A at unit L1 sensitivity (ε = 1; Σ_A 1/b_A = 1). At budget ε
	// the table's Laplace noise has scale b_A/ε and variance 2b_A²/ε².
	Scale float64
}

// PurePlan measures the positive-weight marginals of a workload with
// Laplace noise for pure ε-DP (see the documentation above), normalised to
// unit L1 sensitivity. Variances are per unit Laplace variance, i.e. in
// multiples of 2/ε² (the variance of Laplace noise on a query of L1
// sensitivity 1 at budget ε), the unit of `dpsolve plan --privacy pure`.
type PurePlan struct {
	// Sizes are the attribute sizes; Sets the workload.
	Sizes []int
	Sets  []Set
	// Objective is what the scales minimize for the direct estimator.
	Objective Objective
	// Tables are the measured tables: the distinct attribute sets of the
	// positive-weight workload marginals, by size then lexicographically.
	Tables []PureTable
	// Residuals are the residual subsets of the GLS reconstruction; their
	// Variance is Var θ̂_T per unit Laplace variance and Sensitivity2 is 0
	// (no L2 accounting).
	Residuals []Residual
	// Marginals has one entry per workload set (GLS variances).
	Marginals []MarginalError
	// TotalSquaredError and MaxVariance are the GLS answers' Σ_S w_S² c_S
	// var_S and max_S w_S² var_S; Value is the minimized one of them.
	TotalSquaredError, MaxVariance, Value float64
	// DirectValue is the closed-form optimum of the direct estimator's
	// objective (each marginal answered from its own table), an upper
	// bound on Value.
	DirectValue float64

	base *Plan // the lattice, set layout and reconstruction
}

// NewPurePlan computes the pure ε-DP plan for the marginals over a domain
// with the given sizes. Bad input yields an error wrapping ErrInput.
func NewPurePlan(sizes []int, sets []Set, obj Objective) (*PurePlan, error) {
	if obj == "" {
		obj = Sum
	}
	if obj != Sum && obj != Max {
		return nil, errorf("objective %q is not %q or %q", obj, Sum, Max)
	}
	// The Gaussian sum plan supplies validation, the lattice (the
	// down-closure of the positive-weight sets, which are exactly the
	// measured tables) and the estimability flags; its variances are
	// replaced below.
	base, err := NewPlan(sizes, sets, Sum, nil)
	if err != nil {
		return nil, err
	}
	pp := &PurePlan{Sizes: base.Sizes, Sets: base.Sets, Objective: obj}
	index := map[string]int{}
	for _, s := range base.Sets {
		if s.Weight == 0 {
			continue
		}
		key := fmt.Sprint(s.Attrs)
		j, ok := index[key]
		if !ok {
			j = len(pp.Tables)
			index[key] = j
			pp.Tables = append(pp.Tables, PureTable{Attrs: slices.Clone(s.Attrs), Cells: cells(base.Sizes, s.Attrs)})
		}
		w2 := s.Weight * s.Weight
		if obj == Sum {
			pp.Tables[j].Weight2 += w2
		} else {
			pp.Tables[j].Weight2 = math.Max(pp.Tables[j].Weight2, w2)
		}
	}
	slices.SortFunc(pp.Tables, func(a, b PureTable) int {
		if c := len(a.Attrs) - len(b.Attrs); c != 0 {
			return c
		}
		return slices.Compare(a.Attrs, b.Attrs)
	})
	t := 0.0
	for _, tb := range pp.Tables {
		if obj == Sum {
			t += math.Cbrt(tb.Weight2 * tb.Cells)
		} else {
			t += math.Sqrt(tb.Weight2)
		}
	}
	for i := range pp.Tables {
		tb := &pp.Tables[i]
		if obj == Sum {
			tb.Scale = t / math.Cbrt(tb.Weight2*tb.Cells)
		} else {
			tb.Scale = t / math.Sqrt(tb.Weight2)
		}
		if math.IsNaN(tb.Scale) || math.IsInf(tb.Scale, 0) || tb.Scale <= 0 {
			return nil, errorf("the domain is too large for floating point: table %v gets Laplace scale %v", tb.Attrs, tb.Scale)
		}
	}
	if obj == Sum {
		pp.DirectValue = t * t * t
	} else {
		pp.DirectValue = t * t
	}
	pp.base = base // residualVariances needs only the lattice
	vars := make([]float64, len(pp.Tables))
	for i, tb := range pp.Tables {
		vars[i] = tb.Scale * tb.Scale
	}
	// A private copy of the base plan carries the GLS residual variances.
	cp := *base
	cp.Objective = obj
	cp.Residuals = slices.Clone(base.Residuals)
	rv := pp.residualVariances(vars)
	for j := range cp.Residuals {
		cp.Residuals[j].Variance = rv[j]
		cp.Residuals[j].Sensitivity2 = 0
	}
	if err := cp.evaluate(); err != nil {
		return nil, err
	}
	cp.LowerBound, cp.Gap = 0, 1 // no bound is known for pure plans: the trivial one
	pp.base = &cp
	pp.Residuals, pp.Marginals = cp.Residuals, cp.Marginals
	pp.TotalSquaredError, pp.MaxVariance = cp.TotalSquaredError, cp.MaxVariance
	pp.Value = pp.TotalSquaredError
	if obj == Max {
		pp.Value = pp.MaxVariance
	}
	cp.Value = pp.Value
	return pp, nil
}

// residualVariances returns Var θ̂_T = 1/Σ_{A⊇T} 1/(V_A c_{A∖T}) for every
// residual, given each table's noise variance V_A (in Tables order).
func (pp *PurePlan) residualVariances(tableVar []float64) []float64 {
	prec := make([]float64, len(pp.base.Residuals))
	buf := make([]int, 0, 64)
	for i, tb := range pp.Tables {
		forSubsets(pp.Sizes, tb.Attrs, buf, func(t []int, _ uint64) bool {
			j, _ := pp.base.lat.lookup(t)
			prec[j] += 1 / (tableVar[i] * tb.Cells / cells(pp.Sizes, t))
			return true
		})
	}
	out := make([]float64, len(prec))
	for j, p := range prec {
		out[j] = 1 / p
	}
	return out
}

// Needs returns the attribute sets of the tables Measure needs (the
// measured tables; any superset tables serve too).
func (pp *PurePlan) Needs() [][]int {
	out := make([][]int, len(pp.Tables))
	for i, tb := range pp.Tables {
		out[i] = slices.Clone(tb.Attrs)
	}
	return out
}

// Calibrate returns one calibration per measured table for the pure budget
// b: table A spends ε_A = ε/b_A of it (Σ_A ε_A = ε; rounded down where the
// floating-point sum would exceed ε) and calibrate.Calibrate snaps it —
// Laplace scale for the snapped L1 sensitivity 1 + g_A c_A, rounded up to
// the grid — so the whole measurement is ε-DP by basic composition.
func (pp *PurePlan) Calibrate(b calibrate.Budget) ([]calibrate.Calibration, error) {
	if b.IsZero() {
		return nil, calibrate.ErrNoBudget
	}
	if b.Kind() != calibrate.Pure {
		return nil, errorf("a pure plan needs a pure epsilon budget (epsilon without delta), got %v", b)
	}
	shares := make([]float64, len(pp.Tables))
	for i, tb := range pp.Tables {
		shares[i] = b.Epsilon() / tb.Scale
	}
	for k := 0; ; k++ {
		total := 0.0
		for _, e := range shares {
			total += e
		}
		if total <= b.Epsilon() {
			break
		}
		if k == 8 {
			return nil, fmt.Errorf("marginals: internal error: the budget shares sum to %v > %v", total, b.Epsilon())
		}
		f := math.Nextafter(b.Epsilon()/total, 0)
		for i := range shares {
			shares[i] *= f
		}
	}
	cals := make([]calibrate.Calibration, len(pp.Tables))
	for i, tb := range pp.Tables {
		share, err := calibrate.PureDP(shares[i])
		if err != nil {
			return nil, fmt.Errorf("marginals: table %v: %w", tb.Attrs, err)
		}
		c, err := calibrate.Calibrate(share, 1, int(tb.Cells))
		if err != nil {
			return nil, fmt.Errorf("marginals: table %v: %w", tb.Attrs, err)
		}
		cals[i] = c
	}
	return cals, nil
}

// NoisyTable is one measured table with its noise.
type NoisyTable struct {
	Table
	// Variance is the variance of the Laplace noise actually added to each
	// cell (2·scale²).
	Variance float64
}

// PureMeasurement holds the noisy tables of a pure plan, in its Tables
// order.
type PureMeasurement struct {
	// Private is false when the noise came from a seeded, insecure sampler.
	Private bool
	Tables  []NoisyTable
}

// Measure measures every table of the plan from the given marginal tables
// (each measured table must be one of them or a subset of one), adding the
// calibrated discrete Laplace noise of cals (from Calibrate) from src.
func (pp *PurePlan) Measure(tables []Table, src noise.Source, cals []calibrate.Calibration) (*PureMeasurement, error) {
	if noise.Missing(src) {
		return nil, errorf("no noise sampler given")
	}
	if len(cals) != len(pp.Tables) {
		return nil, errorf("%d calibrations for the %d tables of the plan", len(cals), len(pp.Tables))
	}
	if _, err := pp.base.checkTables(tables); err != nil {
		return nil, err
	}
	m := &PureMeasurement{Private: true, Tables: make([]NoisyTable, len(pp.Tables))}
	if s, ok := src.(*noise.Sampler); ok {
		m.Private = s.Private()
	}
	// Compute every noiseless table first: no noise is drawn when a table
	// is missing.
	for i, tb := range pp.Tables {
		found := -1
		for k, t := range tables {
			if isSubset(tb.Attrs, t.Attrs) && (found < 0 || len(t.Values) < len(tables[found].Values)) {
				found = k
			}
		}
		if found < 0 {
			return nil, errorf("no table covers the marginal %v; give the tables of %v", tb.Attrs, pp.Needs())
		}
		m.Tables[i] = NoisyTable{Table: Table{Attrs: slices.Clone(tb.Attrs), Values: pp.base.marginalize(tables[found], tb.Attrs)}}
	}
	for i := range m.Tables {
		if err := cals[i].Add(src, m.Tables[i].Values); err != nil {
			return nil, fmt.Errorf("marginals: measuring table %v: %w", pp.Tables[i].Attrs, err)
		}
		m.Tables[i].Variance = cals[i].Variance
	}
	return m, nil
}

// Reconstruct returns every estimable workload marginal (in Sets order,
// like Plan.Reconstruct) by generalized least squares from the noisy
// tables, with its exact cell variance under the noise actually added.
func (pp *PurePlan) Reconstruct(m *PureMeasurement) ([]Estimate, error) {
	if m == nil || len(m.Tables) != len(pp.Tables) {
		return nil, errorf("the measurement does not belong to this plan")
	}
	tabs := make([]Table, len(m.Tables))
	vars := make([]float64, len(m.Tables))
	for i, t := range m.Tables {
		if !slices.Equal(t.Attrs, pp.Tables[i].Attrs) || float64(len(t.Values)) != pp.Tables[i].Cells || !(t.Variance > 0) {
			return nil, errorf("the measurement's table %d does not match the plan", i)
		}
		tabs[i], vars[i] = t.Table, t.Variance
	}
	theta, rv := pp.base.combine(tabs, vars)
	meas := &Measurement{Private: m.Private, Residuals: make([]NoisyResidual, len(rv))}
	for j, r := range pp.base.Residuals {
		meas.Residuals[j] = NoisyResidual{Attrs: r.Attrs, Values: theta[j], Std: math.Sqrt(rv[j])}
	}
	return pp.base.Reconstruct(meas)
}

// CellVariances returns every workload marginal's cell variance when table
// i's noise has variance tableVar[i] (+Inf for a non-estimable marginal):
// the exact variances of Reconstruct's answers for that noise.
func (pp *PurePlan) CellVariances(tableVar []float64) ([]float64, error) {
	if len(tableVar) != len(pp.Tables) {
		return nil, errorf("%d variances for the %d tables of the plan", len(tableVar), len(pp.Tables))
	}
	rv := pp.residualVariances(tableVar)
	out := make([]float64, len(pp.Sets))
	l := pp.base.lat
	for i := range pp.Sets {
		if !l.estimable[i] {
			out[i] = math.Inf(1)
			continue
		}
		for q := l.lo[i]; q < l.hi[i]; q++ {
			out[i] += rv[l.idx[q]] * l.coef[q]
		}
	}
	return out, nil
}

// Base returns the residual lattice the plan reconstructs through, as a
// Plan whose residual variances are the GLS ones (per unit Laplace
// variance); its Residuals, Sets and Marginals equal the PurePlan's, its
// LowerBound is the trivial 0 (no bound is known). Use it for
// post-processing (MakeConsistent) and Covariance.
func (pp *PurePlan) Base() *Plan { return pp.base }

// String summarizes the plan on one line.
func (pp *PurePlan) String() string {
	return fmt.Sprintf("marginals %s pure plan: %d marginals, %d tables, total squared error %.10g, max variance %.6g (direct estimator %.10g)",
		pp.Objective, len(pp.Sets), len(pp.Tables), pp.TotalSquaredError, pp.MaxVariance, pp.DirectValue)
}

// combine returns the inverse-variance (GLS) combination of the residual
// coordinates seen by the given tables, table i weighted by 1/vars[i]:
// θ_T = Σ_{A⊇T} r_{A,T}/(V_A c_{A∖T}) / Σ_{A⊇T} 1/(V_A c_{A∖T}) and its
// variance 1/Σ_{A⊇T} 1/(V_A c_{A∖T}), for every residual of the lattice (nil
// and +Inf for a residual no table sees). Every table's attribute set must
// lie in the lattice's down-closure.
func (p *Plan) combine(tabs []Table, vars []float64) ([][]float64, []float64) {
	theta := make([][]float64, len(p.Residuals))
	prec := make([]float64, len(p.Residuals))
	buf := make([]int, 0, 64)
	for i, tab := range tabs {
		c := cells(p.Sizes, tab.Attrs)
		forSubsets(p.Sizes, tab.Attrs, buf, func(t []int, _ uint64) bool {
			j, ok := p.lat.lookup(t)
			if !ok {
				return true
			}
			w := 1 / (vars[i] * c / cells(p.Sizes, t))
			r := p.residualValues(tab, t)
			if theta[j] == nil {
				theta[j] = make([]float64, len(r))
			}
			for k, v := range r {
				theta[j][k] += w * v
			}
			prec[j] += w
			return true
		})
	}
	rv := make([]float64, len(prec))
	for j := range theta {
		if prec[j] == 0 {
			rv[j] = math.Inf(1)
			continue
		}
		for k := range theta[j] {
			theta[j][k] /= prec[j]
		}
		rv[j] = 1 / prec[j]
	}
	return theta, rv
}

// marginalize sums a table on S down to its marginal on attrs ⊆ S.
func (p *Plan) marginalize(tab Table, attrs []int) []float64 {
	shape := make([]int, len(tab.Attrs))
	for i, a := range tab.Attrs {
		shape[i] = p.Sizes[a]
	}
	cur := slices.Clone(tab.Values)
	for k := len(tab.Attrs) - 1; k >= 0; k-- {
		if !slices.Contains(attrs, tab.Attrs[k]) {
			next := make([]float64, len(cur)/shape[k])
			alongAxis(next, cur, shape, k, 1, sumFibre)
			cur, shape[k] = next, 1
		}
	}
	return cur
}

// isSubset reports whether the increasing set a is contained in b.
func isSubset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
