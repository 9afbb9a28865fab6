package plan

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// solver holds what the templates of one plan share: the workload, the
// options and the per-(attribute, block) optima, each a certified solve.
type solver struct {
	w      *domain.Kron
	o      Options
	attrs  []domain.Attribute
	single map[singleKey]*block
	groups map[string]*kronSol // BCD results by the set of products
	// exactSweeps solves every block at blockTol from newton's own start
	// (no warm start, no early loose sweeps): the plain descent that tests
	// compare the fast one against.
	exactSweeps bool
	// newtons holds one newton.Solver per attribute, shared by every
	// descent of the plan (the templates run one at a time), so each
	// attribute's workspaces are allocated once.
	newtons []*newton.Solver
	// canon maps each (attribute, block key) to its canonical block (see
	// cb); built on first use, since a portfolio that stops at another
	// package's certified plan never needs it (on 166,751 marginal
	// products of 100 attributes it costs more than that plan).
	canon map[canonKey]*domain.Block
	// whole holds other templates' plans of the whole workload made as a
	// union's one-part candidate (with the plan's privacy and Accept),
	// which the portfolio reuses instead of planning again.
	whole map[string]*Result
	// hybrid lists the templates beyond kron, union and dense that union
	// tries for its parts (Union.Hybrid, or Best's other templates).
	hybrid []Template
}

// newtonFor returns attribute i's newton.Solver.
func (s *solver) newtonFor(i int) *newton.Solver {
	if s.newtons == nil {
		s.newtons = make([]*newton.Solver, len(s.attrs))
	}
	if s.newtons[i] == nil {
		s.newtons[i] = newton.NewSolver(nil)
	}
	return s.newtons[i]
}

type singleKey struct {
	attr int
	b    *domain.Block
}

func newSolver(w *domain.Kron, o Options) *solver {
	return &solver{w: w, o: o, attrs: w.Attributes(), single: map[singleKey]*block{}, groups: map[string]*kronSol{},
		whole: map[string]*Result{}}
}

// buildCanon fills s.canon: the first block of each key per attribute, in
// product order.
func (s *solver) buildCanon() {
	s.canon = map[canonKey]*domain.Block{}
	for _, p := range s.w.Products() {
		for i, b := range p.Blocks {
			k := canonKey{i, b.Key()}
			if _, ok := s.canon[k]; !ok {
				s.canon[k] = b
			}
		}
	}
}

type canonKey struct {
	attr int
	key  string
}

// cb returns the canonical block of attribute i equal to b: blocks with one
// key are one matrix (domain.Block.Key), though every term builds its own
// (each product term its own "total" blocks), so descents compare and
// cache blocks by this pointer.
func (s *solver) cb(i int, b *domain.Block) *domain.Block {
	if s.canon == nil {
		s.buildCanon()
	}
	if c, ok := s.canon[canonKey{i, b.Key()}]; ok {
		return c
	}
	return b
}

// singleOpt returns the optimal strategy for one block's Gram alone.
func (s *solver) singleOpt(ctx context.Context, i int, b *domain.Block) (*block, error) {
	b = s.cb(i, b)
	k := singleKey{i, b}
	if r, ok := s.single[k]; ok {
		return r, nil
	}
	r, err := solveBlock(ctx, b.Gram(), s.o.Noise)
	if err != nil {
		return nil, err
	}
	s.single[k] = r
	return r, nil
}

// singleBound is a certified lower bound on min tr(V X⁺) for one block's
// Gram V: the certificate of its optimum where that is known (closed
// forms, or a newton solve another step already ran), else the SVD bound
// (tr V^{1/2})²/d — the dual certificate at uniform y, one values-only
// eigendecomposition — so that the bound costs no solve of its own.
func (s *solver) singleBound(ctx context.Context, i int, b *domain.Block) (float64, error) {
	b = s.cb(i, b)
	if r, ok := s.single[singleKey{i, b}]; ok {
		return r.lb, nil
	}
	// Restricted to the values the block touches (S) the optimum is the
	// same (see solveOnSupport), and both bounds below are tighter there.
	full := b.Gram()
	var support []int
	for i := 0; i < full.SymmetricDim(); i++ {
		if full.At(i, i) > 0 {
			support = append(support, i)
		}
	}
	if len(support) == 0 {
		return 0, nil
	}
	g := mat.NewSymDense(len(support), nil)
	for a, i := range support {
		for c := a; c < len(support); c++ {
			g.SetSym(a, c, full.At(i, support[c]))
		}
	}
	if classes, c, ok := groupClasses(g); ok {
		return groupsBlock(g.SymmetricDim(), classes, c).lb, nil
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, false) {
		return 0, fmt.Errorf("plan: eigendecomposition of a block Gram failed")
	}
	tr := 0.0
	for _, l := range eig.Values(nil) {
		if l > 0 {
			tr += math.Sqrt(l)
		}
	}
	// Rounding: eigenvalues carry absolute errors ~1e-16·λmax, so the
	// bound is lowered by a relative 1e-12 to stay a bound.
	return tr * tr / float64(g.SymmetricDim()) * (1 - 1e-12), nil
}

// productBound is Σₚ wₚ²·Πᵢ lbᵢ(Vᵢₚ) over the given products: a certified
// lower bound on their total error under every strategy of sensitivity 1
// (not only Kronecker ones). For a fixed strategy the error is additive
// over products, so it is at least the sum of each product's own optimum;
// each product's optimum is bounded by the product of the per-attribute
// certificates, because the dual certificate of a Kronecker Gram factorizes
// (y = ⊗yᵢ; at its best scaling g(⊗yᵢ) = Πᵢ g(yᵢ)).
func (s *solver) productBound(ctx context.Context, prods []*domain.Product) (float64, error) {
	total := 0.0
	for _, p := range prods {
		e := s.w.Weight2(p)
		if e == 0 {
			continue
		}
		for i, b := range p.Blocks {
			lb, err := s.singleBound(ctx, i, b)
			if err != nil {
				return 0, err
			}
			e *= lb
		}
		total += e
	}
	return total, nil
}

// kronSol is a Kronecker strategy for a set of products.
type kronSol struct {
	blocks  []*block
	obj     float64   // Σₚ wₚ²·Πᵢ tr(Vᵢₚ Xᵢ⁺) over the products
	perProd []float64 // each product's error
	history []float64
	sweeps  int
	status  status.Status
	theta   float64
	exact   bool // a single product: the product of certified optima
	// finalTol is the certified relative gap of the last sweep's block
	// solves: blockTol whenever the descent converged.
	finalTol  float64
	sweepTols []float64 // each sweep's block tolerance
	// newtonIters counts the descent's newton iterations (tests, tuning).
	newtonIters int
}

// sweepTolerance is the certified gap asked of the block solves of a sweep
// after one that lowered the objective by the relative amount prev (+Inf
// before the first): 1e-3·prev, within [blockTol, 1e-2]. While the descent is
// far from its fixed point each block optimum is only a waypoint — the next
// sweep moves every other factor by about prev — so solving it to 1e-12
// buys nothing; the looser gap saves Newton iterations (on examples/census
// 16 instead of 31 for the age block, 19 instead of 36 for race, a few
// more sweeps at one or two iterations each). Steps are still kept only if
// they do not raise the objective, so the sweeps stay monotone, and once a
// sweep changes the objective by at most 1e-9 the next is solved at
// blockTol; the descent stops only after such a sweep (see kron).
func sweepTolerance(prev float64) float64 {
	return math.Max(blockTol, math.Min(1e-2, 1e-3*prev))
}

// kron returns the best Kronecker strategy for the products (all of the
// workload's, or a union part's), cached by the product set.
//
// A single product is solved exactly: its objective wₚ²·Πᵢ tr(Vᵢ Xᵢ⁻¹)
// separates, so the product of the per-attribute optima is optimal.
//
// Several products: block coordinate descent. With the other factors fixed
// the objective in Xᵢ is tr(Gᵢ Xᵢ⁺), Gᵢ = Σₚ cₚ·Vᵢₚ with
// cₚ = wₚ²·Π_{l≠i} tr(V_lp X_l⁺) — one certified newton solve. A step is
// kept only if it does not raise the block objective, so the sweep
// objectives never increase; the descent stops when a sweep lowers the
// objective by at most Tol relative to it, or after MaxSweeps. An
// attribute whose block is the same in every product needs no descent: the
// optimum of (Σ cₚ)·V is that of V, whatever the other factors.
//
// Speed: each attribute keeps one newton.Solver across the sweeps, and its
// solve starts from the attribute's previous optimum (warmSolver); early
// sweeps ask a looser certified gap (sweepTolerance) and only a sweep at
// blockTol may end the descent.
func (s *solver) kron(ctx context.Context, prods []*domain.Product, template string, start time.Time) (*kronSol, error) {
	return s.kronWith(ctx, prods, kronCfg{template: template, start: start})
}

// kronCfg configures one descent: the progress stage (template, "" for
// none) and clock, and for union merges a starting point and a sweep cap.
type kronCfg struct {
	template string
	start    time.Time
	// init, when non-nil, holds the starting block of every attribute (the
	// descent keeps it until a solve lowers the block objective, so the
	// result is never worse than init's strategy); such descents are not
	// cached.
	init []*block
	// maxSweeps caps the sweeps (0: Options.MaxSweeps); a capped descent
	// may stop at a loose block tolerance and is not cached either.
	maxSweeps int
}

// kronWith is kron with a configuration.
func (s *solver) kronWith(ctx context.Context, prods []*domain.Product, cfg kronCfg) (*kronSol, error) {
	key := prodKey(s.w, prods)
	cacheable := cfg.init == nil && cfg.maxSweeps == 0
	if r, ok := s.groups[key]; ok && cacheable {
		return r, nil
	}
	maxSweeps := s.o.MaxSweeps
	if cfg.maxSweeps > 0 {
		maxSweeps = cfg.maxSweeps
	}
	var live []*domain.Product
	for _, p := range prods {
		if s.w.Weight2(p) > 0 {
			live = append(live, p)
		}
	}
	k := len(s.attrs)
	sol := &kronSol{blocks: make([]*block, k), status: status.Converged}
	if len(live) == 0 { // only zero-weight terms: nothing to answer
		for i := range sol.blocks {
			sol.blocks[i] = identityBlock(s.attrs[i].Size)
		}
		sol.perProd, sol.exact = make([]float64, len(prods)), true
		return sol, nil
	}
	d, err := s.newDescent(ctx, live, sol, cfg.init)
	if err != nil {
		return nil, err
	}
	err = d.run(ctx, cfg, maxSweeps)
	sol.perProd = d.perProduct(prods)
	if err == nil && cacheable {
		s.groups[key] = sol
	}
	return sol, err
}

// kronDescent is the state of one block coordinate descent (see kron) over
// the live (positive-weight) products: their squared weights w2, the trace
// table t[p][i] = tr(Vᵢₚ Xᵢ⁺) the objective is read from, which attributes
// are fixed at their exact optimum, and each free attribute's warm solver.
type kronDescent struct {
	s     *solver
	sol   *kronSol
	live  []*domain.Product
	w2    []float64
	t     [][]float64
	fixed []bool
	free  int
	warm  []*warmSolver
}

// newDescent sets the starting blocks and fills the trace table; an
// error is one of a fixed attribute's exact solve.
func (s *solver) newDescent(ctx context.Context, live []*domain.Product, sol *kronSol, init []*block) (*kronDescent, error) {
	k := len(s.attrs)
	d := &kronDescent{s: s, sol: sol, live: live, fixed: make([]bool, k), warm: make([]*warmSolver, k)}
	if err := d.startBlocks(ctx, init); err != nil {
		return nil, err
	}
	d.t = make([][]float64, len(live))
	d.w2 = make([]float64, len(live))
	for pi, p := range live {
		d.w2[pi] = s.w.Weight2(p)
		d.t[pi] = make([]float64, k)
	}
	for i := 0; i < k; i++ {
		d.setTraces(i, sol.blocks[i])
	}
	for _, fx := range d.fixed {
		if !fx {
			d.free++
		}
	}
	sol.exact = d.free == 0
	return d, nil
}

// startBlocks fixes every attribute whose block is the same in all live
// products at that block's exact optimum (see kron); the others start
// from init when given, else from the identity.
func (d *kronDescent) startBlocks(ctx context.Context, init []*block) error {
	s, sol, live := d.s, d.sol, d.live
	for i := range s.attrs {
		same := true
		for _, p := range live[1:] {
			same = same && s.cb(i, p.Blocks[i]) == s.cb(i, live[0].Blocks[i])
		}
		if same {
			b, err := s.singleOpt(ctx, i, live[0].Blocks[i])
			if err != nil {
				return err
			}
			sol.blocks[i], d.fixed[i] = b, true
			sol.theta = math.Max(sol.theta, b.theta)
		} else if init != nil {
			sol.blocks[i] = init[i]
		} else {
			sol.blocks[i] = identityBlock(s.attrs[i].Size)
		}
	}
	return nil
}

// setTraces refreshes column i of the trace table for block b; blocks are
// shared between products, so each (attribute, block) trace is computed once.
func (d *kronDescent) setTraces(i int, b *block) {
	memo := map[*domain.Block]float64{}
	for pi, p := range d.live {
		pb := d.s.cb(i, p.Blocks[i])
		v, ok := memo[pb]
		if !ok {
			v = b.trace(pb.Gram())
			memo[pb] = v
		}
		d.t[pi][i] = v
	}
}

// productTerm is live product pi's term wₚ²·Πᵢ tr(Vᵢₚ Xᵢ⁺).
func (d *kronDescent) productTerm(pi int) float64 {
	e := d.w2[pi]
	for _, v := range d.t[pi] {
		e *= v
	}
	return e
}

// objective is the sum of the live products' terms.
func (d *kronDescent) objective() float64 {
	f := 0.0
	for pi := range d.live {
		f += d.productTerm(pi)
	}
	return f
}

// run sweeps until the stopping rule of kron holds or maxSweeps is
// reached, and records the sweeps in sol; an error is a cancellation.
func (d *kronDescent) run(ctx context.Context, cfg kronCfg, maxSweeps int) error {
	s, sol := d.s, d.sol
	f := d.objective()
	var err error
	prevRel := math.Inf(1)
	for sweep := 1; d.free > 0 && sweep <= maxSweeps; sweep++ {
		sweepTol := blockTol
		if d.free > 1 && !s.exactSweeps {
			sweepTol = sweepTolerance(prevRel)
		}
		if err = d.sweep(ctx, sweepTol); err != nil {
			sol.status = status.Cancelled
			break
		}
		nf := d.objective()
		sol.history = append(sol.history, nf)
		sol.sweeps = sweep
		if s.o.Progress.Enabled() && cfg.template != "" {
			s.o.Progress(progress.Event{Stage: Stage(cfg.template), Step: sweep, Objective: nf, Bound: math.NaN(), Gap: math.NaN(),
				Seconds: time.Since(cfg.start).Seconds()})
		}
		// One free attribute: its block solve is exact given the fixed
		// others, and they never change, so one sweep is the optimum.
		// Only a sweep solved at blockTol may end the descent, so the final
		// sweep's blocks are certified at the stated tolerance.
		// Under pure ε the blocks are p-Identity strategies (newton only
		// supplies the L2 bound, valid at any tolerance), so the change
		// alone decides.
		done := (f-nf <= s.o.Tol*nf || d.free == 1) && (sweepTol <= blockTol || s.o.Noise == calibrate.Laplace)
		sol.finalTol = sweepTol
		sol.sweepTols = append(sol.sweepTols, sweepTol)
		prevRel = (f - nf) / nf
		f = nf
		if done {
			break
		}
		if sweep == maxSweeps {
			sol.status = status.IterationLimit
		}
	}
	sol.obj = f
	return err
}

// sweep updates every free attribute's block once, in attribute order.
func (d *kronDescent) sweep(ctx context.Context, sweepTol float64) error {
	for i := range d.s.attrs {
		if d.fixed[i] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.updateBlock(ctx, i, sweepTol); err != nil {
			return err
		}
	}
	return nil
}

// updateBlock solves attribute i's block problem min tr(Gᵢ Xᵢ⁺) at
// sweepTol and keeps the step only if it does not raise the block
// objective, so the sweep objectives never increase.
func (d *kronDescent) updateBlock(ctx context.Context, i int, sweepTol float64) error {
	s, sol := d.s, d.sol
	g, coef, order := d.blockGram(i)
	if d.warm[i] == nil && !s.exactSweeps {
		d.warm[i] = &warmSolver{s: s.newtonFor(i)}
	}
	if d.warm[i] != nil {
		d.warm[i].tol = sweepTol
	}
	nb, err := solveBlockWith(ctx, g, s.o.Noise, d.warm[i])
	if err != nil {
		return err
	}
	sol.newtonIters += nb.iters
	old, neu := 0.0, 0.0
	for _, b := range order {
		old += coef[b] * sol.blocks[i].trace(b.Gram())
		neu += coef[b] * nb.trace(b.Gram())
	}
	if neu <= old {
		sol.blocks[i] = nb
		sol.theta = math.Max(sol.theta, nb.theta)
		d.setTraces(i, nb)
	}
	return nil
}

// blockGram returns Gᵢ = Σₚ cₚ·Vᵢₚ with cₚ = wₚ²·Π_{l≠i} tr(V_lp X_l⁺),
// the coefficients summed per distinct block, and the blocks in first-seen
// order (the order Gᵢ and the block objectives are summed in).
func (d *kronDescent) blockGram(i int) (*mat.SymDense, map[*domain.Block]float64, []*domain.Block) {
	coef := map[*domain.Block]float64{}
	var order []*domain.Block
	for pi, p := range d.live {
		c := d.w2[pi]
		for l, v := range d.t[pi] {
			if l != i {
				c *= v
			}
		}
		pb := d.s.cb(i, p.Blocks[i])
		if _, ok := coef[pb]; !ok {
			order = append(order, pb)
		}
		coef[pb] += c
	}
	g := mat.NewSymDense(d.s.attrs[i].Size, nil)
	for _, b := range order {
		g.AddSym(g, scaled(b.Gram(), coef[b]))
	}
	return g, coef, order
}

// perProduct is every product's term in prods order, 0 for zero-weight
// products.
func (d *kronDescent) perProduct(prods []*domain.Product) []float64 {
	out := make([]float64, len(prods))
	li := 0
	for pi, p := range prods {
		if d.s.w.Weight2(p) == 0 {
			continue
		}
		out[pi] = d.productTerm(li)
		li++
	}
	return out
}

func scaled(a *mat.SymDense, c float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.ScaleSym(c, a)
	return out
}

// prodKey identifies a set of products by their positions in the workload.
func prodKey(w *domain.Kron, prods []*domain.Product) string {
	idx := map[*domain.Product]int{}
	for i, p := range w.Products() {
		idx[p] = i
	}
	b := make([]byte, 0, 4*len(prods))
	for _, p := range prods {
		i := idx[p]
		b = append(b, byte(i), byte(i>>8), byte(i>>16), byte(i>>24))
	}
	return string(b)
}

// factors turns blocks into the strategy's factors, in domain order.
func (s *solver) factors(blocks []*block) []Factor {
	fs := make([]Factor, len(blocks))
	for i, b := range blocks {
		fs[i] = Factor{Attribute: s.attrs[i].Name, A: mat.DenseCopyOf(b.a)}
	}
	return fs
}

// termErrors sums per-product errors into per-term ones.
func (s *solver) termErrors(perProd map[*domain.Product]float64) []TermUnitError {
	out := make([]TermUnitError, len(s.w.Terms()))
	for j, t := range s.w.Terms() {
		out[j] = TermUnitError{Term: t.Name, Queries: t.Queries()}
		for _, p := range t.Products {
			out[j].Error += perProd[p]
		}
	}
	return out
}
