package marginals

import (
	"context"
	"math"
	"time"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/status"
)

// TemplateName is the marginals template's name in package planner's list
// and on the command line (--template marginals).
const TemplateName = "marginals"

// Template is plan's "marginals" template. For a structured workload whose
// terms are all marginals (marginals terms, or product terms whose every
// block is identity or total) it is the optimal residual plan of this
// package (Strategy.Other a *Plan); under pure ε the better of the
// Laplace plan of the workload's own tables (*PurePlan) and the family
// plan over every table (*FamilyPlan). Any other workload (prefix, ranges,
// identity-plus-total or matrix blocks) is planned in the marginals family
// (*FamilyPlan; see NewFamilyPlan). The instance package planner lists
// minimizes the total squared error (Sum); a caller wanting the
// max-variance plan of a marginal workload uses Template{Objective: Max}
// directly.
type Template struct {
	// Objective is Sum (default) or Max.
	Objective Objective
	// Options tunes the Max solver (nil: defaults).
	Options *Options
}

// ParseObjective reads a command line's --objective: "sum" (or "") or
// "max"; anything else is an error wrapping ErrInput.
func ParseObjective(s string) (Objective, error) {
	switch Objective(s) {
	case "", Sum:
		return Sum, nil
	case Max:
		return Max, nil
	}
	return "", errorf("objective must be %q or %q, got %q", Sum, Max, s)
}

// Name returns "marginals".
func (Template) Name() string { return TemplateName }

// Certifies implements plan.Certifier: under Gaussian noise the sum plan
// of a workload of marginals is the residual closed form, which attains
// the SVD bound over every strategy, so the portfolio runs it first and
// stops there. Pure plans, max plans and family plans of other workloads
// carry no such certificate.
func (tp Template) Certifies(w *domain.Kron, opt plan.Options) bool {
	if tp.Objective == Max || (opt.Noise != "" && opt.Noise != calibrate.Gaussian) {
		return false
	}
	for _, t := range w.Terms() {
		if t.Kind == domain.TermMarginals {
			continue
		}
		for _, p := range t.Products {
			for _, b := range p.Blocks {
				if b.Kind != domain.BlockIdentity && b.Kind != domain.BlockTotal {
					return false
				}
			}
		}
	}
	return true
}

// Sets converts a structured workload into this package's sets: every
// marginal of a marginals term, and every product term whose blocks are all
// identity (the attribute is in the set) or total (it is not), each with
// its term's weight. A term of any other kind is an error wrapping ErrInput
// that names it. terms[i] is the index of the term set i came from.
func Sets(w *domain.Kron) (sizes []int, sets []Set, terms []int, err error) {
	attrs := w.Attributes()
	sizes = make([]int, len(attrs))
	for i, a := range attrs {
		sizes[i] = a.Size
	}
	for j, t := range w.Terms() {
		switch t.Kind {
		case domain.TermMarginals:
			for _, s := range t.Sets {
				sets = append(sets, Set{Attrs: s, Weight: t.Weight})
				terms = append(terms, j)
			}
		default:
			for _, p := range t.Products {
				var s []int
				for i, b := range p.Blocks {
					switch b.Kind {
					case domain.BlockIdentity:
						s = append(s, i)
					case domain.BlockTotal:
					default:
						return nil, nil, nil, errorf("term %q is not a marginal: attribute %q has block %s (the marginals template takes only marginals: identity and total blocks)", t.Name, attrs[i].Name, b)
					}
				}
				sets = append(sets, Set{Attrs: s, Weight: t.Weight})
				terms = append(terms, j)
			}
		}
	}
	return sizes, sets, terms, nil
}

// Plan implements plan.Template. The Result's Objective is the expected
// total squared error per unit noise at sensitivity 1 (for either
// objective); TermErrors sum the term's marginals or products. Gaussian
// plans of marginals carry the SVD bound, which they attain, as LowerBound;
// pure plans of marginals carry it too (the Gaussian optimum bounds every
// pure strategy) and the family's own bound (FamilyBound); family plans of
// other workloads carry only FamilyBound (LowerBound NaN). Pure objectives
// are per unit Laplace variance 2/ε² at L1 sensitivity 1.
func (tp Template) Plan(ctx context.Context, w *domain.Kron, opt plan.Options) (*plan.Result, error) {
	start := time.Now()
	if opt.Noise != "" && opt.Noise != calibrate.Gaussian && opt.Noise != calibrate.Laplace {
		return nil, errorf("the marginals template plans %q or %q noise, not %q", calibrate.Gaussian, calibrate.Laplace, opt.Noise)
	}
	sizes, sets, terms, err := Sets(w)
	if err != nil {
		if tp.Objective == Max {
			return nil, err
		}
		// Not only marginals: the marginals family for any blocks.
		return tp.planFamily(w, opt, start)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if opt.Noise == calibrate.Laplace {
		return tp.planPure(w, sizes, sets, terms, opt, start)
	}
	p, err := NewPlanContext(ctx, sizes, sets, tp.Objective, tp.Options)
	if err != nil {
		return nil, err
	}
	res := &plan.Result{
		Template:         TemplateName,
		Strategy:         &plan.Plan{Template: TemplateName, Noise: calibrate.Gaussian, Other: p},
		Objective:        p.TotalSquaredError,
		LowerBound:       svdBound(p.Sizes, p.Sets, p.lat),
		LowerBoundSource: "SVD bound (Σσᵢ(W))²/n, attained by the residual plan",
		FamilySource:     "the residual closed form (optimal over all strategies)",
		Status:           status.Converged,
		DenseObjective:   math.NaN(),
		AboveDense:       math.NaN(),
	}
	res.FamilyBound = res.LowerBound
	errs := make([]float64, len(p.Marginals))
	for i, m := range p.Marginals {
		errs[i] = m.TotalSquaredError
	}
	return finish(res, w, terms, errs, opt, start), nil
}

// planPure is Plan for pure ε-DP on a workload of marginals: the PurePlan
// of the workload's own tables and, for the Sum objective, the family plan
// over every table, started from the PurePlan's weights among others; the
// family plan is kept when it is lower (it usually is: it may measure
// tables the workload never names, the full table among them) and
// opt.Accept takes it. Its lower
// bound is the residual closed form (the SVD bound): the Gaussian optimum
// over every strategy, which no L1-sensitivity-1 strategy beats (the L1
// unit ball lies inside the L2 one).
func (tp Template) planPure(w *domain.Kron, sizes []int, sets []Set, terms []int, opt plan.Options, start time.Time) (*plan.Result, error) {
	pp, err := NewPurePlan(sizes, sets, tp.Objective)
	if err != nil {
		return nil, err
	}
	res := &plan.Result{
		Template:         TemplateName,
		Strategy:         &plan.Plan{Template: TemplateName, Noise: calibrate.Laplace, Other: pp},
		Objective:        pp.TotalSquaredError,
		LowerBound:       svdBound(pp.base.Sizes, pp.base.Sets, pp.base.lat) * (1 - 1e-12),
		LowerBoundSource: "SVD bound (Σσᵢ(W))²/n: the Gaussian optimum, below every pure strategy",
		Status:           status.Converged,
		DenseObjective:   math.NaN(),
		AboveDense:       math.NaN(),
	}
	if tp.Objective == Max {
		res.LowerBound, res.LowerBoundSource = math.NaN(), ""
	} else {
		extra := make([]WeightedTable, len(pp.Tables))
		for i, tb := range pp.Tables {
			extra[i] = WeightedTable{Attrs: tb.Attrs, Weight: 1 / tb.Scale}
		}
		fp, err := newFamilyPlan(w, true, extra)
		if err != nil {
			return nil, err
		}
		res.FamilyBound, res.FamilySource = fp.FamilyBound, pureFamilySource
		fs := &plan.Plan{Template: TemplateName, Noise: calibrate.Laplace, Other: fp}
		if fp.TotalSquaredError < pp.TotalSquaredError*(1-1e-9) && opt.Accepts(fs) == nil {
			res.Strategy, res.Objective = fs, fp.TotalSquaredError
			res.Sweeps = fp.Iterations
			return finishTerms(res, w, fp.TermErrors, opt, start), nil
		}
	}
	errs := make([]float64, len(pp.Marginals))
	for i, m := range pp.Marginals {
		errs[i] = m.TotalSquaredError
	}
	return finish(res, w, terms, errs, opt, start), nil
}

// pureFamilySource describes the pure family's bound.
const pureFamilySource = "weighted marginal tables (every attribute subset): L2 relaxation Σθ² ≤ 1 (Frank–Wolfe bound) and the residual closed form"

// planFamily is Plan for a workload that is not only marginals: the
// marginals family plan (residual measurements under Gaussian noise,
// weighted marginal tables under pure ε). Its lower bound holds over the
// family only (FamilyBound; LowerBound is unknown, NaN): a workload of
// prefixes or ranges may be answered better outside it.
func (tp Template) planFamily(w *domain.Kron, opt plan.Options, start time.Time) (*plan.Result, error) {
	pure := opt.Noise == calibrate.Laplace
	fp, err := newFamilyPlan(w, pure, nil)
	if err != nil {
		return nil, err
	}
	privacy := calibrate.Gaussian
	source := "residual family (closed form, optimal in the family)"
	if pure {
		privacy, source = calibrate.Laplace, pureFamilySource
	}
	res := &plan.Result{
		Template:       TemplateName,
		Strategy:       &plan.Plan{Template: TemplateName, Noise: privacy, Other: fp},
		Objective:      fp.TotalSquaredError,
		LowerBound:     math.NaN(),
		FamilyBound:    fp.FamilyBound,
		FamilySource:   source,
		Sweeps:         fp.Iterations,
		Status:         status.Converged,
		DenseObjective: math.NaN(),
		AboveDense:     math.NaN(),
	}
	return finishTerms(res, w, fp.TermErrors, opt, start), nil
}

// finishTerms is finish with the per-term errors given directly.
func finishTerms(res *plan.Result, w *domain.Kron, errs []float64, opt plan.Options, start time.Time) *plan.Result {
	terms := make([]int, len(errs))
	for j := range terms {
		terms[j] = j
	}
	return finish(res, w, terms, errs, opt, start)
}

// finish fills res's per-term errors (marginal i, of error errs[i],
// belongs to term terms[i]) and its time, and reports it done.
func finish(res *plan.Result, w *domain.Kron, terms []int, errs []float64, opt plan.Options, start time.Time) *plan.Result {
	res.TermErrors = make([]plan.TermUnitError, len(w.Terms()))
	for j, t := range w.Terms() {
		res.TermErrors[j] = plan.TermUnitError{Term: t.Name, Queries: t.Queries()}
	}
	for i, e := range errs {
		res.TermErrors[terms[i]].Error += e
	}
	res.Seconds = time.Since(start).Seconds()
	plan.ReportDone(opt.Progress, plan.Stage(TemplateName), res)
	return res
}
