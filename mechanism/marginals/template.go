package marginals

import (
	"context"
	"math"
	"time"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/workload"
	"github.com/dpsolve/dpsolve/status"
)

// TemplateName is the marginals template's name in plan's registry and on
// the command line (--template marginals).
const TemplateName = "marginals"

// Template is plan's "marginals" template: for a structured workload whose
// terms are all marginals (marginals terms, or product terms whose every
// block is identity or total), the optimal residual plan of this package.
// Its Result's Strategy.Other is the *Plan. The registered instance
// minimizes the total squared error (Sum); a caller wanting the
// max-variance plan uses Template{Objective: Max} directly.
type Template struct {
	// Objective is Sum (default) or Max.
	Objective Objective
	// Options tunes the Max solver (nil: defaults).
	Options *Options
}

func init() {
	if err := plan.Register(Template{Objective: Sum}); err != nil {
		panic(err) // a second registration is a programming error
	}
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

// Sets converts a structured workload into this package's sets: every
// marginal of a marginals term, and every product term whose blocks are all
// identity (the attribute is in the set) or total (it is not), each with
// its term's weight. A term of any other kind is an error wrapping ErrInput
// that names it. terms[i] is the index of the term set i came from.
func Sets(w *workload.Kron) (sizes []int, sets []Set, terms []int, err error) {
	attrs := w.Attributes()
	sizes = make([]int, len(attrs))
	for i, a := range attrs {
		sizes[i] = a.Size
	}
	for j, t := range w.Terms() {
		switch t.Kind {
		case workload.TermMarginals:
			for _, s := range t.Sets {
				sets = append(sets, Set{Attrs: s, Weight: t.Weight})
				terms = append(terms, j)
			}
		default:
			for _, p := range t.Products {
				var s []int
				for i, b := range p.Blocks {
					switch b.Kind {
					case workload.BlockIdentity:
						s = append(s, i)
					case workload.BlockTotal:
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
// objective), its LowerBound the SVD bound over every strategy, which the
// Sum plan attains; TermErrors sum the term's marginals. With
// opt.Privacy = plan.Pure it returns the pure ε-DP PurePlan (Laplace noise
// on every marginal table, GLS reconstruction) as Strategy.Other; its
// Objective is per unit Laplace variance 2/ε² at L1 sensitivity 1, and no
// lower bound is known (NaN).
func (tp Template) Plan(ctx context.Context, w *workload.Kron, opt plan.Options) (*plan.Result, error) {
	start := time.Now()
	if opt.Privacy != "" && opt.Privacy != plan.Gaussian && opt.Privacy != plan.Pure {
		return nil, errorf("the marginals template plans %q or %q privacy, not %q", plan.Gaussian, plan.Pure, opt.Privacy)
	}
	sizes, sets, terms, err := Sets(w)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if opt.Privacy == plan.Pure {
		return tp.planPure(w, sizes, sets, terms, opt, start)
	}
	p, err := NewPlanContext(ctx, sizes, sets, tp.Objective, tp.Options)
	if err != nil {
		return nil, err
	}
	res := &plan.Result{
		Template:         TemplateName,
		Strategy:         &plan.Strategy{Template: TemplateName, Privacy: plan.Gaussian, Other: p},
		Objective:        p.TotalSquaredError,
		LowerBound:       svdBound(p.Sizes, p.Sets, p.lat),
		LowerBoundSource: "SVD bound (Σσᵢ(W))²/n, attained by the residual plan",
		Status:           status.Converged,
		DenseObjective:   math.NaN(),
		AboveDense:       math.NaN(),
	}
	errs := make([]float64, len(p.Marginals))
	for i, m := range p.Marginals {
		errs[i] = m.TotalSquaredError
	}
	return finish(res, w, terms, errs, opt, start), nil
}

// planPure is Plan for pure ε-DP: the PurePlan of the workload's sets.
func (tp Template) planPure(w *workload.Kron, sizes []int, sets []Set, terms []int, opt plan.Options, start time.Time) (*plan.Result, error) {
	pp, err := NewPurePlan(sizes, sets, tp.Objective)
	if err != nil {
		return nil, err
	}
	res := &plan.Result{
		Template:       TemplateName,
		Strategy:       &plan.Strategy{Template: TemplateName, Privacy: plan.Pure, Other: pp},
		Objective:      pp.TotalSquaredError,
		LowerBound:     math.NaN(),
		Status:         status.Converged,
		DenseObjective: math.NaN(),
		AboveDense:     math.NaN(),
	}
	errs := make([]float64, len(pp.Marginals))
	for i, m := range pp.Marginals {
		errs[i] = m.TotalSquaredError
	}
	return finish(res, w, terms, errs, opt, start), nil
}

// finish fills res's per-term errors (marginal i, of error errs[i],
// belongs to term terms[i]) and its time, and reports it done.
func finish(res *plan.Result, w *workload.Kron, terms []int, errs []float64, opt plan.Options, start time.Time) *plan.Result {
	res.TermErrors = make([]plan.TermError, len(w.Terms()))
	for j, t := range w.Terms() {
		res.TermErrors[j] = plan.TermError{Term: t.Name, Queries: t.Queries()}
	}
	for i, e := range errs {
		res.TermErrors[terms[i]].Error += e
	}
	res.Seconds = time.Since(start).Seconds()
	plan.ReportDone(opt.Progress, plan.Stage(TemplateName), res)
	return res
}
