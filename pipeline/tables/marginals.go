package tables

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// MarginalsStrategy is the residual plan of a workload made only of
// marginals (package marginals, ResidualPlanner): each residual is measured
// from a marginal table read directly from the records, so the full
// histogram is never formed.
//
// With Pure set it is the pure ε-DP plan (marginals.PurePlan): every
// positive-weight marginal table is measured with discrete Laplace noise
// and the answers are its generalized-least-squares reconstruction; it
// needs a pure ε budget. Otherwise the Gaussian residual plan, for ρ-zCDP
// or (ε,δ) budgets.
type MarginalsStrategy struct {
	// Objective is the plan's objective (marginals.Sum when empty).
	Objective marginals.Objective
	// Pure selects the pure ε-DP (Laplace) plan.
	Pure bool
}

// Template returns "marginals".
func (MarginalsStrategy) Template() string { return "marginals" }
func (MarginalsStrategy) isStrategy()      {}

// marginalsPlan is a prepared residual plan and the map from the
// workload's products to its sets.
type marginalsPlan struct {
	plan  *marginals.Plan // the Gaussian plan, or the pure plan's base lattice
	index [][]int         // per term, per product: the plan's set index
	// pure plans: the plan and one calibration per measured table.
	pure *marginals.PurePlan
	cals []calibrate.Calibration
}

func (m *marginalsPlan) needs() [][]int {
	if m.pure != nil {
		return m.pure.Needs()
	}
	return m.plan.Needs()
}

// PurePlan returns the pure ε-DP plan of a pure marginals release (nil
// otherwise).
func (r *Release) PurePlan() *marginals.PurePlan {
	if r.mplan == nil {
		return nil
	}
	return r.mplan.pure
}

// MarginalTable is one table a pure marginals release measures, with its
// share of the budget and the noise calibrated for it.
type MarginalTable struct {
	// Attrs are the table's attribute positions; Cells its size.
	Attrs []int
	Cells int
	// Epsilon is the part of the budget the table spends (Σ = ε).
	Epsilon float64
	// Scale is the discrete Laplace scale sampled, Variance = 2·Scale² the
	// per-cell noise variance and Grid the snapping grid.
	Scale, Variance, Grid float64
}

// MarginalTables returns the measured tables of a pure marginals release
// (nil for every other release).
func (r *Release) MarginalTables() []MarginalTable {
	if r.mplan == nil || r.mplan.pure == nil {
		return nil
	}
	out := make([]MarginalTable, len(r.mplan.cals))
	for i, c := range r.mplan.cals {
		out[i] = MarginalTable{Attrs: slices.Clone(r.mplan.pure.Tables[i].Attrs), Cells: c.Rows,
			Epsilon: c.Budget.Epsilon(), Scale: c.Scale, Variance: c.Variance, Grid: c.Grid}
	}
	return out
}

// Plan returns the residual plan of a marginals release (nil otherwise).
func (r *Release) Plan() *marginals.Plan {
	if r.mplan == nil {
		return nil
	}
	return r.mplan.plan
}

// prepareMarginals plans the residuals for the workload's marginals and
// calibrates the noise: the plan has unit L2 sensitivity, so σ is the
// budget's scale for sensitivity 1. The sets are built exactly as the
// marginals template builds them (marginals.Sets): one per term and
// marginal, in term order, with the term's weight — a marginal asked by
// several terms is listed once per term, not merged. For the sum objective
// the two are the same plan (listing S with w₁ and w₂ adds w₁² + w₂² to the
// objective), but the max objective bounds each term's weighted variance
// separately (max(w₁, w₂)²·var_S), which a merged weight hypot(w₁, w₂) would
// not; building the same list makes a plan file written by dpsolve plan
// reproduce exactly here.
func (r *Release) prepareMarginals(ms MarginalsStrategy) error {
	w := r.w
	sizes := make([]int, len(w.Domain))
	for i, a := range w.Domain {
		sizes[i] = a.Size
	}
	var sets []marginals.Set
	index := make([][]int, len(w.Terms))
	for ti := range w.Terms {
		t := &w.Terms[ti]
		for pi := range t.Products {
			p := &t.Products[pi]
			if p.Set == nil {
				return errorf("the marginals template answers workloads of marginals only; term %q has a block other than identity or total (plan it with the kron, union or dense template)", t.Name)
			}
			index[ti] = append(index[ti], len(sets))
			sets = append(sets, marginals.Set{Attrs: slices.Clone(p.Set), Weight: t.Weight})
		}
	}
	obj := ms.Objective
	if obj == "" {
		obj = marginals.Sum
	}
	if ms.Pure != pure(r.b) {
		if ms.Pure {
			return errorf("this marginals plan is for pure epsilon-DP (Laplace noise): give --eps without --delta")
		}
		return errorf("this marginals plan adds Gaussian noise; give rho, or epsilon with delta (for pure epsilon-DP plan the marginals with --privacy pure, or release with --template marginals and --eps alone)")
	}
	if ms.Pure {
		return r.preparePureMarginals(w, sizes, sets, index, obj)
	}
	plan := w.plans[obj]
	if plan == nil {
		var err error
		if plan, err = marginals.NewPlan(sizes, sets, obj, nil); err != nil {
			return err
		}
		if w.plans == nil {
			w.plans = map[marginals.Objective]*marginals.Plan{}
		}
		w.plans[obj] = plan
	}
	for ti := range w.Terms {
		for pi, j := range index[ti] {
			if !plan.Marginals[j].Estimable {
				return errorf("%s has weight 0 and is not measured by the plan; give it a positive weight", w.describe(&w.Terms[ti], &w.Terms[ti].Products[pi]))
			}
		}
	}
	sigma, err := unitSigma(r.b)
	if err != nil {
		return err
	}
	coords := 0.0
	for _, res := range plan.Residuals {
		coords += res.Coords
	}
	r.mplan = &marginalsPlan{plan: plan, index: index}
	// The whole residual measurement is one Gaussian mechanism of unit L2
	// sensitivity and scale σ (marginals.Plan.Measure accounts for the
	// per-residual snapping itself).
	r.cal = calibrate.Calibration{Budget: r.b, Noise: calibrate.Gaussian, Rows: int(coords),
		Sensitivity: 1, SnappedSensitivity: 1, Calibrated: sigma, Scale: sigma, Variance: sigma * sigma}
	r.unit = make([][]float64, len(w.Terms))
	for ti := range w.Terms {
		r.unit[ti] = make([]float64, 0, w.Terms[ti].Queries())
		for pi, j := range index[ti] {
			v := plan.Marginals[j].CellVariance
			q := w.Terms[ti].Products[pi].Queries()
			for c := 0; c < q; c++ {
				r.unit[ti] = append(r.unit[ti], v)
			}
		}
	}
	return nil
}

// preparePureMarginals plans the pure ε-DP measurement of the marginal
// tables and calibrates each table's Laplace noise for its share of ε.
func (r *Release) preparePureMarginals(w *explicitWorkload, sizes []int, sets []marginals.Set, index [][]int, obj marginals.Objective) error {
	pp, err := marginals.NewPurePlan(sizes, sets, obj)
	if err != nil {
		return err
	}
	for ti := range w.Terms {
		for pi, j := range index[ti] {
			if !pp.Marginals[j].Estimable {
				return errorf("%s has weight 0 and is not measured by the plan; give it a positive weight", w.describe(&w.Terms[ti], &w.Terms[ti].Products[pi]))
			}
		}
	}
	cals, err := pp.Calibrate(r.b)
	if err != nil {
		return err
	}
	vars := make([]float64, len(cals))
	rows := 0
	for i, c := range cals {
		vars[i] = c.Variance
		rows += c.Rows
	}
	cv, err := pp.CellVariances(vars)
	if err != nil {
		return err
	}
	r.mplan = &marginalsPlan{plan: pp.Base(), index: index, pure: pp, cals: cals}
	// The stacked measurement [M_A/b_A]_A has L1 sensitivity 1 at the
	// unit-budget scales: report it as one Laplace mechanism of scale 1/ε
	// (each table's own noise is that times b_A, snapped per table by
	// PurePlan.Calibrate). Variances are the exact per-table ones.
	unit, err := calibrate.Scale(r.b, 1)
	if err != nil {
		return fmt.Errorf("tables: %w", err)
	}
	r.cal = calibrate.Calibration{Budget: r.b, Noise: calibrate.Laplace, Rows: rows,
		Sensitivity: 1, SnappedSensitivity: 1, Calibrated: unit, Scale: unit, Variance: 2 * unit * unit}
	r.unit = make([][]float64, len(w.Terms))
	for ti := range w.Terms {
		r.unit[ti] = make([]float64, 0, w.Terms[ti].Queries())
		for pi, j := range index[ti] {
			v := cv[j] / r.cal.Variance
			q := w.Terms[ti].Products[pi].Queries()
			for c := 0; c < q; c++ {
				r.unit[ti] = append(r.unit[ti], v)
			}
		}
	}
	return nil
}

// runMarginals measures every residual from the tables, reconstructs the
// marginals and answers the terms.
func (r *Release) runMarginals(ctx context.Context, d Data, src *noise.Sampler, beforeNoise func() error, pp Publishable) (*Result, error) {
	plan := r.mplan.plan
	tabs := make([]marginals.Table, len(d.Tables))
	for i, t := range d.Tables {
		tabs[i] = marginals.Table{Attrs: t.Attrs, Values: t.Counts}
		for k, v := range t.Counts {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errorf("marginal table %d, cell %d is %v; counts must be finite and non-negative", i+1, k, v)
			}
		}
	}
	if err := coversNeeds(d.Tables, r.mplan.needs()); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Data too large for the noise grid are refused before the charge.
	if pure := r.mplan.pure; pure != nil {
		if err := pure.CheckGrid(tabs, r.mplan.cals); err != nil {
			return nil, err
		}
	} else if err := plan.CheckGrid(tabs, r.cal.Scale); err != nil {
		return nil, err
	}
	if beforeNoise != nil {
		if err := beforeNoise(); err != nil {
			return nil, err
		}
	}
	var est []marginals.Estimate
	var err error
	totalStd := 0.0
	if pure := r.mplan.pure; pure != nil {
		m, err := pure.Measure(tabs, src, r.mplan.cals)
		if err != nil {
			return nil, err
		}
		// From here on: post-processing of the private measurement.
		if est, err = pure.Reconstruct(m); err != nil {
			return nil, err
		}
		vars := make([]float64, len(m.Tables))
		for i, t := range m.Tables {
			vars[i] = t.Variance
		}
		totalStd, _ = pure.TotalStd(vars)
	} else {
		m, err := plan.Measure(tabs, src, r.cal.Scale)
		if err != nil {
			return nil, err
		}
		// From here on: post-processing of the private measurement.
		if est, err = plan.Reconstruct(m); err != nil {
			return nil, err
		}
		totalStd, _ = m.TotalStd()
	}
	var ls [][]float64
	if pp.Any() {
		ls = r.marginalAnswers(plan, est)
	}
	var cons *Consistency
	if pp.Any() {
		// Post-processing that keeps the tables consistent with one another
		// (marginals.Plan.MakeConsistent), not cell by cell.
		if est, cons, err = plan.MakeConsistentContext(ctx, est, marginals.ConsistencyOptions{NonNegative: pp.NonNegative, Integer: pp.Integer, Progress: pp.Progress}); err != nil {
			return nil, err
		}
	}
	res := &Result{Answers: r.marginalAnswers(plan, est), Std: make([][]float64, len(r.w.Terms)),
		Private: src.Private(), PostProcessed: pp.Any(), Consistency: cons}
	bySet := estimatesBySet(plan, est)
	for ti := range r.w.Terms {
		for _, j := range r.mplan.index[ti] {
			sd := math.Sqrt(bySet[j].CellVariance)
			for range bySet[j].Values {
				res.Std[ti] = append(res.Std[ti], sd)
			}
		}
	}
	if pp.Any() {
		res.Estimator = r.marginalsEstimator(pp, cons, totalStd, res.Answers, ls)
	}
	return res, nil
}

// marginalsEstimator reports the marginals plans' estimator from the
// consistency step's report, the least-squares total's stddev and the
// released and least-squares answers.
func (r *Release) marginalsEstimator(pp Publishable, cons *Consistency, totalStd float64, ans, ls [][]float64) *Estimator {
	e := &Estimator{LeastSquaresTotal: cons.LeastSquaresTotal, LeastSquaresTotalStd: totalStd,
		Iterations: cons.Iterations, Status: cons.Status, ReleasedTotal: cons.LeastSquaresTotal}
	e.Method, e.Objective, e.Bias = marginalsMethod(pp)
	if pp.NonNegative {
		e.ReleasedTotal = math.Max(e.ReleasedTotal, 0)
	}
	if pp.Integer {
		e.ReleasedTotal = cons.GrandTotal
		inc := cons.MaxInconsistency
		e.MaxInconsistency = &inc
	}
	e.Tables = r.w.tableChanges(ans, ls)
	return e
}

// estimatesBySet maps the plan's set indices to their estimates (nil for
// the non-estimable ones, which Reconstruct skips).
func estimatesBySet(plan *marginals.Plan, est []marginals.Estimate) []*marginals.Estimate {
	bySet := make([]*marginals.Estimate, len(plan.Sets))
	k := 0
	for j := range plan.Sets {
		if plan.Marginals[j].Estimable {
			bySet[j] = &est[k]
			k++
		}
	}
	return bySet
}

// marginalAnswers lays the estimates out as the terms' answers.
func (r *Release) marginalAnswers(plan *marginals.Plan, est []marginals.Estimate) [][]float64 {
	bySet := estimatesBySet(plan, est)
	out := make([][]float64, len(r.w.Terms))
	for ti := range r.w.Terms {
		for _, j := range r.mplan.index[ti] {
			out[ti] = append(out[ti], bySet[j].Values...)
		}
	}
	return out
}

// Consistency reports the consistent post-processing of a marginals
// plan's tables (--nonnegative, --integer): see marginals.MakeConsistent.
type Consistency = marginals.Consistency

// coversNeeds checks, before any noise is drawn, that a table is given for
// every attribute set the plan needs. The tables are indexed by set once
// (166,751 sets of a 100-attribute ≤3-way workload took a minute compared
// pairwise).
func coversNeeds(tables []records.Table, needs [][]int) error {
	given := make(map[string]struct{}, len(tables))
	for _, t := range tables {
		given[setKey(t.Attrs)] = struct{}{}
	}
	for _, n := range needs {
		if _, ok := given[setKey(n)]; !ok {
			return errorf("the marginals plan needs the table on attribute positions %v, which was not given", n)
		}
	}
	return nil
}
