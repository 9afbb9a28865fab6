package synth

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/progress"
)

// Measurement is one residual subset's noisy measurement in table form:
// Values = Q_Tᵀ y_T over the cells of Attrs (row-major, the last attribute
// fastest), whose Helmert coordinates each carry noise of variance Variance.
// For the empty set, Values is the noisy total.
type Measurement struct {
	Attrs    []int
	Values   []float64
	Variance float64
}

// FromResiduals converts a marginals measurement into Measurements (residual
// subsets with no coordinates, which hold an attribute of size 1, are
// dropped: they carry no information).
func FromResiduals(sizes []int, m *marginals.Measurement) []Measurement {
	var out []Measurement
	for _, r := range m.Residuals {
		if len(r.Values) == 0 {
			continue
		}
		out = append(out, Measurement{Attrs: slices.Clone(r.Attrs), Values: helmertUp(sizes, r.Attrs, r.Values), Variance: r.Std * r.Std})
	}
	return out
}

// combine merges measurements of the same set by inverse-variance weighting.
func combine(ms []Measurement) []Measurement {
	byKey := map[string]int{}
	var out []Measurement
	for _, m := range ms {
		k := setKey(m.Attrs)
		j, ok := byKey[k]
		if !ok {
			byKey[k] = len(out)
			out = append(out, Measurement{Attrs: m.Attrs, Values: slices.Clone(m.Values), Variance: m.Variance})
			continue
		}
		o := &out[j]
		w1, w2 := 1/o.Variance, 1/m.Variance
		for i := range o.Values {
			o.Values[i] = (w1*o.Values[i] + w2*m.Values[i]) / (w1 + w2)
		}
		o.Variance = 1 / (w1 + w2)
	}
	return out
}

// FitOptions configures Fit. The zero value is usable.
type FitOptions struct {
	// MaxIter caps the mirror-descent steps; 0 means 2000.
	MaxIter int
	// Tol stops when the certified gap (Frank–Wolfe) is ≤ Tol·loss or the
	// loss fell by less than Tol·loss over 20 steps; 0 means 1e-4.
	Tol float64
	// MaxCells caps the model size; 0 means DefaultMaxCells.
	MaxCells float64
	// Sweeps is the number of iterative-proportional-fitting sweeps that
	// start the fit (0 means 10, negative none).
	Sweeps int
	// Warm, if non-nil, is a model whose distribution starts the fit.
	Warm *Model
	// Progress, if non-nil, receives a "fit" event every 50 steps and a
	// final one.
	Progress progress.Func
}

// FitResult reports a fit.
type FitResult struct {
	// Iterations is the number of mirror-descent steps taken.
	Iterations int `json:"iterations"`
	// Loss is L(μ) = Σ_T ‖P_T μ_T − b_T‖²/v_T at the result.
	Loss float64 `json:"loss"`
	// Gap bounds L(μ) − min L over the marginal polytope from above.
	Gap float64 `json:"gap"`
	// Cells is the model size.
	Cells float64 `json:"model_cells"`
	// Seconds is the wall time.
	Seconds float64 `json:"seconds"`
}

type fitTerm struct {
	m      Measurement
	clique int
	idx    []int32
}

// Fit fits a model to measurements: the junction tree of the measured sets,
// then entropic mirror descent on the negative log-likelihood (see the
// package documentation). The measurements must include the empty set (the
// total). A model above opt.MaxCells is refused (ErrInput) before any table
// is allocated.
func Fit(ctx context.Context, sizes []int, ms []Measurement, opt *FitOptions) (*Model, FitResult, error) {
	start := time.Now()
	o := fitDefaults(opt)
	ms = combine(ms)
	total, sets, err := checkMeasurements(sizes, ms)
	if err != nil {
		return nil, FitResult{}, err
	}
	for a := range sizes {
		sets = append(sets, []int{a})
	}
	tree, err := BuildTree(sizes, sets)
	if err != nil {
		return nil, FitResult{}, err
	}
	model, err := NewModel(tree, total, o.MaxCells)
	if err != nil {
		return nil, FitResult{}, err
	}
	if o.Warm != nil {
		model.warmStart(o.Warm, o.MaxCells)
	}
	terms, invVar := model.fitTerms(ms)
	res := FitResult{Cells: tree.Cells()}
	if len(terms) == 0 {
		res.Seconds = time.Since(start).Seconds()
		return model, res, nil
	}
	n := len(tree.Cliques)
	grad := make([][]float64, n)
	next := make([][]float64, n) // the gradient at a trial step
	for i := range grad {
		grad[i] = make([]float64, len(model.theta[i]))
		next[i] = make([]float64, len(model.theta[i]))
	}
	lossGradInto := model.fitLoss(sizes, terms, total)
	eta := 1 / (2 * total * total * invVar)
	loss := lossGradInto(grad)
	if o.Sweeps >= 0 {
		loss = model.ipfStart(ms, total, o.Sweeps, loss, func() float64 { return lossGradInto(grad) })
	}
	history := []float64{loss}
	report := func(done bool) {
		if o.Progress != nil {
			o.Progress(event(progress.Event{Stage: "fit", Step: res.Iterations, Objective: loss, Bound: math.Max(0, loss-res.Gap), Gap: math.Min(1, res.Gap/loss), Seconds: time.Since(start).Seconds(), Done: done}))
		}
	}
	oldTheta := make([][]float64, n)
	oldProb := make([][]float64, n)
	for it := 1; it <= o.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, res, fmt.Errorf("synth: fit cancelled: %w", err)
		}
		if it%10 == 1 {
			res.Gap = model.fwGap(grad)
			if res.Gap <= o.Tol*loss {
				break
			}
		}
		for i := range oldTheta {
			oldTheta[i] = append(oldTheta[i][:0], model.theta[i]...)
			oldProb[i] = append(oldProb[i][:0], model.prob[i]...)
		}
		newLoss, accepted := model.mirrorStep(oldTheta, oldProb, grad, next, &eta, loss, lossGradInto)
		if !accepted {
			for i := range oldTheta {
				copy(model.theta[i], oldTheta[i])
			}
			model.calibrate()
			loss = lossGradInto(grad)
			break
		}
		loss = newLoss
		grad, next = next, grad // the gradient at the accepted step
		res.Iterations = it
		history = append(history, loss)
		if k := len(history); k > 20 && history[k-21]-loss <= o.Tol*loss*1e-2 {
			break
		}
		if it%50 == 0 {
			report(false)
		}
	}
	res.Loss = loss
	res.Gap = model.fwGap(grad)
	res.Seconds = time.Since(start).Seconds()
	report(true)
	return model, res, nil
}

// fitDefaults copies opt (nil meaning the zero value) and fills in the
// documented defaults, so that Fit never writes through the caller's options.
func fitDefaults(opt *FitOptions) FitOptions {
	var o FitOptions
	if opt != nil {
		o = *opt
	}
	if o.MaxIter <= 0 {
		o.MaxIter = 2000
	}
	if o.Tol <= 0 {
		o.Tol = 1e-4
	}
	return o
}

// checkMeasurements validates ms against sizes before anything is allocated,
// and splits them into the total (clamped to at least one record, since a
// noisy total below one still gives a usable model) and the measured sets
// that shape the junction tree, in measurement order.
func checkMeasurements(sizes []int, ms []Measurement) (float64, [][]int, error) {
	total := math.NaN()
	var sets [][]int
	for _, m := range ms {
		if !(m.Variance > 0) || math.IsInf(m.Variance, 0) {
			return 0, nil, inputf("measurement on %v has variance %v", m.Attrs, m.Variance)
		}
		if len(m.Values) != cells(sizes, m.Attrs) {
			return 0, nil, inputf("measurement on %v has %d values, want %d", m.Attrs, len(m.Values), cells(sizes, m.Attrs))
		}
		if len(m.Attrs) == 0 {
			total = m.Values[0]
		} else {
			sets = append(sets, m.Attrs)
		}
	}
	if math.IsNaN(total) {
		return 0, nil, inputf("the measurements do not include the total")
	}
	return math.Max(total, 1), sets, nil
}

// fitTerms places each non-total measurement in a clique of the model, with
// the index map from clique cells to measured cells computed once, and
// returns Σ 1/v_T, which sets the first mirror-descent step size.
func (model *Model) fitTerms(ms []Measurement) ([]fitTerm, float64) {
	var terms []fitTerm
	invVar := 0.0
	for _, m := range ms {
		if len(m.Attrs) == 0 {
			continue
		}
		c := model.clique(m.Attrs)
		terms = append(terms, fitTerm{m: m, clique: c, idx: model.idx.get(model.Tree.Cliques[c], m.Attrs)})
		invVar += 1 / m.Variance
	}
	return terms, invVar
}

// fitLoss returns the loss function of the fit: it returns L at the model's
// current distribution and, when dst is non-nil, sets dst to ∂L/∂p_C (so
// N·∂L/∂μ). Kept apart from the descent loop because both the start and
// every trial step evaluate it.
func (model *Model) fitLoss(sizes []int, terms []fitTerm, total float64) func(dst [][]float64) float64 {
	n := len(model.theta)
	return func(dst [][]float64) float64 {
		withGrad := dst != nil
		if withGrad {
			for _, g := range dst {
				clear(g)
			}
		}
		l := 0.0
		probs := make([][]float64, n)
		for _, t := range terms {
			if probs[t.clique] == nil {
				probs[t.clique] = model.prob[t.clique]
			}
			mu := make([]float64, len(t.m.Values))
			sumInto(mu, probs[t.clique], t.idx)
			for i := range mu {
				mu[i] *= total
			}
			center(sizes, t.m.Attrs, mu)
			for i := range mu {
				r := mu[i] - t.m.Values[i]
				l += r * r / t.m.Variance
				mu[i] = 2 * total * r / t.m.Variance
			}
			if withGrad {
				addFrom(dst[t.clique], mu, t.idx, 1)
			}
		}
		return l
	}
}

// ipfStart starts the fit from iterative proportional fitting to the
// clipped least-squares tables of the maximal measured sets (sweeps, 0
// meaning 10), kept only if it lowers the loss; otherwise the model is
// restored. lossGrad evaluates the loss and refreshes the gradient; the
// returned value is the loss at the kept start.
func (model *Model) ipfStart(ms []Measurement, total float64, sweeps int, loss float64, lossGrad func() float64) float64 {
	saved := make([][]float64, len(model.theta))
	for i := range saved {
		saved[i] = slices.Clone(model.theta[i])
	}
	if sweeps == 0 {
		sweeps = 10
	}
	model.ipf(ms, total, sweeps)
	if l := lossGrad(); l < loss {
		return l
	}
	for i := range saved {
		copy(model.theta[i], saved[i])
	}
	model.calibrate()
	return lossGrad()
}

// mirrorStep tries one entropic mirror-descent step from oldTheta along
// grad, backtracking (η halved, at most 60 tries) until the loss falls by
// at least half its linear prediction; on success η grows by 1.5 and next
// holds the gradient at the new point. It reports the new loss and whether
// a step was accepted; the caller restores the model when none was.
func (model *Model) mirrorStep(oldTheta, oldProb, grad, next [][]float64, eta *float64, loss float64, lossGradInto func([][]float64) float64) (float64, bool) {
	for tries := 0; tries < 60; tries++ {
		for i := range model.theta {
			for j := range model.theta[i] {
				model.theta[i][j] = oldTheta[i][j] - *eta*grad[i][j]
			}
		}
		model.calibrate()
		newLoss := lossGradInto(next)
		// Linear prediction of the decrease: ⟨∇L, p_old − p_new⟩.
		pred := 0.0
		for i := range grad {
			for j, g := range grad[i] {
				pred += g * (oldProb[i][j] - model.prob[i][j])
			}
		}
		if loss-newLoss >= 0.5*pred && pred >= 0 && !math.IsNaN(newLoss) {
			*eta *= 1.5
			return newLoss, true
		}
		*eta /= 2
	}
	return 0, false
}

// fwGap returns ⟨g, p⟩ − min_x Σ_C g_C(x_C): with g = ∇_p L it bounds
// L(p) − min L over the marginal polytope (convexity), the minimum of the
// linear term found exactly by min-sum message passing on the tree.
func (m *Model) fwGap(g [][]float64) float64 {
	t := m.Tree
	lin := 0.0
	for i := range g {
		for j, v := range g[i] {
			lin += v * m.prob[i][j]
		}
	}
	n := len(t.Cliques)
	up := make([][]float64, n)
	best := 0.0
	for k := n - 1; k >= 0; k-- {
		i := t.Order[k]
		p := slices.Clone(g[i])
		for _, c := range m.children[i] {
			addFrom(p, up[c], m.idx.get(t.Cliques[i], t.Sep[c]), 1)
		}
		if t.Parent[i] >= 0 {
			up[i] = make([]float64, cells(t.Sizes, t.Sep[i]))
			minInto(up[i], p, m.idx.get(t.Cliques[i], t.Sep[i]))
		} else {
			best = slices.Min(p)
		}
	}
	return math.Max(0, lin-best)
}

// warmStart sets θ so that the model equals the junction-tree product of
// w's marginals on this tree's cliques, Π_C p_w(C) / Π_S p_w(S) (exact when
// w factorizes on this tree).
func (m *Model) warmStart(w *Model, maxCells float64) {
	if maxCells <= 0 {
		maxCells = DefaultMaxCells
	}
	t := m.Tree
	for i, c := range t.Cliques {
		pc, err := w.Marginal(c, maxCells)
		if err != nil {
			// A warm start is only a start: fall back to the uniform model.
			for _, th := range m.theta {
				clear(th)
			}
			m.calibrate()
			return
		}
		for j, v := range pc {
			m.theta[i][j] = math.Log(math.Max(v, 1e-300))
		}
		if t.Parent[i] >= 0 {
			ps := make([]float64, cells(t.Sizes, t.Sep[i]))
			sumInto(ps, pc, m.idx.get(c, t.Sep[i]))
			for j := range ps {
				ps[j] = math.Log(math.Max(ps[j], 1e-300))
			}
			addFrom(m.theta[i], ps, m.idx.get(c, t.Sep[i]), -1)
		}
	}
	m.calibrate()
}

// ipf runs sweeps of iterative proportional fitting: for every maximal
// measured set S (in no other measured set), the least-squares table
// t_S = N̂/|S| + Σ_{T⊆S measured} b_T/Π_{a∈S∖T} d_a (consistent across sets,
// since every set uses the same residuals), clipped at 0 and rescaled to
// N̂, is matched by θ_C += log(t_S/μ_S) on a clique C ⊇ S. Where the
// clipped tables are consistent this converges to the model with exactly
// those marginals (exact in one sweep on a junction tree of the sets);
// otherwise it is only a starting point for mirror descent.
func (m *Model) ipf(ms []Measurement, total float64, sweeps int) {
	sizes := m.Tree.Sizes
	var maximal [][]int
	for i, a := range ms {
		max := len(a.Attrs) > 0
		for j, b := range ms {
			if i != j && len(b.Attrs) > len(a.Attrs) && subset(a.Attrs, b.Attrs) {
				max = false
				break
			}
		}
		if max {
			maximal = append(maximal, a.Attrs)
		}
	}
	type target struct {
		attrs  []int
		clique int
		idx    []int32
		t      []float64
	}
	var ts []target
	for _, s := range maximal {
		nc := cells(sizes, s)
		t := make([]float64, nc)
		for i := range t {
			t[i] = total / float64(nc)
		}
		for _, mm := range ms {
			if len(mm.Attrs) == 0 || !subset(mm.Attrs, s) {
				continue
			}
			f := float64(nc) / float64(len(mm.Values))
			addFrom(t, mm.Values, m.idx.get(s, mm.Attrs), 1/f)
		}
		sum := 0.0
		for i := range t {
			t[i] = math.Max(t[i], 0)
			sum += t[i]
		}
		if sum <= 0 {
			continue
		}
		floor := 1e-9 * total / float64(nc)
		for i := range t {
			t[i] = math.Max(t[i]*total/sum, floor)
		}
		c := m.clique(s)
		ts = append(ts, target{s, c, m.idx.get(m.Tree.Cliques[c], s), t})
	}
	mu := []float64{}
	for sw := 0; sw < sweeps; sw++ {
		worst := 0.0
		for _, t := range ts {
			p := m.prob[t.clique]
			mu = append(mu[:0], make([]float64, len(t.t))...)
			sumInto(mu, p, t.idx)
			upd := make([]float64, len(mu))
			for i := range mu {
				upd[i] = math.Log(t.t[i] / math.Max(mu[i]*total, 1e-300))
				worst = math.Max(worst, math.Abs(t.t[i]-mu[i]*total))
			}
			addFrom(m.theta[t.clique], upd, t.idx, 1)
			m.calibrate()
		}
		if worst < 1e-6*total {
			break
		}
	}
}

// event fills the fields an event does not know with NaN (the progress
// convention) unless set.
func event(e progress.Event) progress.Event {
	if e.Objective == 0 && e.Bound == 0 && e.Gap == 0 {
		e.Objective, e.Bound, e.Gap = math.NaN(), math.NaN(), math.NaN()
	} else if e.Bound == 0 && e.Gap == 0 {
		e.Bound, e.Gap = math.NaN(), math.NaN()
	}
	return e
}
