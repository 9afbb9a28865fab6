package tables

import (
	"context"
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// z95 is the two-sided 95% standard normal quantile Φ⁻¹(0.975), for the
// interval half-widths of the dry run (1.959963984540054 to 16 digits).
const z95 = 1.959963984540054

// Release is a prepared release: the strategy's sensitivity, the noise
// calibrated for the budget and every answer's variance. It holds no data;
// everything it reports is what a dry run shows.
type Release struct {
	k     *domain.Kron
	w     *explicitWorkload // k's terms as explicit matrices
	s     Measurement
	b     Budget
	cal   calibrate.Calibration
	l1    bool
	unit  [][]float64 // per term, per query: variance per unit noise variance
	owner []int       // union part answering each term
	msig  float64     // marginals plans: unit-sensitivity Gaussian scale
	mplan *marginalsPlan
	dense bool // a DenseStrategy, measured as a one-factor KronStrategy
	// pinvs are the strategy parts' pseudo-inverses, kept from Prepare
	// for Run (read only after Prepare).
	pinvs pinvCache
}

// TermError is the planned error of one term's answers at the release's
// budget (before any post-processing).
type TermError struct {
	// Name and Weight are the term's.
	Name   string
	Weight float64
	// Queries is the term's number of answers.
	Queries int
	// TotalVariance is the sum of its answers' variances (unweighted).
	TotalVariance float64
	// MinStd and MaxStd are the smallest and largest per-answer standard
	// deviations.
	MinStd, MaxStd float64
	// HalfWidth95 is 1.96·MaxStd: every answer's 95% interval is at most
	// ±HalfWidth95 around it (the noise is Gaussian, or for Laplace a
	// normal approximation).
	HalfWidth95 float64
}

// Prepare checks the workload k and the strategy against each other,
// computes the strategy's sensitivity, calibrates the noise for the budget
// and every answer's variance. It does not read data. A strategy that
// answers only some of a workload's terms (a union part, one term of a
// split budget) is prepared on k.Part of those terms.
func Prepare(k *domain.Kron, s Measurement, b Budget) (*Release, error) {
	w, err := explicitOf(k)
	if err != nil {
		return nil, err
	}
	r, err := prepare(w, s, b)
	if err != nil {
		return nil, err
	}
	r.k = k
	return r, nil
}

// prepare is Prepare on the explicit workload.
func prepare(w *explicitWorkload, s Measurement, b Budget) (*Release, error) {
	if err := w.validate(); err != nil {
		return nil, err
	}
	if b.IsZero() {
		return nil, errorf("%v", calibrate.ErrNoBudget)
	}
	if s == nil {
		return nil, errorf("no strategy")
	}
	r := &Release{w: w, s: s, b: b, l1: pure(b)}
	if ms, ok := s.(MarginalsStrategy); ok {
		if err := r.prepareMarginals(ms); err != nil {
			return nil, err
		}
		return r, nil
	}
	vw := w // the workload the variances are computed on
	if ds, ok := s.(DenseStrategy); ok {
		flat, ks, err := flatten(w, ds)
		if err != nil {
			return nil, err
		}
		// Measure and reconstruct with the one-factor product; answers
		// apply the products' own blocks to the n-cell x̂ (same order).
		vw, s, r.s = flat, ks, ks
		r.dense = true
	}
	var err error
	r.pinvs = pinvCache{}
	if r.unit, r.owner, err = unitVariances(vw, s, r.pinvs); err != nil {
		return nil, err
	}
	sens, err := sensitivity(s, r.l1)
	if err != nil {
		return nil, err
	}
	if !(sens > 0) || math.IsInf(sens, 0) {
		return nil, errorf("the strategy's sensitivity is %v; it must be positive and finite", sens)
	}
	if r.cal, err = calibrate.Calibrate(b, sens, rows(s)); err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	return r, nil
}

// Workload returns the release's workload.
func (r *Release) Workload() *domain.Kron { return r.k }

// Strategy returns the release's strategy (a DenseStrategy is held as the
// equivalent one-factor KronStrategy).
func (r *Release) Strategy() Measurement { return r.s }

// Template names the strategy's template ("kron", "union", "dense",
// "marginals").
func (r *Release) Template() string {
	if r.dense {
		return "dense"
	}
	return r.s.Template()
}

// Budget returns the release's budget.
func (r *Release) Budget() Budget { return r.b }

// Mechanism describes the noise ("discrete Gaussian (rho-zCDP)", …).
func (r *Release) Mechanism() string { return mechanismName(r.b) }

// Sensitivity returns the strategy's sensitivity (before snapping) and its
// norm, "L2" or "L1".
func (r *Release) Sensitivity() (float64, string) {
	if r.l1 {
		return r.cal.Sensitivity, "L1"
	}
	return r.cal.Sensitivity, "L2"
}

// SnappedSensitivity returns the sensitivity after snapping to the noise
// grid, which the noise is calibrated for.
func (r *Release) SnappedSensitivity() float64 { return r.cal.SnappedSensitivity }

// Grid returns the noise grid (a power of two).
func (r *Release) Grid() float64 { return r.cal.Grid }

// NoiseScale returns the scale actually sampled: σ for Gaussian noise, the
// Laplace scale b for Laplace noise. For a marginals plan it is the scale of
// a unit-sensitivity query; each residual's noise is that times its planned
// factor.
func (r *Release) NoiseScale() float64 { return r.cal.Scale }

// Sigma returns the standard deviation of one measurement's noise (σ, or
// b·√2 for Laplace).
func (r *Release) Sigma() float64 { return math.Sqrt(r.cal.Variance) }

// Measurements returns the number of noisy values drawn.
func (r *Release) Measurements() int { return r.cal.Rows }

// Needs reports which data the release measures: the full histogram
// (Kronecker and union strategies), or the marginal tables on the returned
// attribute sets (marginals plans).
func (r *Release) Needs() (histogram bool, sets [][]int) {
	if r.mplan != nil {
		return false, r.mplan.needs()
	}
	return true, nil
}

// Variances returns every answer's variance, per term in query order.
func (r *Release) Variances() [][]float64 {
	out := make([][]float64, len(r.unit))
	for t, u := range r.unit {
		out[t] = make([]float64, len(u))
		for i, v := range u {
			out[t][i] = v * r.cal.Variance
		}
	}
	return out
}

// TermErrors returns each term's planned error.
func (r *Release) TermErrors() []TermError {
	vs := r.Variances()
	out := make([]TermError, len(r.w.Terms))
	for t := range r.w.Terms {
		e := TermError{Name: r.w.Terms[t].Name, Weight: r.w.Terms[t].Weight, Queries: len(vs[t]), MinStd: math.Inf(1)}
		for _, v := range vs[t] {
			e.TotalVariance += v
			sd := math.Sqrt(v)
			e.MinStd, e.MaxStd = math.Min(e.MinStd, sd), math.Max(e.MaxStd, sd)
		}
		e.HalfWidth95 = z95 * e.MaxStd
		out[t] = e
	}
	return out
}

// ExpectedTotalSquaredError returns the sum of every answer's variance,
// E‖Ŵx − Wx‖² over all (unweighted) workload queries.
func (r *Release) ExpectedTotalSquaredError() float64 {
	s := 0.0
	for _, e := range r.TermErrors() {
		s += e.TotalVariance
	}
	return s
}

// ExpectedWeightedError returns Σ_terms w²·(total variance), the plan's
// objective (expected weighted total squared error) at this budget.
func (r *Release) ExpectedWeightedError() float64 {
	s := 0.0
	for _, e := range r.TermErrors() {
		s += e.Weight * e.Weight * e.TotalVariance
	}
	return s
}

// Data is what a release measures: the histogram (Kronecker and union
// strategies) or the marginal tables (marginals plans).
type Data struct {
	Histogram []float64
	Tables    []records.Table
}

// Publishable selects the publishable-table estimator (see Estimator for
// what a release reports about it). Both steps are post-processing
// (privacy is unchanged) but they bias the answers, so the planned standard
// errors describe the least-squares answers, not these. Every table keeps
// the least-squares estimate of the number of records as its grand total,
// and the tables stay consistent with one another. For Kronecker, union and
// dense strategies NonNegative fits one non-negative histogram with that
// total to all the measurements (constrained least squares, histogramLS.nnls)
// and answers every term from it; Integer rounds the histogram by its
// running sums (cumulativeRound), so tables stay consistent and integral
// when the queries have integer coefficients. For marginals plans (no
// histogram) the tables are projected onto consistent non-negative tables
// with that total and rounded to it (marginals.Plan.MakeConsistent);
// Result.Consistency reports what inconsistency remains.
type Publishable struct {
	// NonNegative replaces negative cells by 0.
	NonNegative bool
	// Integer rounds to integers keeping the totals and the consistency
	// (after the non-negative step when both are selected).
	Integer bool
	// NNLS tunes the non-negative estimator of histogram plans (zero
	// value: the defaults).
	NNLS NNLSOptions
	// Progress, when non-nil, receives the post-processing's progress:
	// the histogram estimator's (Stage "nonnegative", unless NNLS has its
	// own Progress) and the marginals projection's (Stage "consistent").
	Progress progress.Func
}

// Any reports whether any post-processing is selected.
func (pp Publishable) Any() bool { return pp.NonNegative || pp.Integer }

// Result holds a release's answers.
type Result struct {
	// Answers and Std hold, per term in query order, the answers and their
	// standard deviations (the planned ones; see PostProcessed).
	Answers, Std [][]float64
	// Private is false when the noise came from a seeded simulator.
	Private bool
	// PostProcessed is true when clamping or rounding was applied: the
	// answers are then biased and Std no longer describes their error.
	PostProcessed bool
	// Consistency reports, for a post-processed marginals plan, the
	// consistent non-negative / integer step and what inconsistency and
	// negativity remain (nil otherwise).
	Consistency *Consistency
	// Estimator describes the post-processing estimator and, per table,
	// the grand total and the largest change from the least-squares
	// answer (nil without post-processing).
	Estimator *Estimator
	// Estimators are the parts' estimator reports of a release in several
	// parts (Parts.Run; Estimator is then nil): each part has its own
	// least-squares total.
	Estimators []*Estimator
}

// Run measures the data with noise from src, reconstructs and answers
// every term. beforeNoise, if non-nil, runs after the data are read and the
// noiseless measurements computed and checked against the noise grid, as
// the last step before any noise is drawn (charge a budget ledger there);
// if it fails, nothing is sampled. ctx is checked immediately before
// beforeNoise: after cancellation nothing is charged or released (a
// ledger charge should check ctx itself, under its lock: SpendContext).
func (r *Release) Run(ctx context.Context, d Data, src *noise.Sampler, beforeNoise func() error, pp Publishable) (*Result, error) {
	if src == nil {
		return nil, errorf("no noise sampler")
	}
	if r.mplan != nil {
		return r.runMarginals(ctx, d, src, beforeNoise, pp)
	}
	y, a, weights, err := r.measure(ctx, d, src, beforeNoise)
	if err != nil {
		return nil, err
	}
	// From here on: post-processing of the private y.
	res := &Result{Answers: make([][]float64, len(r.w.Terms)), Std: make([][]float64, len(r.w.Terms)),
		Private: src.Private(), PostProcessed: pp.Any()}
	h := &histogramLS{a: a, w: weights}
	pinvs := make([]*kron.Product, len(a))
	off := 0
	for k, ak := range a {
		rk, _ := ak.Dims()
		yk := y[off : off+rk : off+rk] // capped: MulVecOverwrite may use the whole capacity
		off += rk
		if pinvs[k], err = r.pseudoInverse(ak); err != nil {
			return nil, err
		}
		var xhat []float64
		if pp.NonNegative {
			xhat, err = pinvs[k].MulVec(yk) // the estimator needs y again
			h.y = append(h.y, yk)
		} else {
			xhat, err = pinvs[k].MulVecOverwrite(yk)
		}
		if err != nil {
			return nil, err
		}
		for i := range xhat {
			xhat[i] /= weights[k]
		}
		h.xhat = append(h.xhat, xhat)
		if err := r.answerPart(res.Answers, k, xhat); err != nil {
			return nil, err
		}
	}
	vs := r.Variances()
	for t := range r.w.Terms {
		res.Std[t] = sqrtAll(vs[t])
	}
	if !pp.Any() {
		return res, nil
	}
	h.lsTotal(pinvs, r.cal.Variance)
	return r.postProcessHistogram(ctx, h, res, pp)
}

// pseudoInverse returns a's pseudo-inverse: the one Prepare kept, or
// computed now (not kept: Run may be called concurrently on copies of
// the same prepared release).
func (r *Release) pseudoInverse(a *kron.Product) (*kron.Product, error) {
	if p, ok := r.pinvs[a]; ok {
		return p, nil
	}
	return pinvCache(nil).of(a)
}

// answerPart sets the answers of the terms part k answers to W·x.
func (r *Release) answerPart(answers [][]float64, k int, x []float64) error {
	return r.answerTerms(answers, func(t int) bool { return r.owner[t] == k }, x)
}

// answerTerms sets the answers of the terms mine selects to W·x.
func (r *Release) answerTerms(answers [][]float64, mine func(t int) bool, x []float64) error {
	for t := range r.w.Terms {
		if !mine(t) {
			continue
		}
		ans, err := r.answerTerm(&r.w.Terms[t], x)
		if err != nil {
			return err
		}
		answers[t] = ans
	}
	return nil
}

// postProcessHistogram replaces the least-squares answers of res by the
// estimator pp selects (see Estimator): with NonNegative one histogram for
// every part (so every table is consistent with every other), fitted to
// all the measurements by nnls; with Integer that histogram (or each
// part's least-squares one) rounded by cumulativeRound.
func (r *Release) postProcessHistogram(ctx context.Context, h *histogramLS, res *Result, pp Publishable) (*Result, error) {
	e := &Estimator{LeastSquaresTotal: h.total, LeastSquaresTotalStd: h.totalStd, Status: status.Converged}
	e.Method, e.Objective, e.Bias = histogramMethod(pp)
	ls := res.Answers
	res.Answers = make([][]float64, len(ls))
	if pp.NonNegative {
		opt := pp.NNLS
		if opt.Progress == nil {
			opt.Progress = pp.Progress
		}
		nr, err := h.nnls(ctx, h.xhat[h.best], opt)
		if err != nil {
			return nil, err
		}
		e.Iterations, e.Step = nr.iterations, nr.step
		if !nr.converged {
			e.Status = status.IterationLimit
		}
		e.ReleasedTotal = math.Max(h.total, 0)
		all := func(int) bool { return true }
		if !pp.Integer {
			if err := r.answerTerms(res.Answers, all, nr.x); err != nil {
				return nil, err
			}
		} else {
			e.ReleasedTotal = math.Round(e.ReleasedTotal)
			// One histogram for every part: round the union of their tables.
			how, inc, err := r.integerAnswersOf(res.Answers, all, nr.x, true)
			if err != nil {
				return nil, err
			}
			e.Method, e.Objective, e.Bias = integerMethod(pp, how)
			e.MaxInconsistency = &inc
		}
	} else {
		worst := 0.0
		hows := map[string]bool{}
		for k, x := range h.xhat {
			how, inc, err := r.integerAnswers(res.Answers, k, x, false)
			if err != nil {
				return nil, err
			}
			worst = math.Max(worst, inc)
			hows[how] = true
		}
		how := "tables"
		if hows["histogram"] {
			how = "histogram"
		}
		e.Method, e.Objective, e.Bias = integerMethod(pp, how)
		e.MaxInconsistency = &worst
		e.ReleasedTotal = math.Round(h.total)
	}
	e.Tables = r.w.tableChanges(res.Answers, ls)
	res.Estimator = e
	return res, nil
}

// measure returns the noisy measurements y = A x + z of a Kronecker or
// union strategy (stacked over the parts), with the parts and weights.
func (r *Release) measure(ctx context.Context, d Data, src *noise.Sampler, beforeNoise func() error) ([]float64, []*kron.Product, []float64, error) {
	n, err := records.Cells(r.w.Domain)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkHistogram(d.Histogram, n); err != nil {
		return nil, nil, nil, err
	}
	var a []*kron.Product
	var weights []float64
	switch s := r.s.(type) {
	case KronStrategy:
		a, weights = []*kron.Product{s.A}, []float64{1}
	case UnionStrategy:
		for _, p := range s.Parts {
			a, weights = append(a, p.A), append(weights, p.Weight)
		}
	}
	y := make([]float64, 0, r.cal.Rows)
	for k, ak := range a {
		yk, err := ak.MulVec(d.Histogram)
		if err != nil {
			return nil, nil, nil, err
		}
		for i := range yk {
			yk[i] *= weights[k]
		}
		y = append(y, yk...)
	}
	if err := r.sample(ctx, y, src, beforeNoise); err != nil {
		return nil, nil, nil, err
	}
	return y, a, weights, nil
}

// sample checks ctx and that y is representable on the noise grid, then
// runs beforeNoise (the charge: nothing after it refuses) and adds the
// calibrated noise to y.
func (r *Release) sample(ctx context.Context, y []float64, src *noise.Sampler, beforeNoise func() error) error {
	if len(y) != r.cal.Rows {
		return fmt.Errorf("tables: internal error: %d measurements, calibrated for %d", len(y), r.cal.Rows)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkGrid(y, r.cal.Grid); err != nil {
		return err
	}
	if beforeNoise != nil {
		if err := beforeNoise(); err != nil {
			return err
		}
	}
	if err := r.cal.Add(src, y); err != nil {
		return fmt.Errorf("tables: %w", err)
	}
	return nil
}

// checkGrid refuses measurements the noise cannot be added to: the grid
// is the noise scale times about 2⁻⁴¹, so values beyond noise.MaxGridUnits
// = 2⁷² grid units (counts around 2³¹ ≈ 2·10⁹ times the noise scale) do not
// fit. Checked before the budget is charged.
func checkGrid(y []float64, grid float64) error {
	for i, v := range y {
		if math.Abs(v/grid) >= noise.MaxGridUnits {
			return errorf("measurement %d of the data is %.6g, too large for the noise grid %g of this budget (at most %.3g): counts this large cannot be released at this budget", i, v, grid, noise.MaxGridUnits*grid)
		}
	}
	return nil
}

// answerTerm returns W x̂ for every product of a term, concatenated.
func (r *Release) answerTerm(t *explicitTerm, xhat []float64) ([]float64, error) {
	var out []float64
	for pi := range t.Products {
		wp, err := productOf(&t.Products[pi])
		if err != nil {
			return nil, err
		}
		ans, err := wp.MulVec(xhat)
		if err != nil {
			return nil, err
		}
		out = append(out, ans...)
	}
	return out, nil
}

func sqrtAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Sqrt(x)
	}
	return out
}

// checkHistogram validates a histogram of n cells.
func checkHistogram(x []float64, n int) error {
	if x == nil {
		return errorf("this strategy measures the full histogram, but none was given")
	}
	if len(x) != n {
		return errorf("the histogram has %d cells but the domain has %d", len(x), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return errorf("histogram cell %d is %v; counts must be finite and non-negative", i, v)
		}
	}
	return nil
}

// MemoryEstimate returns the bytes a Run needs beyond its input, before it
// allocates: for Kronecker, union and dense strategies the measurements,
// the product and least-squares buffers (two vectors the size of the
// largest part's rows or columns) and the answers with their standard
// deviations, and with post-processing the estimator's buffers (see the
// body);
// for marginals plans the noisy residuals and the reconstructed tables,
// and, when pp asks for post-processing, the consistency step's buffers:
// 24 copies of the tables, which covers everything one Dykstra sweep
// allocates (its retained tables, corrections and output, and the
// residual combination and expansion it recomputes every sweep; measured
// 21.6 copies by TestMemoryEstimateCountsConsistency) — later sweeps'
// allocations replace earlier ones as garbage. Other plans post-process in
// place.
// Callers compare it, plus the data's own size, with the memory available
// (records.AvailableMemory) and refuse before reading anything.
func (r *Release) MemoryEstimate(pp Publishable) float64 {
	const consistencyCopies = 24
	q := float64(r.w.Queries())
	bytes := 3 * 8 * q // answers, stddevs, variances
	if r.mplan != nil {
		if pp.Any() {
			bytes += consistencyCopies * 8 * q
		}
		return bytes + 8*float64(r.cal.Rows)
	}
	bytes += 8 * float64(r.cal.Rows)
	var parts []*kron.Product
	switch s := r.s.(type) {
	case KronStrategy:
		parts = []*kron.Product{s.A}
	case UnionStrategy:
		for _, p := range s.Parts {
			parts = append(parts, p.A)
		}
	}
	// The parts are measured and solved one at a time; each needs at
	// most two buffers of its largest intermediate (the product's two
	// ping-pong vectors, bounded by max(rows, cols) for the plans' square
	// or tall factors).
	worst := 0.0
	for _, a := range parts {
		rows, cols := a.Dims()
		worst = math.Max(worst, 16*float64(max(rows, cols)))
	}
	if pp.Any() {
		// The least-squares answers are kept for the report, and every
		// part's x̂ until the estimator has run.
		_, n := parts[0].Dims()
		bytes += 8*q + 8*float64(len(parts)*n)
	}
	if pp.NonNegative {
		// The measurements are kept (MulVec instead of overwriting them);
		// FISTA holds x, its predecessor, the momentum point, the gradient
		// step and the projection's scratch (5 vectors of n); the Gram
		// gradient holds Σ AᵀY, the gradient and the product's two buffers
		// (4 vectors of n), and forming Σ AᵀY once takes the transposed
		// product's two buffers.
		_, n := parts[0].Dims()
		bytes += 8*float64(r.cal.Rows) + 9*8*float64(n) + 2*worst
	}
	if pp.Integer {
		// The marginals rounded (at most the answers' size) and one
		// marginal product's two buffers.
		_, n := parts[0].Dims()
		bytes += 8*q + 16*float64(n)
	}
	return bytes + worst
}
