package synth

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/progress"
)

// Mechanisms.
const (
	MST = "mst"
	AIM = "aim"
)

// DefaultMaxSigma is the largest Gaussian scale (per unit-sensitivity
// query) a measurement may use before the budget is called too small.
const DefaultMaxSigma = 1e5

// Options configures Synthesize.
type Options struct {
	// Mechanism is MST or AIM (default AIM).
	Mechanism string
	// Budget is the whole run's budget: ρ-zCDP, or (ε, δ) converted to
	// the largest ρ that implies it (RhoFromApprox, as AIM and MST do).
	Budget calibrate.Budget
	// Workload is AIM's workload (attribute sets); nil means all pairs.
	Workload [][]int
	// Rounds is AIM's nominal number of rounds; 0 means 16 × attributes.
	Rounds int
	// MaxCells caps the model size; 0 means DefaultMaxCells.
	MaxCells float64
	// MaxSigma refuses a budget whose per-round measurement would use a
	// larger Gaussian scale; 0 means DefaultMaxSigma.
	MaxSigma float64
	// FitIter caps each intermediate fit's mirror-descent steps (0: 200);
	// the final fit runs up to 10× as many.
	FitIter int
	// Noise draws the measurements' noise: noise.NewSecure for a private
	// release, noise.NewSeededInsecure for simulations (NOT private).
	Noise *noise.Sampler
	// Bits supplies the uniform bits of the exponential mechanism:
	// crypto/rand.Reader for a private release, a seeded stream for
	// simulations (NOT private).
	Bits io.Reader
	// Progress, if non-nil, receives "select", "measure" and "fit" events.
	Progress progress.Func
}

// Step is one private step: a selection (the exponential mechanism,
// ε-DP: Selection) or a measurement (the residual plan of Sets at Gaussian
// scale Sigma), with the ρ-zCDP budget it spends (Cost; ε²/8 for a
// selection).
type Step struct {
	Kind      string            `json:"kind"`
	Sets      [][]int           `json:"sets"`
	Cost      calibrate.Budget  `json:"cost"`
	Selection *calibrate.Budget `json:"selection,omitempty"`
	Sigma     float64           `json:"sigma,omitempty"`
	// CellStd is, for a measurement, each measured marginal's per-cell
	// standard deviation from that measurement alone (same order as Sets).
	CellStd []float64 `json:"cell_std,omitempty"`
}

// Report describes a run.
type Report struct {
	Mechanism string `json:"mechanism"`
	// ZCDP is the ρ-zCDP budget the run spends (Options.Budget's ρ).
	ZCDP calibrate.Budget `json:"zcdp"`
	// SpentRho is Σ ρ of Steps[i].Cost, equal to ZCDP's ρ up to rounding.
	SpentRho float64 `json:"spent_rho"`
	Steps    []Step  `json:"steps"`
	// Measured lists the measured marginals in order.
	Measured [][]int `json:"measured"`
	// Rounds is the number of selection rounds.
	Rounds int `json:"rounds"`
	// Fit is the final fit; FitIterations sums every fit's steps.
	Fit           FitResult `json:"fit"`
	FitIterations int       `json:"fit_iterations"`
	// Cliques are the final model's junction-tree cliques.
	Cliques [][]int `json:"cliques"`
	// CompressedSizes are the attribute sizes after MST's merging of rare
	// values (nil for AIM).
	CompressedSizes []int `json:"compressed_sizes,omitempty"`
	// Total is the model's (noisy) number of records.
	Total float64 `json:"total"`
	// Private is false when the noise or the selection came from a seeded
	// source.
	Private bool    `json:"private"`
	Seconds float64 `json:"seconds"`
}

// Result is a fitted model and how it was made.
type Result struct {
	// Model is the fitted model, over the compressed domain when the
	// mechanism compressed it (MST): use Result.Sample for records.
	Model        *Model
	Report       Report
	Measurements []Measurement
	compress     *compression
}

// Sample draws n records from the model with controlled rounding (see
// Model.Sample), in the original domain.
func (r *Result) Sample(n int, rng *rand.Rand) *Data {
	d := r.Model.Sample(n, rng)
	if r.compress != nil {
		d = r.compress.expand(d, rng)
	}
	return d
}

// checkOptions validates everything that does not depend on the data's
// values, before any budget is charged.
func checkOptions(sizes []int, o *Options) error {
	_, err := checkedRho(sizes, o)
	return err
}

// checkedRho is checkOptions that also returns the budget's ρ.
func checkedRho(sizes []int, o *Options) (float64, error) {
	if o.Mechanism == "" {
		o.Mechanism = AIM
	}
	if o.Mechanism != MST && o.Mechanism != AIM {
		return 0, inputf("unknown mechanism %q (want %q or %q)", o.Mechanism, MST, AIM)
	}
	rho, err := rhoOf(o.Budget)
	if err != nil {
		return 0, err
	}
	if !(rho > 0) || math.IsInf(rho, 0) {
		return 0, inputf("the budget ρ must be positive and finite, got %v", rho)
	}
	if len(sizes) == 0 {
		return 0, inputf("the domain has no attributes")
	}
	if o.Noise == nil || o.Bits == nil {
		return 0, inputf("no noise sampler or selection bits given")
	}
	if o.MaxCells <= 0 {
		o.MaxCells = DefaultMaxCells
	}
	if o.MaxSigma <= 0 {
		o.MaxSigma = DefaultMaxSigma
	}
	if o.FitIter <= 0 {
		o.FitIter = 200
	}
	k := len(sizes)
	if o.Rounds <= 0 {
		o.Rounds = 16 * k
	}
	if o.Workload == nil {
		for i := 0; i < k; i++ {
			for j := i + 1; j < k; j++ {
				o.Workload = append(o.Workload, []int{i, j})
			}
		}
		if k == 1 {
			o.Workload = [][]int{{0}}
		}
	}
	for _, s := range o.Workload {
		for i, a := range s {
			if a < 0 || a >= k || (i > 0 && a <= s[i-1]) {
				return 0, inputf("workload set %v: positions must increase within [0, %d)", s, k)
			}
		}
	}
	// The one-way marginals alone must fit the model cap.
	if c, _ := TreeCells(sizes, nil); c > o.MaxCells {
		return 0, inputf("even the one-way model has %.4g cells, above the cap %.4g", c, o.MaxCells)
	}
	if o.Mechanism == MST && k > 1 {
		// Any spanning tree of pairs: at most k−1 cliques of a pair each.
		big := 0.0
		for i := 0; i < k; i++ {
			for j := i + 1; j < k; j++ {
				big = math.Max(big, float64(sizes[i])*float64(sizes[j]))
			}
		}
		if c := float64(k-1) * big; c > o.MaxCells {
			return 0, inputf("an MST model may have up to %.4g cells, above the cap %.4g", c, o.MaxCells)
		}
	}
	// The smallest per-measurement budget the mechanism will use.
	var rhoMeas float64
	switch o.Mechanism {
	case MST:
		rhoMeas = rho / 3
	case AIM:
		rhoMeas = 0.9 * rho / float64(o.Rounds)
	}
	if s := 1 / math.Sqrt(2*rhoMeas); s > o.MaxSigma {
		return 0, inputf("the budget ρ = %g is too small for one round: its measurements would add Gaussian noise of scale %.4g per count (the cap is %.4g); give a larger budget or fewer rounds", rho, s, o.MaxSigma)
	}
	return rho, nil
}

// CheckOptions reports, without touching any data or budget, whether
// Synthesize would refuse these options for a domain of these sizes.
func CheckOptions(sizes []int, o Options) error { return checkOptions(sizes, &o) }

// uniform returns a uniform float64 in (0, 1) from 53 bits of r.
func uniform(r io.Reader) (float64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("synth: selection randomness: %w", err)
	}
	return (float64(binary.LittleEndian.Uint64(b[:])>>11) + 0.5) / (1 << 53), nil
}

// exponential selects index i with probability ∝ exp(ε·q_i/(2Δ)) by the
// Gumbel-max trick (argmax of ε q_i/(2Δ) + G_i, G_i standard Gumbel). It is
// ε-DP and, as a bounded-range mechanism, ε²/8-zCDP (Cesar & Rogers 2021).
// The Gumbel variables are computed in floating point from 53 uniform bits;
// their rounding perturbs the selection probabilities by a relative ~1e-15.
func exponential(r io.Reader, q []float64, eps, delta float64) (int, error) {
	best, bestV := -1, math.Inf(-1)
	for i, v := range q {
		u, err := uniform(r)
		if err != nil {
			return 0, err
		}
		s := eps*v/(2*delta) - math.Log(-math.Log(u))
		if s > bestV {
			best, bestV = i, s
		}
	}
	return best, nil
}

// measurer measures sets of marginals of the data with the residual plan.
type measurer struct {
	d   *Data
	o   *Options
	rho float64 // the budget's ρ
	rep *Report
	ms  []Measurement
}

// measure measures sets with the optimal residual plan at zCDP budget rho
// (plan sensitivity 1, σ = 1/√(2ρ)), records the step and returns each
// set's per-cell standard deviation.
func (m *measurer) measure(sets [][]int, rho float64) ([]float64, error) {
	p, err := marginals.NewPlan(m.d.Sizes, marginals.Weighted(sets, 1), marginals.Sum, nil)
	if err != nil {
		return nil, err
	}
	sigma := 1 / math.Sqrt(2*rho)
	tabs := make([]marginals.Table, len(sets))
	for i, s := range sets {
		tabs[i] = marginals.Table{Attrs: s, Values: m.d.Marginal(s)}
	}
	meas, err := p.Measure(tabs, m.o.Noise, sigma)
	if err != nil {
		return nil, err
	}
	m.ms = append(m.ms, FromResiduals(m.d.Sizes, meas)...)
	std := make([]float64, len(sets))
	for i := range sets {
		std[i] = sigma * math.Sqrt(p.Marginals[i].CellVariance)
	}
	m.rep.Steps = append(m.rep.Steps, Step{Kind: "measure", Sets: sets, Cost: zcdp(rho), Sigma: sigma, CellStd: std})
	m.rep.Measured = append(m.rep.Measured, sets...)
	if m.o.Progress != nil {
		m.o.Progress(event(progress.Event{Stage: "measure", Step: len(m.rep.Steps), Count: int64(len(m.rep.Measured)), Unit: "marginals"}))
	}
	return std, nil
}

// Synthesize runs the mechanism on the data and returns the fitted model.
// It spends exactly o.Budget's ρ (zCDP); the caller charges it before calling (see
// pipeline/synthetic.Release for the whole check → charge → measure → write order).
func Synthesize(ctx context.Context, d *Data, o Options) (*Result, error) {
	start := time.Now()
	rho, err := checkedRho(d.Sizes, &o)
	if err != nil {
		return nil, err
	}
	if d.Len() == 0 {
		return nil, inputf("no records")
	}
	rep := &Report{Mechanism: o.Mechanism, ZCDP: zcdp(rho), Private: o.Noise.Private()}
	m := &measurer{d: d, o: &o, rho: rho, rep: rep}
	var model *Model
	var comp *compression
	switch o.Mechanism {
	case MST:
		model, comp, err = runMST(ctx, m)
	case AIM:
		model, err = runAIM(ctx, m)
	}
	if err != nil {
		return nil, err
	}
	for _, s := range rep.Steps {
		rep.SpentRho += s.Cost.Rho()
	}
	rep.Cliques = model.Tree.Cliques
	rep.Total = model.Total
	rep.Seconds = time.Since(start).Seconds()
	return &Result{Model: model, Report: *rep, Measurements: m.ms, compress: comp}, nil
}

func oneWays(k int) [][]int {
	out := make([][]int, k)
	for a := range out {
		out[a] = []int{a}
	}
	return out
}

func (m *measurer) fit(ctx context.Context, warm *Model, iters int) (*Model, error) {
	model, res, err := Fit(ctx, m.d.Sizes, m.ms, &FitOptions{MaxIter: iters, MaxCells: m.o.MaxCells, Warm: warm, Progress: m.o.Progress})
	if err != nil {
		return nil, err
	}
	m.rep.Fit = res
	m.rep.FitIterations += res.Iterations
	return model, nil
}

// runMST: ρ/3 on the one-way marginals; their rare values (estimated
// count below 3 standard deviations) merged into one code per attribute;
// ρ/3 on k−1 exponential-mechanism selections of a maximum spanning tree
// of pairs (score: L1 distance of the pair's counts from the independent
// model of the one-way estimates, sensitivity 1); ρ/3 on the selected pairs,
// measured together by the residual plan. The model is fitted to the pair
// measurements (which include the compressed one-way residuals and the
// total) over the compressed domain.
func runMST(ctx context.Context, m *measurer) (*Model, *compression, error) {
	k := len(m.d.Sizes)
	rho := m.rho
	if k == 1 {
		if _, err := m.measure(oneWays(1), rho); err != nil {
			return nil, nil, err
		}
		model, err := m.fit(ctx, nil, 10*m.o.FitIter)
		return model, nil, err
	}
	std, err := m.measure(oneWays(k), rho/3)
	if err != nil {
		return nil, nil, err
	}
	one, err := m.fit(ctx, nil, m.o.FitIter)
	if err != nil {
		return nil, nil, err
	}
	est := make([][]float64, k)
	for a := range est {
		p, err := one.Marginal([]int{a}, m.o.MaxCells)
		if err != nil {
			return nil, nil, err
		}
		for v := range p {
			p[v] *= one.Total
		}
		est[a] = p
	}
	comp := newCompression(m.d.Sizes, est, std)
	cd := comp.apply(m.d)
	// The independent model's one-ways over the compressed domain.
	cest := make([][]float64, k)
	for a := range cest {
		cest[a] = make([]float64, comp.sizes[a])
		for v, nv := range comp.code[a] {
			cest[a][nv] += est[a][v] / one.Total
		}
	}
	pairs := mstPairScores(cd, comp.sizes, cest, one.Total)
	eps := math.Sqrt(8 * (rho / 3) / float64(k-1))
	chosen, err := m.mstTree(pairs, k, eps)
	if err != nil {
		return nil, nil, err
	}
	// Measure the pairs over the compressed domain; fit to those alone.
	pm := &measurer{d: cd, o: m.o, rho: m.rho, rep: m.rep}
	if _, err := pm.measure(chosen, rho/3); err != nil {
		return nil, nil, err
	}
	m.ms = append(m.ms, pm.ms...)
	model, err := pm.fit(ctx, nil, 10*m.o.FitIter)
	if err != nil {
		return nil, nil, err
	}
	m.rep.CompressedSizes = comp.sizes
	return model, comp, nil
}

// mstPair is a candidate edge of MST's tree: attributes i < j and the L1
// distance of their (compressed) two-way marginal from the independent
// model's, the exponential mechanism's score.
type mstPair struct {
	i, j  int
	score float64
}

// mstPairScores scores every pair of attributes of the compressed data cd
// (sizes per attribute) against the independent model with one-way
// frequencies cest and the given total.
func mstPairScores(cd *Data, sizes []int, cest [][]float64, total float64) []mstPair {
	k := len(sizes)
	var pairs []mstPair
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			x := cd.Marginal([]int{i, j})
			dj := sizes[j]
			s := 0.0
			for c := range x {
				s += math.Abs(x[c] - total*cest[i][c/dj]*cest[j][c%dj])
			}
			pairs = append(pairs, mstPair{i, j, s})
		}
	}
	return pairs
}

// mstTree selects the k−1 edges of a spanning tree, each by the exponential
// mechanism at eps among the pairs that join two components (Kruskal with a
// private choice), recording each selection in the report; the edges are
// returned sorted.
func (m *measurer) mstTree(pairs []mstPair, k int, eps float64) ([][]int, error) {
	group := make([]int, k)
	for i := range group {
		group[i] = i
	}
	var chosen [][]int
	for r := 0; r < k-1; r++ {
		var cand []mstPair
		var q []float64
		for _, p := range pairs {
			if group[p.i] != group[p.j] {
				cand = append(cand, p)
				q = append(q, p.score)
			}
		}
		c, err := exponential(m.o.Bits, q, eps, 1)
		if err != nil {
			return nil, err
		}
		p := cand[c]
		old := group[p.j]
		for a := range group {
			if group[a] == old {
				group[a] = group[p.i]
			}
		}
		chosen = append(chosen, []int{p.i, p.j})
		m.rep.Steps = append(m.rep.Steps, selectStep([][]int{{p.i, p.j}}, eps))
		m.rep.Rounds++
		if m.o.Progress != nil {
			m.o.Progress(event(progress.Event{Stage: "select", Step: r + 1, Count: int64(k - 1)}))
		}
	}
	slices.SortFunc(chosen, slices.Compare)
	return chosen, nil
}

// runAIM: the one-way marginals first (the budget of k rounds' measurements),
// then rounds of selection (10% of a round's ρ, exponential mechanism on
// the weighted L1 error of each candidate minus its expected noise) and
// measurement (90%, the residual plan of the selected marginal), the
// candidates limited to the workload's downward closure whose model stays
// under a cap that grows with the budget spent; a round whose measurement
// barely moved the model doubles the next rounds' scales (AIM's annealing).
func runAIM(ctx context.Context, m *measurer) (*Model, error) {
	k := len(m.d.Sizes)
	rho, T := m.rho, float64(m.o.Rounds)
	sigma := math.Sqrt(T / (2 * 0.9 * rho))
	eps := math.Sqrt(8 * 0.1 * rho / T)
	cands, weights := aimCandidates(m.o.Workload)
	sens := slices.Max(weights)
	// Initialization: every one-way marginal, at k rounds' measurement
	// budget, measured together by the residual plan.
	rhoUsed := float64(k) / (2 * sigma * sigma)
	if rhoUsed > rho {
		rhoUsed = rho
	}
	if _, err := m.measure(oneWays(k), rhoUsed); err != nil {
		return nil, err
	}
	model, err := m.fit(ctx, nil, m.o.FitIter)
	if err != nil {
		return nil, err
	}
	cache := &aimCache{cellStd: map[string]float64{}, dataMarg: map[string][]float64{}}
	var measured [][]int
	for _, s := range oneWays(k) {
		measured = append(measured, s)
	}
	for rhoUsed < rho*(1-1e-12) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("synth: cancelled: %w", err)
		}
		remaining := rho - rhoUsed
		roundCost := 1/(2*sigma*sigma) + eps*eps/8
		final := false
		if remaining < 2*roundCost {
			sigma = math.Sqrt(1 / (2 * 0.9 * remaining))
			eps = math.Sqrt(8 * 0.1 * remaining)
			final = true
		}
		limit := m.o.MaxCells * (rhoUsed + 1/(2*sigma*sigma) + eps*eps/8) / rho
		idx, q, err := cache.scores(m, model, cands, weights, measured, limit, sigma)
		if err != nil {
			return nil, err
		}
		if len(idx) == 0 {
			return nil, inputf("no candidate marginal fits the model cap of %.4g cells", m.o.MaxCells)
		}
		c, err := exponential(m.o.Bits, q, eps, sens)
		if err != nil {
			return nil, err
		}
		r := cands[idx[c]]
		m.rep.Steps = append(m.rep.Steps, selectStep([][]int{r}, eps))
		m.rep.Rounds++
		rhoMeas := 1 / (2 * sigma * sigma)
		if final {
			rhoMeas = remaining - eps*eps/8
		}
		std, err := m.measure([][]int{r}, rhoMeas)
		if err != nil {
			return nil, err
		}
		rhoUsed += eps*eps/8 + rhoMeas
		measured = append(measured, r)
		next, moved, nCells, err := aimRefit(ctx, m, model, r, final)
		if err != nil {
			return nil, err
		}
		model = next
		if !final && moved <= math.Sqrt(2/math.Pi)*std[0]*float64(nCells) {
			sigma /= 2
			eps *= 2
		}
		if m.o.Progress != nil {
			m.o.Progress(event(progress.Event{Stage: "select", Step: m.rep.Rounds, Note: fmt.Sprintf("ρ spent %.4g of %.4g", rhoUsed, rho)}))
		}
		if final {
			break
		}
	}
	return model, nil
}

// aimCandidates returns AIM's candidates, the downward closure of the
// workload in first-seen order, each weighted by its overlap with the
// workload's sets (the weights set the selection's sensitivity).
func aimCandidates(workload [][]int) ([][]int, []float64) {
	seen := map[string]bool{}
	var cands [][]int
	var weights []float64
	for _, s := range workload {
		n := len(s)
		for mask := 1; mask < 1<<n; mask++ {
			var r []int
			for b := 0; b < n; b++ {
				if mask&(1<<b) != 0 {
					r = append(r, s[b])
				}
			}
			if key := setKey(r); !seen[key] {
				seen[key] = true
				cands = append(cands, r)
			}
		}
	}
	for _, r := range cands {
		w := 0.0
		for _, s := range workload {
			w += float64(len(intersect(r, s)))
		}
		weights = append(weights, w)
	}
	return cands, weights
}

// aimCache keeps, across AIM's rounds, what does not change between them:
// the per-cell std of measuring each candidate alone at unit σ, and the
// data's candidate marginals, each computed once.
type aimCache struct {
	cellStd  map[string]float64
	dataMarg map[string][]float64
}

// unitStd returns the per-cell std of measuring r alone at unit σ.
func (a *aimCache) unitStd(sizes []int, r []int) (float64, error) {
	key := setKey(r)
	if v, ok := a.cellStd[key]; ok {
		return v, nil
	}
	p, err := marginals.NewPlan(sizes, marginals.Weighted([][]int{r}, 1), marginals.Sum, nil)
	if err != nil {
		return 0, err
	}
	v := math.Sqrt(p.Marginals[0].CellVariance)
	a.cellStd[key] = v
	return v, nil
}

// scores returns the candidates eligible this round (those whose model
// stays within limit cells and whose inference table fits the cap), as
// indices into cands, with their quality for the exponential mechanism:
// the weighted L1 error of the model's marginal minus its expected noise
// at σ.
func (a *aimCache) scores(m *measurer, model *Model, cands [][]int, weights []float64, measured [][]int, limit, sigma float64) ([]int, []float64, error) {
	var idx []int
	var q []float64
	for ci, r := range cands {
		c, err := TreeCells(m.d.Sizes, append(slices.Clone(measured), r))
		if err != nil {
			return nil, nil, err
		}
		if c > limit {
			continue
		}
		est, err := model.Marginal(r, m.o.MaxCells)
		if err != nil {
			continue // an inference table too large: not a candidate
		}
		us, err := a.unitStd(m.d.Sizes, r)
		if err != nil {
			return nil, nil, err
		}
		x, ok := a.dataMarg[setKey(r)]
		if !ok {
			x = m.d.Marginal(r)
			a.dataMarg[setKey(r)] = x
		}
		l1 := 0.0
		for c := range x {
			l1 += math.Abs(x[c] - model.Total*est[c])
		}
		idx = append(idx, ci)
		q = append(q, weights[ci]*(l1-math.Sqrt(2/math.Pi)*sigma*us*float64(len(x))))
	}
	return idx, q, nil
}

// aimRefit refits the model after r was measured (ten times the
// iterations in the final round) and returns the new model with how far
// its marginal on r moved (L1, in records) and that marginal's cell count,
// which AIM's annealing compares with the measurement's noise.
func aimRefit(ctx context.Context, m *measurer, model *Model, r []int, final bool) (*Model, float64, int, error) {
	before, err := model.Marginal(r, m.o.MaxCells)
	if err != nil {
		return nil, 0, 0, err
	}
	iters := m.o.FitIter
	if final {
		iters *= 10
	}
	next, err := m.fit(ctx, model, iters)
	if err != nil {
		return nil, 0, 0, err
	}
	after, err := next.Marginal(r, m.o.MaxCells)
	if err != nil {
		return nil, 0, 0, err
	}
	moved := 0.0
	for c := range after {
		moved += math.Abs(next.Total * (after[c] - before[c]))
	}
	return next, moved, len(after), nil
}

// zcdp is the ρ-zCDP budget ρ; ρ comes from a validated budget, so it is
// positive and finite (a zero Budget otherwise, which the report shows as
// null).
func zcdp(rho float64) calibrate.Budget {
	b, _ := calibrate.ZCDP(rho)
	return b
}

// selectStep is a selection by the exponential mechanism at ε: ε-DP and
// ε²/8-zCDP.
func selectStep(sets [][]int, eps float64) Step {
	sel, _ := calibrate.PureDP(eps)
	return Step{Kind: "select", Sets: sets, Cost: zcdp(eps * eps / 8), Selection: &sel}
}
