package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
)

// Kron is the template OPT⊗: one Kronecker product ⊗ᵢAᵢ (see solver.kron).
type Kron struct{}

// Name returns "kron".
func (Kron) Name() string { return "kron" }

// Certifies reports whether w is a single product term, which kron solves
// exactly with the product of the per-attribute certificates as a bound
// over every strategy (see Certifier).
func (Kron) Certifies(w *domain.Kron, _ Options) bool { return len(w.Products()) == 1 }

// Plan returns the best Kronecker strategy for w.
func (Kron) Plan(ctx context.Context, w *domain.Kron, opt Options) (*Result, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return planKron(ctx, newSolver(w, o))
}

func planKron(ctx context.Context, s *solver) (*Result, error) {
	start := time.Now()
	prods := s.w.Products()
	sol, err := s.kron(ctx, prods, "kron", start)
	if sol == nil {
		return nil, err
	}
	per := map[*domain.Product]float64{}
	for pi, p := range prods {
		per[p] = sol.perProd[pi]
	}
	res := &Result{
		Template:       "kron",
		Strategy:       &Plan{Template: "kron", Noise: s.o.Noise, Factors: s.factors(sol.blocks)},
		Objective:      sol.obj,
		TermErrors:     s.termErrors(per),
		Sweeps:         sol.sweeps,
		History:        sol.history,
		Status:         sol.status,
		Regularization: sol.theta,
		DenseObjective: math.NaN(),
		AboveDense:     math.NaN(),
	}
	if err == nil {
		if err = s.setBound(ctx, res); err != nil {
			return nil, err
		}
	}
	res.Seconds = time.Since(start).Seconds()
	s.done(res)
	return res, err
}

// setBound sets the product-of-certificates lower bound (see productBound).
// For a single product it is the bound of that product's exact optimum.
func (s *solver) setBound(ctx context.Context, res *Result) error {
	lb, err := s.productBound(ctx, s.w.Products())
	if err != nil {
		return err
	}
	res.LowerBound = lb
	if len(s.w.Products()) == 1 {
		res.LowerBoundSource = "product of the per-attribute certificates"
	} else {
		res.LowerBoundSource = "sum over products of the products of per-attribute certificates"
	}
	return nil
}

func (s *solver) done(res *Result) {
	ReportDone(s.o.Progress, Stage(res.Template), res)
}

// Dense is the reference template: the full newton solve on the explicit
// Gram, for domains of at most Options.DenseMaxCells cells (default 4096),
// with its certificate.
type Dense struct{}

// Name returns "dense".
func (Dense) Name() string { return "dense" }

// Plan solves the dense problem, or returns an error wrapping ErrInput for
// a domain above the limit.
func (Dense) Plan(ctx context.Context, w *domain.Kron, opt Options) (*Result, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Noise == calibrate.Laplace {
		return nil, inputerr.Errorf("plan", "the dense template is for Gaussian noise only")
	}
	return planDense(ctx, w, o)
}

func planDense(ctx context.Context, w *domain.Kron, o Options) (*Result, error) {
	start := time.Now()
	if w.Cells() > o.DenseMaxCells {
		return nil, inputerr.Errorf("plan", "the dense template needs at most %d cells; the domain has %d", o.DenseMaxCells, w.Cells())
	}
	v, err := w.DenseGram(o.DenseMaxCells)
	if err != nil {
		return nil, err
	}
	nr, err := newton.Solve(ctx, v, nil)
	if err == nil && nr.Status == newton.Cancelled {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	n := w.Cells()
	a := mat.NewDense(n, n, nil)
	a.Copy(nr.A)
	// Per-term errors tr(Vⱼ X⁺), one term Gram at a time.
	// X⁺: X⁻¹, or the pseudo-inverse for the exact optimum of a singular
	// Gram, whose range holds every term's (see inverse).
	xp, _, err := inverse(nr.X)
	if err != nil {
		return nil, err
	}
	xinv := mat.NewSymDense(n, xp)
	tes := make([]TermUnitError, len(w.Terms()))
	for j, t := range w.Terms() {
		tes[j] = TermUnitError{Term: t.Name, Queries: t.Queries()}
		for _, p := range t.Products {
			fs := make([]*mat.SymDense, len(p.Blocks))
			for i, b := range p.Blocks {
				fs[i] = b.Gram()
			}
			g := domain.KronSym(fs...)
			e := 0.0
			for r := 0; r < n; r++ {
				for q := 0; q < n; q++ {
					e += g.At(r, q) * xinv.At(r, q)
				}
			}
			tes[j].Error += w.Weight2(p) * e
		}
	}
	res := &Result{
		Template: "dense", Strategy: &Plan{Template: "dense", Noise: calibrate.Gaussian, Matrix: a},
		Objective: nr.Objective, LowerBound: nr.LowerBound, LowerBoundSource: "dense newton certificate",
		TermErrors: tes, Status: nr.Status, Regularization: nr.Regularization,
		DenseObjective: nr.Objective, AboveDense: 0,
		Seconds: time.Since(start).Seconds(),
	}
	ReportDone(o.Progress, Stage("dense"), res)
	return res, nil
}

// Certifier is implemented by a template that can tell, before planning
// and at a negligible cost, that its plan of w will carry a lower bound
// over every strategy equal to its objective (a certified optimum): the
// closed-form marginals plan of a marginals workload under Gaussian noise,
// kron's plan of a single product term. Best runs those first and stops at
// the first certified result; it is an ordering hint only (Best checks the
// result's own bound).
type Certifier interface {
	Certifies(w *domain.Kron, opt Options) bool
}

// Best is the portfolio over the explicit list Templates. It runs first
// the templates that certify w (Certifier), in list order, then the others
// in list order, and stops as soon as a result is certified optimal (its
// lower bound over every strategy is within 1e-8 of its objective), so a
// certified plan costs its own template's time; the rest are listed in
// Result.Tried as skipped. Otherwise it returns the lowest-error strategy
// of all, with every template's figures in Tried. Kron, union and dense
// share their block solves; dense runs only on domains of at most
// BestDenseCells cells under Gaussian noise; union's hybrid parts are the
// Union entry's Hybrid templates; a template that does not apply to w
// (ErrInput) is left out of Tried. The zero value runs kron, union and
// dense; package planner's Best adds the marginals template.
type Best struct {
	// Templates is the portfolio, in order of preference on ties (nil:
	// kron, union, dense). Best entries are ignored.
	Templates []Template
}

// certifiedGap: a plan whose certified relative gap is at most this is
// optimal for the portfolio's purposes (newton's default tolerance).
const certifiedGap = 1e-8

// BestDenseCells is the largest domain on which Best also runs the dense
// template (about 1 s of newton at n = 1024 on a 2-core machine; n = 4096
// takes minutes, so larger domains need --template dense explicitly).
const BestDenseCells = 1024

// Name returns "best".
func (Best) Name() string { return "best" }

// builtin reports whether name is one of this package's templates.
func builtin(name string) bool {
	switch name {
	case "kron", "union", "dense", "best":
		return true
	}
	return false
}

// order returns b's templates in the order Best runs them on w: the
// templates that certify w first, each group in list order.
func (b Best) order(w *domain.Kron, o Options) []Template {
	list := b.Templates
	if list == nil {
		list = []Template{Kron{}, Union{}, Dense{}}
	}
	var first, rest []Template
	for _, t := range list {
		if _, ok := t.(Best); ok {
			continue
		}
		if c, ok := t.(Certifier); ok && c.Certifies(w, o) {
			first = append(first, t)
		} else {
			rest = append(rest, t)
		}
	}
	return append(first, rest...)
}

// Plan runs the portfolio.
func (b Best) Plan(ctx context.Context, w *domain.Kron, opt Options) (*Result, error) {
	start := time.Now()
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	s := newSolver(w, o)
	for _, t := range b.Templates {
		if u, ok := t.(Union); ok {
			s.hybrid = u.Hybrid
		}
	}
	p := &portfolio{ctx: ctx, o: o}
	var dense *Result
	for _, t := range b.order(w, o) {
		if err := p.step(s, w, t, opt, &dense); err != nil {
			return nil, err
		}
	}
	if p.best == nil {
		return nil, fmt.Errorf("plan: no template succeeded: %v", p.tried)
	}
	out := p.result(dense)
	// The plan's time is the portfolio's (each template's own is in Tried).
	out.Seconds = time.Since(start).Seconds()
	// The portfolio's own final event (its templates sent theirs), with
	// the chosen template as Note.
	if opt.Progress.Enabled() {
		opt.Progress(progress.Event{Stage: Stage("best"), Objective: out.Objective, Bound: out.LowerBound,
			Gap: gap(out.Objective, out.LowerBound), Seconds: out.Seconds, Done: true, Note: "template " + out.Template})
	}
	return out, nil
}

// portfolio is Best's record of one run: every template's figures (tried),
// the successful results, and the best accepted result so far.
type portfolio struct {
	ctx     context.Context
	o       Options // the options with defaults
	tried   []Tried
	best    *Result
	results []*Result
}

// certified reports whether the best result so far is certified optimal
// over every strategy.
func (p *portfolio) certified() bool {
	return p.best != nil && p.best.LowerBound >= p.best.Objective*(1-certifiedGap)
}

// step runs template t on w unless a certified result already stands (then
// it records t as skipped); the dense result, when dense runs, goes to
// *dense. opt are the caller's options (other packages' templates get
// them as given).
func (p *portfolio) step(s *solver, w *domain.Kron, t Template, opt Options, dense **Result) error {
	ctx, o := p.ctx, p.o
	runsDense := w.Cells() <= BestDenseCells && o.Noise == calibrate.Gaussian
	if p.certified() {
		if _, ok := t.(Dense); !ok || runsDense {
			p.tried = append(p.tried, Tried{Template: t.Name(), Objective: math.NaN(),
				Err: "skipped: the " + p.best.Template + " plan is certified optimal"})
		}
		return nil
	}
	switch t.(type) {
	case Kron:
		return p.run("kron", func() (*Result, error) { return planKron(ctx, s) })
	case Union:
		return p.run("union", func() (*Result, error) { return planUnion(ctx, s) })
	case Dense:
		if !runsDense {
			return nil
		}
		return p.run("dense", func() (*Result, error) {
			r, err := planDense(ctx, w, o)
			*dense = r
			return r, err
		})
	}
	return p.runOther(s, w, t, opt)
}

// run runs one template and records it in Tried. A template's own error is
// recorded, not returned: the only error returned is a cancellation.
func (p *portfolio) run(name string, f func() (*Result, error)) error {
	t0 := time.Now()
	r, err := f()
	tr := Tried{Template: name, Objective: math.NaN(), Seconds: time.Since(t0).Seconds()}
	if err != nil {
		if p.ctx.Err() != nil {
			return err
		}
		tr.Err = err.Error()
	} else {
		tr.Objective = r.Objective
		p.results = append(p.results, r)
		if aerr := p.o.Accepts(r.Strategy); aerr != nil {
			tr.Err = "not accepted: " + aerr.Error()
		} else if p.best == nil || r.Objective < p.best.Objective*(1-1e-9) {
			// Ties (to 1e-9 relative) keep the earlier, simpler
			// template: union's one-part candidate is kron's strategy.
			p.best = r
		}
	}
	p.tried = append(p.tried, tr)
	return nil
}

// runOther runs a template of another package (the marginals template);
// one that does not apply to w (ErrInput) is left out of Tried. It gets
// the caller's options opt, and union's plan of the whole workload with it
// when union made one.
func (p *portfolio) runOther(s *solver, w *domain.Kron, t Template, opt Options) error {
	ctx, name := p.ctx, t.Name()
	notApplicable := false
	var reused *Result
	if err := p.run(name, func() (*Result, error) {
		if r, ok := s.whole[name]; ok && opt.Accepts(r.Strategy) == nil {
			// union's one-part candidate: the same plan, already made
			// (its own time is reported below).
			reused = r
			return r, nil
		}
		r, err := t.Plan(ctx, w, opt)
		notApplicable = err != nil && errors.Is(err, ErrInput) && ctx.Err() == nil
		return r, err
	}); err != nil {
		return err
	}
	if notApplicable {
		p.tried = p.tried[:len(p.tried)-1]
	} else if reused != nil {
		p.tried[len(p.tried)-1].Seconds = reused.Seconds
	}
	return nil
}

// result is a copy of the best result with the portfolio's Tried, the
// highest lower bound of all templates and the dense comparison.
func (p *portfolio) result(dense *Result) *Result {
	best, o := p.best, p.o
	// A union of one hybrid part is another template's plan of the whole
	// workload: report that template's own result.
	if ps := best.Strategy.Parts; best.Template == "union" && len(ps) == 1 && ps[0].Strategy != nil {
		for _, r := range p.results {
			if r.Template == ps[0].Strategy.Template && r.Objective <= best.Objective*(1+1e-9) && o.Accepts(r.Strategy) == nil {
				best = r
			}
		}
	}
	out := *best
	out.Tried = p.tried
	// Every template's bound holds for all strategies: keep the highest.
	for _, r := range p.results {
		if r.LowerBound > out.LowerBound || math.IsNaN(out.LowerBound) {
			out.LowerBound, out.LowerBoundSource = r.LowerBound, r.LowerBoundSource
		}
	}
	if dense != nil {
		compareDense(&out, dense)
	}
	return &out
}

// compareDense records how far res is above the dense certified optimum and
// takes the dense certificate as the lower bound when it is higher.
func compareDense(res, dense *Result) {
	res.DenseObjective = dense.Objective
	res.AboveDense = (res.Objective - dense.Objective) / dense.Objective
	if math.IsNaN(res.LowerBound) || dense.LowerBound > res.LowerBound {
		res.LowerBound, res.LowerBoundSource = dense.LowerBound, dense.LowerBoundSource
	}
}

// CompareCells is the largest domain on which Run also runs the dense
// template to report how far a structured plan is above the optimum.
const CompareCells = BestDenseCells

// Run plans w with template t and sends a final progress event with Stage
// "plan" (the returned plan's template as Note). On domains of at most
// CompareCells cells it also runs the dense template (Gaussian privacy)
// and records in the result how far the plan is above the certified dense
// optimum (not for t Best or Dense). Package planner's Run looks templates
// up by name.
func Run(ctx context.Context, w *domain.Kron, t Template, opt Options) (*Result, error) {
	res, err := run(ctx, w, t, opt)
	if err == nil && opt.Progress.Enabled() {
		f := progress.Event{Stage: "plan", Objective: res.Objective, Bound: res.LowerBound,
			Gap: gap(res.Objective, res.LowerBound), Seconds: res.Seconds, Done: true, Note: "template " + res.Template}
		opt.Progress(f)
	}
	return res, err
}

// run is Run without the final progress event. The result's Seconds is
// the whole run's time, the dense comparison included; the template's own
// time is in Tried (one entry, unless the template is the portfolio).
func run(ctx context.Context, w *domain.Kron, t Template, opt Options) (*Result, error) {
	start := time.Now()
	if t == nil {
		return nil, inputerr.Errorf("plan", "no template")
	}
	res, err := t.Plan(ctx, w, opt)
	if err != nil || t.Name() == "best" || t.Name() == "dense" {
		return res, err
	}
	if res.Tried == nil {
		res.Tried = []Tried{{Template: res.Template, Objective: res.Objective, Seconds: res.Seconds}}
	}
	o, _ := opt.withDefaults()
	if w.Cells() <= CompareCells && o.Noise == calibrate.Gaussian {
		dense, derr := planDense(ctx, w, o)
		if derr != nil {
			return res, derr
		}
		compareDense(res, dense)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
