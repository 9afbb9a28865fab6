package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

func init() {
	for _, t := range []Template{Kron{}, Union{}, Dense{}, Best{}} {
		if err := Register(t); err != nil {
			panic(err) // a programming error: two built-ins with one name
		}
	}
}

// Kron is the template OPT⊗: one Kronecker product ⊗ᵢAᵢ (see solver.kron).
type Kron struct{}

// Name returns "kron".
func (Kron) Name() string { return "kron" }

// Plan returns the best Kronecker strategy for w.
func (Kron) Plan(ctx context.Context, w *workload.Kron, opt Options) (*Result, error) {
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
	per := map[*workload.Product]float64{}
	for pi, p := range prods {
		per[p] = sol.perProd[pi]
	}
	res := &Result{
		Template:       "kron",
		Strategy:       &Strategy{Template: "kron", Privacy: s.o.Privacy, Factors: s.factors(sol.blocks)},
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

// Union is the template OPT₊: a weighted stack of Kronecker strategies,
// part k answering its terms from its own measurements. With each part's
// error Eₖ at weight 1, the error at weight wₖ is Eₖ/wₖ²; under Σ wₖ² = 1
// (L2 sensitivity 1) the best weights are wₖ² = √Eₖ/Σₗ√Eₗ and the total is
// (Σₖ √Eₖ)² (Pure, Σ wₖ = 1: wₖ ∝ Eₖ^{1/3}, total (Σ Eₖ^{1/3})³). The
// grouping is the best of: every term its own part; terms grouped by the
// attributes they query (their non-total blocks); all terms in one part
// (which is the kron template's strategy, so union is never worse than
// kron); then greedy pairwise merges of the best grouping while they help.
type Union struct{}

// Name returns "union".
func (Union) Name() string { return "union" }

// Plan returns the best union-of-Kronecker strategy found for w.
func (Union) Plan(ctx context.Context, w *workload.Kron, opt Options) (*Result, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return planUnion(ctx, newSolver(w, o))
}

// maxMergeEvals caps the greedy merge phase's group evaluations.
const maxMergeEvals = 64

func planUnion(ctx context.Context, s *solver) (*Result, error) {
	start := time.Now()
	terms := s.w.Terms()
	nt := len(terms)
	single := make([][]int, nt)
	for j := range single {
		single[j] = []int{j}
	}
	bySig := map[string][]int{}
	var sigs []string
	for j, t := range terms {
		var used []string
		for i, a := range s.attrs {
			for _, p := range t.Products {
				if p.Blocks[i].Kind != workload.BlockTotal {
					used = append(used, a.Name)
					break
				}
			}
		}
		sig := strings.Join(used, "\x00")
		if _, ok := bySig[sig]; !ok {
			sigs = append(sigs, sig)
		}
		bySig[sig] = append(bySig[sig], j)
	}
	var bySigGroups [][]int
	for _, sig := range sigs {
		bySigGroups = append(bySigGroups, bySig[sig])
	}
	candidates := [][][]int{single, bySigGroups, {seqInts(nt)}}
	best := math.Inf(1)
	var bestG [][]int
	var bestE []float64
	for _, g := range candidates {
		total, es, err := s.groupingError(ctx, g, start)
		if err != nil {
			return nil, err
		}
		if total < best {
			best, bestG, bestE = total, g, es
		}
	}
	// Greedy merges: join the two parts whose merge lowers the total most.
	evals := 0
	for len(bestG) > 1 && evals < maxMergeEvals {
		improved := false
		var nextG [][]int
		var nextE []float64
		for a := 0; a < len(bestG) && evals < maxMergeEvals; a++ {
			for b := a + 1; b < len(bestG) && evals < maxMergeEvals; b++ {
				merged := append(append([]int(nil), bestG[a]...), bestG[b]...)
				sort.Ints(merged)
				em, err := s.groupError(ctx, merged, start)
				if err != nil {
					return nil, err
				}
				evals++
				es := []float64{em}
				g := [][]int{merged}
				for c := range bestG {
					if c != a && c != b {
						es = append(es, bestE[c])
						g = append(g, bestG[c])
					}
				}
				if total := combine(es, s.o.Privacy); total < best*(1-1e-12) {
					best, nextG, nextE, improved = total, g, es, true
				}
			}
		}
		if !improved {
			break
		}
		bestG, bestE = nextG, nextE
	}
	// A part with no error (only zero-weight terms) would get weight 0: its
	// terms join the part with the largest error instead (they cost nothing
	// wherever they are answered).
	big := 0
	for gi, e := range bestE {
		if e > bestE[big] {
			big = gi
		}
	}
	var keptG [][]int
	var keptE []float64
	for gi, g := range bestG {
		if bestE[gi] > 0 || gi == big {
			keptG, keptE = append(keptG, append([]int(nil), g...)), append(keptE, bestE[gi])
		}
	}
	for gi, g := range bestG {
		if !(bestE[gi] > 0) && gi != big {
			for ki := range keptG {
				if keptE[ki] == bestE[big] {
					keptG[ki] = append(keptG[ki], g...)
					sort.Ints(keptG[ki])
					break
				}
			}
		}
	}
	bestG, bestE = keptG, keptE
	// Build the strategy from the chosen grouping.
	weights := partWeights(bestE, s.o.Privacy)
	per := map[*workload.Product]float64{}
	strat := &Strategy{Template: "union", Privacy: s.o.Privacy}
	theta := 0.0
	sweeps := 0
	for gi, g := range bestG {
		prods := groupProducts(s.w, g)
		sol, err := s.kron(ctx, prods, "union", start)
		if err != nil {
			return nil, err
		}
		theta = math.Max(theta, sol.theta)
		sweeps += sol.sweeps
		part := Part{Weight: weights[gi], Factors: s.factors(sol.blocks)}
		for _, j := range g {
			part.Terms = append(part.Terms, terms[j].Name)
		}
		scale := 1 / (weights[gi] * weights[gi])
		for pi, p := range prods {
			per[p] = sol.perProd[pi] * scale
		}
		strat.Parts = append(strat.Parts, part)
	}
	res := &Result{
		Template: "union", Strategy: strat, Objective: best, TermErrors: s.termErrors(per),
		Sweeps: sweeps, Status: status.Converged, Regularization: theta,
		DenseObjective: math.NaN(), AboveDense: math.NaN(),
	}
	if err := s.setBound(ctx, res); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	s.done(res)
	return res, nil
}

// groupError is the error at weight 1 of the best Kronecker strategy for
// the terms g.
func (s *solver) groupError(ctx context.Context, g []int, start time.Time) (float64, error) {
	sol, err := s.kron(ctx, groupProducts(s.w, g), "union", start)
	if err != nil {
		return 0, err
	}
	return sol.obj, nil
}

func (s *solver) groupingError(ctx context.Context, groups [][]int, start time.Time) (float64, []float64, error) {
	es := make([]float64, len(groups))
	for gi, g := range groups {
		e, err := s.groupError(ctx, g, start)
		if err != nil {
			return 0, nil, err
		}
		es[gi] = e
	}
	return combine(es, s.o.Privacy), es, nil
}

// combine is the total error with the closed-form part weights.
func combine(es []float64, privacy Privacy) float64 {
	p := 2.0 // Σ w² = 1
	if privacy == Pure {
		p = 3 // Σ w = 1
	}
	s := 0.0
	for _, e := range es {
		s += math.Pow(e, 1/p)
	}
	return math.Pow(s, p)
}

// partWeights are the optimal weights for part errors es (see Union).
func partWeights(es []float64, privacy Privacy) []float64 {
	p := 2.0
	if privacy == Pure {
		p = 3
	}
	s := 0.0
	for _, e := range es {
		s += math.Pow(e, 1/p)
	}
	w := make([]float64, len(es))
	for i, e := range es {
		if privacy == Pure {
			w[i] = math.Pow(e, 1/p) / s
		} else {
			w[i] = math.Sqrt(math.Sqrt(e) / s)
		}
	}
	return w
}

func groupProducts(w *workload.Kron, g []int) []*workload.Product {
	var out []*workload.Product
	for _, j := range g {
		out = append(out, w.Terms()[j].Products...)
	}
	return out
}

func seqInts(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Dense is the reference template: the full newton solve on the explicit
// Gram, for domains of at most Options.DenseMaxCells cells (default 4096),
// with its certificate.
type Dense struct{}

// Name returns "dense".
func (Dense) Name() string { return "dense" }

// Plan solves the dense problem, or returns an error wrapping ErrInput for
// a domain above the limit.
func (Dense) Plan(ctx context.Context, w *workload.Kron, opt Options) (*Result, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Privacy == Pure {
		return nil, inputerr.Errorf("plan", "the dense template is for Gaussian noise only")
	}
	return planDense(ctx, w, o)
}

func planDense(ctx context.Context, w *workload.Kron, o Options) (*Result, error) {
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
	xp, err := inverse(nr.X)
	if err != nil {
		return nil, err
	}
	xinv := mat.NewSymDense(n, xp)
	tes := make([]TermError, len(w.Terms()))
	for j, t := range w.Terms() {
		tes[j] = TermError{Term: t.Name, Queries: t.Queries()}
		for _, p := range t.Products {
			fs := make([]*mat.SymDense, len(p.Blocks))
			for i, b := range p.Blocks {
				fs[i] = b.Gram()
			}
			g := workload.KronSym(fs...)
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
		Template: "dense", Strategy: &Strategy{Template: "dense", Privacy: Gaussian, Matrix: a},
		Objective: nr.Objective, LowerBound: nr.LowerBound, LowerBoundSource: "dense newton certificate",
		TermErrors: tes, Status: nr.Status, Regularization: nr.Regularization,
		DenseObjective: nr.Objective, AboveDense: 0,
		Seconds: time.Since(start).Seconds(),
	}
	ReportDone(o.Progress, Stage("dense"), res)
	return res, nil
}

// Best is the portfolio: it runs kron and union (sharing their block
// solves) and, on domains of at most BestDenseCells cells, dense, and
// returns the lowest-error strategy, with every template's figures in
// Result.Tried.
type Best struct{}

// certifiedGap: a plan whose certified relative gap is at most this is
// optimal for the portfolio's purposes (newton's default tolerance).
const certifiedGap = 1e-8

// BestDenseCells is the largest domain on which Best also runs the dense
// template (about 1 s of newton at n = 1024 on a 2-core machine; n = 4096
// takes minutes, so larger domains need --template dense explicitly).
const BestDenseCells = 1024

// Name returns "best".
func (Best) Name() string { return "best" }

// Plan runs the portfolio.
func (Best) Plan(ctx context.Context, w *workload.Kron, opt Options) (*Result, error) {
	start := time.Now()
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	s := newSolver(w, o)
	var tried []Tried
	var best *Result
	var results []*Result
	run := func(name string, f func() (*Result, error)) error {
		t0 := time.Now()
		r, err := f()
		tr := Tried{Template: name, Objective: math.NaN(), Seconds: time.Since(t0).Seconds()}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			tr.Err = err.Error()
		} else {
			tr.Objective = r.Objective
			results = append(results, r)
			// Ties (to 1e-9 relative) keep the earlier, simpler template:
			// union's one-part candidate is kron's strategy.
			if best == nil || r.Objective < best.Objective*(1-1e-9) {
				best = r
			}
		}
		tried = append(tried, tr)
		return nil
	}
	if err := run("kron", func() (*Result, error) { return planKron(ctx, s) }); err != nil {
		return nil, err
	}
	if best != nil && best.LowerBound >= best.Objective*(1-certifiedGap) {
		// kron is certified optimal over all strategies (a single product
		// term): no template can do better.
		tried = append(tried, Tried{Template: "union", Objective: math.NaN(), Err: "skipped: kron's plan is certified optimal"})
	} else if err := run("union", func() (*Result, error) { return planUnion(ctx, s) }); err != nil {
		return nil, err
	}
	var dense *Result
	if w.Cells() <= BestDenseCells && o.Privacy == Gaussian {
		if err := run("dense", func() (*Result, error) {
			r, err := planDense(ctx, w, o)
			dense = r
			return r, err
		}); err != nil {
			return nil, err
		}
	}
	// Templates registered by other packages (the marginals template) join
	// the portfolio; one that does not apply to w (ErrInput) is left out
	// of Tried.
	for _, name := range Names() {
		if name == "kron" || name == "union" || name == "dense" || name == "best" {
			continue
		}
		t, lerr := Lookup(name)
		if lerr != nil {
			continue
		}
		notApplicable := false
		if err := run(name, func() (*Result, error) {
			r, err := t.Plan(ctx, w, opt)
			notApplicable = err != nil && errors.Is(err, ErrInput) && ctx.Err() == nil
			return r, err
		}); err != nil {
			return nil, err
		}
		if notApplicable {
			tried = tried[:len(tried)-1]
		}
	}
	if best == nil {
		return nil, fmt.Errorf("plan: no template succeeded: %v", tried)
	}
	out := *best
	out.Tried = tried
	// Every template's bound holds for all strategies: keep the highest.
	for _, r := range results {
		if r.LowerBound > out.LowerBound || math.IsNaN(out.LowerBound) {
			out.LowerBound, out.LowerBoundSource = r.LowerBound, r.LowerBoundSource
		}
	}
	if dense != nil {
		compareDense(&out, dense)
	}
	// The portfolio's own final event (its templates sent theirs), with
	// the chosen template as Note.
	if opt.Progress.Enabled() {
		opt.Progress(progress.Event{Stage: Stage("best"), Objective: out.Objective, Bound: out.LowerBound,
			Gap: gap(out.Objective, out.LowerBound), Seconds: time.Since(start).Seconds(), Done: true, Note: "template " + out.Template})
	}
	return &out, nil
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

// Run plans w with the named template. On domains of at most CompareCells
// cells it also runs the dense template (Gaussian privacy) and records in
// the result how far the plan is above the certified dense optimum.
func Run(ctx context.Context, w *workload.Kron, template string, opt Options) (*Result, error) {
	res, err := run(ctx, w, template, opt)
	if err == nil && opt.Progress.Enabled() {
		f := progress.Event{Stage: "plan", Objective: res.Objective, Bound: res.LowerBound,
			Gap: gap(res.Objective, res.LowerBound), Seconds: res.Seconds, Done: true, Note: "template " + res.Template}
		opt.Progress(f)
	}
	return res, err
}

// run is Run without the final progress event.
func run(ctx context.Context, w *workload.Kron, template string, opt Options) (*Result, error) {
	t, err := Lookup(template)
	if err != nil {
		return nil, err
	}
	res, err := t.Plan(ctx, w, opt)
	if err != nil || template == "best" || template == "dense" {
		return res, err
	}
	o, _ := opt.withDefaults()
	if w.Cells() <= CompareCells && o.Privacy == Gaussian {
		dense, derr := planDense(ctx, w, o)
		if derr != nil {
			return res, derr
		}
		compareDense(res, dense)
	}
	return res, nil
}
