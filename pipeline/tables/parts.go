package tables

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/progress"
)

// PartsRequest describes a release of a spec's workload that may be
// measured in several parts: where its strategy comes from, its budget,
// and whether the budget is divided over the terms.
type PartsRequest struct {
	// Workload is the spec's workload.
	Workload *domain.Kron
	// Budget is the whole release's budget; the parts' budgets add up to it.
	Budget Budget
	// PlanDir is a directory written by WriteStrategy (dpsolve plan --out);
	// when empty the strategy is planned in-process with Template ("" is
	// "best", the portfolio; "marginals" is the marginals template's plan,
	// the pure Laplace one under a pure ε budget).
	PlanDir, Template string
	// SplitTerms divides the budget over the terms (SplitTerms, in
	// proportion to TermShares; equal shares when empty), each term
	// planned and measured on its own. It needs Template, not PlanDir: one
	// plan's strategy measures every term jointly.
	SplitTerms bool
	TermShares []float64
	// Progress receives the planner's progress (may be nil).
	Progress progress.Func
	// Planned, if not nil, is told every in-process plan as it is made.
	Planned func(*plan.Result)
	// CheckPart, if not nil, may refuse a part's budget before that part
	// is planned (a term of a split) or prepared (a union part): a caller
	// with a usable range of budgets checks it here.
	CheckPart func(PartCheck) error
}

// PartCheck is a part's budget as CheckPart sees it: the term of a split,
// or the union part, that would get it.
type PartCheck struct {
	Budget Budget
	// Term is the term a split gives the budget to ("" for a union part).
	Term string
	// Union is the union part that gets it (nil for a term).
	Union *plan.Part
}

// Part is one prepared release among a Parts: the whole workload under the
// whole budget, a term of a split under its share, or one part of a union
// measured part by part.
type Part struct {
	Release *Release
	// Terms are the workload's terms it answers, in its own order.
	Terms []int
	// Plan says where its strategy came from: the plan directory,
	// "template T", or "template T, part k of n (kind)".
	Plan string
	// Budget is what it spends; Share is Budget's fraction of the whole.
	Budget Budget
	Share  float64
	// Union is set when it is one part of a union measured part by part.
	Union *UnionPartOf
}

// UnionPartOf identifies a part of a union measured part by part.
type UnionPartOf struct {
	// Part is its position in the union, from 1.
	Part int
	// Kind is its strategy's template, Weight its weight in the union.
	Kind   string
	Weight float64
	// Terms are the names of the terms it answers.
	Terms []string
}

// Parts is a release prepared in one or more parts (see PrepareParts). It
// holds no data.
type Parts struct {
	w     *domain.Kron
	b     Budget
	parts []Part
}

// PrepareParts plans (or reads the plan of) the release req describes and
// prepares it: one part for the whole workload, one per term with
// SplitTerms, or, for a union whose parts no single measurement covers
// (a hybrid of marginals and Kronecker parts), one per union part at the
// shares the union's weights give (see unionParts). Nothing is measured.
func PrepareParts(ctx context.Context, req PartsRequest) (*Parts, error) {
	ps := &Parts{w: req.Workload, b: req.Budget}
	var err error
	if req.SplitTerms {
		if req.PlanDir != "" {
			return nil, errorf("a split over terms cannot divide the budget of a plan directory: its one strategy measures every term jointly")
		}
		ps.parts, err = req.splitParts(ctx)
	} else {
		ps.parts, err = req.prepare(ctx, req.Workload, req.Budget, allTerms(len(req.Workload.Terms())))
	}
	if err != nil {
		return nil, err
	}
	return ps, nil
}

func allTerms(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// prepare plans and prepares the release of k under b, answering the whole
// workload's terms terms: one part, or a hybrid union's parts.
func (req *PartsRequest) prepare(ctx context.Context, k *domain.Kron, b Budget, terms []int) ([]Part, error) {
	// One explicit workload for reading the plan and preparing it.
	w, err := explicitOf(k)
	if err != nil {
		return nil, err
	}
	s, hybrid, desc, err := req.strategy(ctx, k, w, b)
	if err != nil {
		return nil, err
	}
	if hybrid != nil {
		return req.unionParts(hybrid, k, b, desc)
	}
	r, err := prepare(w, s, b)
	if err != nil {
		return nil, err
	}
	r.k = k
	return []Part{{Release: r, Terms: terms, Plan: desc, Budget: b, Share: 1}}, nil
}

// splitParts prepares one release per term, each planned for its term
// alone under its share of the budget.
func (req *PartsRequest) splitParts(ctx context.Context) ([]Part, error) {
	k := req.Workload
	budgets, err := SplitTerms(req.Budget, req.TermShares, len(k.Terms()))
	if err != nil {
		return nil, err
	}
	total := 0.0
	for _, s := range req.TermShares {
		total += s
	}
	var parts []Part
	for t, term := range k.Terms() {
		if req.CheckPart != nil {
			if err := req.CheckPart(PartCheck{Budget: budgets[t], Term: term.Name}); err != nil {
				return nil, err
			}
		}
		// The term on its own, planned: a copy (k.Part), so that NewKron
		// numbers the copy's products, not k's.
		part, err := k.Part([]int{t})
		if err != nil {
			return nil, err
		}
		sk, err := domain.NewKron(part.Attributes(), part.Terms())
		if err != nil {
			return nil, fmt.Errorf("--split terms: term %q on its own: %w", term.Name, err)
		}
		tps, err := req.prepare(ctx, sk, budgets[t], []int{t})
		if err != nil {
			return nil, fmt.Errorf("term %q: %w", term.Name, err)
		}
		share := 1 / float64(len(k.Terms()))
		if total > 0 {
			share = req.TermShares[t] / total
		}
		for _, p := range tps {
			// A one-term union's parts share the term's budget; they
			// are reported as the term's, not as a union's.
			p.Terms, p.Share, p.Union = []int{t}, p.Share*share, nil
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// strategy reads the plan directory or plans in-process (the default
// template is "best"; "marginals" is the residual plan). A union measured
// part by part (see unionParts) is returned as the plan's strategy, the
// first result nil.
func (req *PartsRequest) strategy(ctx context.Context, k *domain.Kron, w *explicitWorkload, b Budget) (Measurement, *plan.Plan, string, error) {
	if req.PlanDir != "" {
		s, err := readStrategyDir(req.PlanDir, w)
		return s, nil, req.PlanDir, err
	}
	name := req.Template
	if name == "" {
		name = "best"
	}
	if name == "marginals" {
		// Pure ε: the Laplace plan that measures every marginal table;
		// otherwise the Gaussian residual plan.
		return MarginalsStrategy{Pure: pure(b)}, nil, "template marginals", nil
	}
	res, err := planFor(ctx, k, b, name, req.Progress)
	if err != nil {
		return nil, nil, "", err
	}
	if req.Planned != nil {
		req.Planned(res)
	}
	if isHybrid(res.Strategy, k) {
		return nil, res.Strategy, "template " + res.Template, nil
	}
	s, err := FromPlan(res.Strategy, k)
	return s, nil, "template " + res.Template, err
}

// planFor plans k under b with the named template, among the strategies a
// release can measure (releaseAccept).
func planFor(ctx context.Context, k *domain.Kron, b Budget, name string, pf progress.Func) (*plan.Result, error) {
	t, err := planner.Lookup(name)
	if err != nil {
		return nil, err
	}
	// The portfolio (planner.Best) includes the marginals template: for a
	// workload of marginals its exact residual plan runs first and ends it.
	opt := plan.Options{Noise: b.Noise(), Progress: pf, Accept: releaseAccept(k, b)}
	return t.Plan(ctx, k, opt)
}

// Needs reports whether any part measures the histogram, and the distinct
// marginal tables the parts measure (see Release.Needs).
func (ps *Parts) Needs() (histogram bool, sets [][]int) {
	seen := map[string]bool{}
	for _, p := range ps.parts {
		h, ss := p.Release.Needs()
		histogram = histogram || h
		for _, s := range ss {
			if key := setKey(s); !seen[key] {
				seen[key] = true
				sets = append(sets, s)
			}
		}
	}
	return histogram, sets
}

// Parts returns the prepared parts, in the order Run measures them.
func (ps *Parts) Parts() []Part { return ps.parts }

// Workload returns the whole workload the parts answer.
func (ps *Parts) Workload() *domain.Kron { return ps.w }

// Budget returns the whole budget the parts spend together.
func (ps *Parts) Budget() Budget { return ps.b }

// MemoryEstimate is the largest part's Release.MemoryEstimate (the parts
// run one at a time), plus the histogram when a part measures it.
func (ps *Parts) MemoryEstimate(pp Publishable) float64 {
	need := 0.0
	for _, p := range ps.parts {
		need = math.Max(need, p.Release.MemoryEstimate(pp))
	}
	if h, _ := ps.Needs(); h {
		need += 8 * records.CellsFloat(ps.w.Attributes())
	}
	return need
}

// Run measures every part in turn (Release.Run) and gathers their answers
// per term of the whole workload. beforeNoise, if not nil, runs once, as
// the last step before the first part draws any noise (charge the whole
// budget there: the parts' budgets add up to it); the later parts do not
// call it again. The parts' consistency reports are merged; Estimator is
// the one part's estimator report, Estimators the per-part ones of a
// release in several parts.
func (ps *Parts) Run(ctx context.Context, d Data, src *noise.Sampler, beforeNoise func() error, pp Publishable) (*Result, error) {
	if src == nil {
		return nil, errorf("no noise sampler")
	}
	n := len(ps.w.Terms())
	res := &Result{Answers: make([][]float64, n), Std: make([][]float64, n), Private: src.Private()}
	charged := false
	once := func() error {
		if charged || beforeNoise == nil {
			return nil
		}
		if err := beforeNoise(); err != nil {
			return err
		}
		charged = true
		return nil
	}
	for _, part := range ps.parts {
		pres, err := part.Release.Run(ctx, d, src, once, pp)
		if err != nil {
			return nil, err
		}
		for i, t := range part.Terms {
			res.Answers[t], res.Std[t] = pres.Answers[i], pres.Std[i]
		}
		res.PostProcessed = pres.PostProcessed
		res.Consistency = mergeConsistency(res.Consistency, pres.Consistency)
		if pres.Estimator != nil {
			if len(ps.parts) == 1 {
				res.Estimator = pres.Estimator
			} else {
				res.Estimators = append(res.Estimators, pres.Estimator)
			}
		}
	}
	return res, nil
}

// mergeConsistency combines the consistency reports of the parts of a
// split over terms (each part's tables are made consistent among
// themselves): the largest remaining inconsistency and negativity, the
// iterations summed, converged only if every part converged.
func mergeConsistency(a, b *Consistency) *Consistency {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	m := *a
	const scope = " (per term: --split terms releases every term on its own, so tables of different terms are not made consistent with each other)"
	if !strings.HasSuffix(m.Method, scope) {
		m.Method += scope
	}
	m.Iterations += b.Iterations
	if b.Status.Err() != nil { // converged only if both parts are
		m.Status = b.Status
	}
	m.Tables += b.Tables
	m.MaxInconsistency = math.Max(a.MaxInconsistency, b.MaxInconsistency)
	m.MaxNegativity = math.Max(a.MaxNegativity, b.MaxNegativity)
	if b.MaxInconsistencyBeforeRounding != nil && (m.MaxInconsistencyBeforeRounding == nil || *b.MaxInconsistencyBeforeRounding > *m.MaxInconsistencyBeforeRounding) {
		m.MaxInconsistencyBeforeRounding = b.MaxInconsistencyBeforeRounding
	}
	m.Tolerance = math.Max(a.Tolerance, b.Tolerance)
	if a.GrandTotal != b.GrandTotal {
		m.GrandTotal = 0 // the parts' totals differ; each part has its own
	}
	return &m
}

// pureOrZCDP reports whether b composes by addition over union parts.
func pureOrZCDP(b Budget) bool {
	return b.Kind() == calibrate.Concentrated || b.Kind() == calibrate.Pure
}
