package plan

import (
	"context"
	"errors"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// Union is the template OPT₊, extended to hybrid parts: a weighted stack of
// parts, part k answering its terms from its own measurements. A part is a
// Kronecker strategy (block coordinate descent on its terms), or — a
// hybrid part — the plan one of the Hybrid templates makes for its terms
// alone (the marginals template: the residual or weighted-table plan of
// any blocks); each part keeps the lower. With each part's error Eₖ at weight 1, the error at
// weight wₖ is Eₖ/wₖ²; under Σ wₖ² = 1 (L2 sensitivity 1) the best weights
// are wₖ² = √Eₖ/Σₗ√Eₗ and the total is (Σₖ √Eₖ)² (Laplace, Σ wₖ = 1:
// wₖ ∝ Eₖ^{1/3}, total (Σ Eₖ^{1/3})³).
//
// The grouping is the best of: every term its own part; terms grouped by
// the attributes they query (their non-total blocks); the marginal terms
// together and every other term alone; all terms in one part (kron's
// strategy — capped at a few sweeps on large unions unless kron ran in the
// same plan, see allTermsSweeps — and the marginals template's, so union
// is never worse than either where they ran in full); then greedy pairwise merges of the best grouping while they
// help. A merge is scored by an upper bound that costs no solve — the
// error of the Kronecker strategy that takes, per attribute, one of the two
// parts' blocks — and accepted when that bound lowers the total; when no
// bound does, the best few pairs are solved (a short descent from that
// strategy) before giving up. The final parts are then solved in full.
//
// When Options.Accept rejects the hybrid strategy (a caller that can only
// measure Kronecker parts), the plan is remade with Kronecker parts only.
type Union struct {
	// Hybrid lists the templates whose plans of a part's terms may stand
	// for the part (package planner passes the marginals template); nil:
	// Kronecker parts only. Kron, union, dense and best entries are
	// ignored.
	Hybrid []Template
}

// Name returns "union".
func (Union) Name() string { return "union" }

// Plan returns the best union strategy found for w.
func (u Union) Plan(ctx context.Context, w *domain.Kron, opt Options) (*Result, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	s := newSolver(w, o)
	s.hybrid = u.Hybrid
	return planUnion(ctx, s)
}

// partSol is one part of a union: its terms, its error at weight 1 and the
// strategy that has it.
type partSol struct {
	terms []int
	err   float64
	kron  *kronSol // the Kronecker strategy (always computed for merges)
	other *Result  // set when another template's plan is the part's best
	// orphans counts the zero-weight terms at the end of terms that joined
	// the part after it was planned (no error; see finish).
	orphans  int
	resolved []bool
	// othersTried is set once the other kinds were tried on the terms.
	othersTried bool
}

func planUnion(ctx context.Context, s *solver) (*Result, error) {
	start := time.Now()
	res, err := s.union(ctx, start, true)
	if err == nil && s.o.Accepts(res.Strategy) != nil {
		res, err = s.union(ctx, start, false)
	}
	if err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	s.done(res)
	return res, nil
}

// union plans with hybrid parts or Kronecker parts only.
func (s *solver) union(ctx context.Context, start time.Time, hybrid bool) (*Result, error) {
	u := &unionRun{s: s, start: start, hybrid: hybrid, cache: map[string]*partSol{}}
	best, err := u.candidates(ctx)
	if err != nil {
		return nil, err
	}
	if best, err = u.merge(ctx, best); err != nil {
		return nil, err
	}
	if best, err = u.finish(ctx, best); err != nil {
		return nil, err
	}
	return u.result(ctx, best)
}

// unionRun is one union search.
type unionRun struct {
	s      *solver
	start  time.Time
	hybrid bool
	cache  map[string]*partSol
	step   int
	traces map[traceKey]float64
}

type traceKey struct {
	attr  int
	f     *block
	block *domain.Block
}

// total is the combined error of parts with closed-form weights.
func (u *unionRun) total(parts []*partSol) float64 {
	es := make([]float64, len(parts))
	for i, p := range parts {
		es[i] = p.err
	}
	return combine(es, u.s.o.Noise)
}

// report sends the union's progress: the combined objective of the
// grouping it stands at.
func (u *unionRun) report(total float64, note string) {
	u.step++
	if f := u.s.o.Progress; f.Enabled() {
		f(progress.Event{Stage: Stage("union"), Step: u.step, Objective: total, Bound: math.NaN(), Gap: math.NaN(),
			Seconds: time.Since(u.start).Seconds(), Note: note})
	}
}

// candidates evaluates the fixed groupings and returns the best one's parts.
func (u *unionRun) candidates(ctx context.Context) ([]*partSol, error) {
	s := u.s
	terms := s.w.Terms()
	nt := len(terms)
	single := make([][]int, nt)
	for j := range single {
		single[j] = []int{j}
	}
	bySig := map[string][]int{}
	var sigs []string
	var marg, rest []int
	for j, t := range terms {
		var used []string
		for i, a := range s.attrs {
			for _, p := range t.Products {
				if p.Blocks[i].Kind != domain.BlockTotal {
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
		if isMarginalTerm(t) {
			marg = append(marg, j)
		} else {
			rest = append(rest, j)
		}
	}
	var bySigGroups [][]int
	for _, sig := range sigs {
		bySigGroups = append(bySigGroups, bySig[sig])
	}
	type cand struct {
		name   string
		groups [][]int
	}
	cands := []cand{{"every term alone", single}, {"terms by attributes", bySigGroups}}
	if u.hybrid && len(marg) > 1 && len(rest) > 0 {
		g := [][]int{marg}
		for _, j := range rest {
			g = append(g, []int{j})
		}
		cands = append(cands, cand{"marginal terms together", g})
	}
	if nt > 1 {
		cands = append(cands, cand{"all terms in one part", [][]int{seqInts(nt)}})
	}
	var best []*partSol
	bestT := math.Inf(1)
	for _, c := range cands {
		parts := make([]*partSol, len(c.groups))
		for gi, g := range c.groups {
			p, err := u.part(ctx, g, nil, 0)
			if err != nil {
				return nil, err
			}
			parts[gi] = p
		}
		if t := u.total(parts); t < bestT {
			best, bestT = parts, t
		}
		u.report(bestT, "grouping: "+c.name)
	}
	return best, nil
}

// A candidate part of more than fullDescentProducts products gets a
// Kronecker descent of at most cappedSweeps sweeps, unless that descent
// already ran in this plan (the portfolio runs kron first, and descents
// are shared): a long descent over hundreds of products would dominate
// union's time (under pure ε every block solve is an L-BFGS run), the
// greedy merges reach large parts anyway, and finish completes the
// descent of every final Kronecker part.
const (
	fullDescentProducts = 8
	cappedSweeps        = 5
)

// isMarginalTerm reports whether every block of the term is identity or
// total.
func isMarginalTerm(t *domain.Term) bool {
	for _, p := range t.Products {
		for _, b := range p.Blocks {
			if b.Kind != domain.BlockIdentity && b.Kind != domain.BlockTotal {
				return false
			}
		}
	}
	return true
}

// groupKey identifies a group of terms.
func groupKey(g []int) string {
	b := make([]byte, 0, 4*len(g))
	for _, j := range g {
		b = append(b, byte(j), byte(j>>8), byte(j>>16), byte(j>>24))
	}
	return string(b)
}

// part returns the best part for the terms g: the Kronecker descent (from
// init when given, capped at maxSweeps when positive) and, for hybrid
// unions, every other applicable template's plan of g alone. Full descents
// are cached per group.
func (u *unionRun) part(ctx context.Context, g []int, init []*block, maxSweeps int) (*partSol, error) {
	return u.partWith(ctx, g, init, maxSweeps, u.hybrid)
}

// partWith is part, trying the other kinds only when others is set (merge
// probes score Kronecker parts only; finish tries the others on the final
// parts).
func (u *unionRun) partWith(ctx context.Context, g []int, init []*block, maxSweeps int, others bool) (*partSol, error) {
	key := groupKey(g)
	full := init == nil && maxSweeps == 0 && others == u.hybrid
	if p, ok := u.cache[key]; ok && full {
		return p, nil
	}
	s := u.s
	p := &partSol{terms: g, err: math.Inf(1)}
	if others {
		if err := u.otherParts(ctx, p); err != nil {
			return nil, err
		}
		p.othersTried = true
		if o := p.other; o != nil && o.LowerBound >= o.Objective*(1-certifiedGap) {
			// Certified optimal over every strategy (the residual plan of
			// marginals): no Kronecker part can do better.
			return u.store(key, full, p), nil
		}
	}
	prods := groupProducts(s.w, g)
	if _, cached := s.groups[prodKey(s.w, prods)]; init == nil && maxSweeps == 0 && !cached && len(prods) > fullDescentProducts {
		maxSweeps = cappedSweeps
	}
	sol, err := s.kronWith(ctx, prods, kronCfg{start: u.start, init: init, maxSweeps: maxSweeps})
	if err != nil {
		return nil, err
	}
	p.kron = sol
	if sol.obj <= p.err*(1+1e-9) {
		p.err, p.other = sol.obj, nil
	}
	return u.store(key, full, p), nil
}

// store caches a part computed in full.
func (u *unionRun) store(key string, full bool, p *partSol) *partSol {
	if full {
		u.cache[key] = p
	}
	return p
}

// otherParts tries every hybrid template (solver.hybrid) on the part's terms
// alone, under the plan's Accept (a caller that measures a union part by
// part gets parts it can measure: the marginals template then keeps to the
// plans it accepts), and keeps the lowest error in p. A template that does not apply
// (ErrInput, e.g. a sub-workload that leaves a cell unqueried) is skipped.
// Dense parts are not tried: where the dense plan is affordable, the dense
// plan of the whole workload is the certified optimum over every strategy,
// unions included, and the portfolio runs it.
func (u *unionRun) otherParts(ctx context.Context, p *partSol) error {
	s := u.s
	var sub *domain.Kron
	for _, t := range s.hybrid {
		name := t.Name()
		if builtin(name) {
			continue
		}
		whole := len(p.terms) == len(s.w.Terms())
		if r, ok := s.whole[name]; ok && whole {
			if r.Objective < p.err*(1-1e-9) {
				p.err, p.other = r.Objective, r
			}
			continue
		}
		if sub == nil {
			if whole {
				sub = s.w
			} else if sw, err := subWorkload(s.w, p.terms); err != nil {
				return nil // a sub-workload that is not one: Kronecker only
			} else {
				sub = sw
			}
		}
		r, err := t.Plan(ctx, sub, Options{Noise: s.o.Noise, Tol: s.o.Tol, MaxSweeps: s.o.MaxSweeps, DenseMaxCells: s.o.DenseMaxCells, Accept: s.o.Accept})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, ErrInput) {
				continue
			}
			return err
		}
		if whole {
			s.whole[name] = r // the portfolio runs this template on w too
		}
		if r.Objective < p.err*(1-1e-9) {
			p.err, p.other = r.Objective, r
		}
	}
	return nil
}

// subWorkload returns the workload of the terms g alone (copies of the
// terms, sharing their blocks; NewKron renumbers products, so the
// original's must not be reused).
func subWorkload(w *domain.Kron, g []int) (*domain.Kron, error) {
	ts := make([]*domain.Term, len(g))
	for k, j := range g {
		t := *w.Terms()[j]
		t.Products = make([]*domain.Product, len(w.Terms()[j].Products))
		for pi, p := range w.Terms()[j].Products {
			c := *p
			t.Products[pi] = &c
		}
		ts[k] = &t
	}
	return domain.NewKron(w.Attributes(), ts)
}

// maxProbes is how many pairs a merge round solves when no pair's bound
// helps.
const maxProbes = 3

// pairBound is the merge bound of two parts (see mergeBound).
type pairBound struct {
	ub     float64
	blocks []*block
}

// merge joins parts greedily while it lowers the total (see Union). Pair
// bounds are computed once per pair of parts (a merge adds one part and
// removes two), and a candidate's total comes from the sum of Eₖ^{1/p}
// in O(1).
func (u *unionRun) merge(ctx context.Context, parts []*partSol) ([]*partSol, error) {
	s := u.s
	q := 0.5
	if s.o.Noise == calibrate.Laplace {
		q = 1.0 / 3
	}
	pw := func(e float64) float64 { return math.Pow(e, q) }
	bounds := map[pairKey]pairBound{}
	for len(parts) > 1 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sum := 0.0
		for _, p := range parts {
			sum += pw(p.err)
		}
		cur := math.Pow(sum, 1/q)
		cands := u.mergeCandidates(parts, bounds, sum, q)
		accepted := false
		for ci, c := range cands {
			helps := c.total < cur*(1-1e-12)
			if ci >= maxProbes && !helps {
				break
			}
			g := append(append([]int(nil), parts[c.a].terms...), parts[c.b].terms...)
			sort.Ints(g)
			pb := bounds[pairKey{parts[c.a], parts[c.b]}]
			// The bound's strategy, improved by one sweep where the bound
			// already helps and by a short descent where it does not (the
			// descent starts there, so it is never worse).
			sweeps := 1
			if !helps {
				sweeps = 3
			}
			mp, err := u.partWith(ctx, g, pb.blocks, sweeps, false)
			if err != nil {
				return nil, err
			}
			t := sum - pw(parts[c.a].err) - pw(parts[c.b].err) + pw(mp.err)
			if t := math.Pow(math.Max(t, 0), 1/q); t < cur*(1-1e-12) {
				next := []*partSol{mp}
				for k := range parts {
					if k != c.a && k != c.b {
						next = append(next, parts[k])
					}
				}
				parts, accepted = next, true
				u.report(t, "merge")
				break
			}
		}
		if !accepted {
			break
		}
	}
	return parts, nil
}

type pairKey struct{ a, b *partSol }

// mergeCand is a pair of parts and the total with their merge bound.
type mergeCand struct {
	a, b  int
	total float64
}

// mergeCandidates scores every pair of Kronecker parts by its merge bound
// (computed once per pair, kept in bounds) and returns them by total,
// lowest first; sum is Σₖ Eₖ^q over the parts.
func (u *unionRun) mergeCandidates(parts []*partSol, bounds map[pairKey]pairBound, sum, q float64) []mergeCand {
	var cands []mergeCand
	for a := 0; a < len(parts); a++ {
		for b := a + 1; b < len(parts); b++ {
			if parts[a].kron == nil || parts[b].kron == nil {
				continue // a certified non-Kronecker part stays as it is
			}
			key := pairKey{parts[a], parts[b]}
			pb, ok := bounds[key]
			if !ok {
				pb.ub, pb.blocks = u.mergeBound(parts[a], parts[b])
				bounds[key] = pb
			}
			if math.IsInf(pb.ub, 0) {
				continue
			}
			t := sum - math.Pow(parts[a].err, q) - math.Pow(parts[b].err, q) + math.Pow(pb.ub, q)
			cands = append(cands, mergeCand{a, b, math.Pow(math.Max(t, 0), 1/q)})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].total < cands[j].total })
	return cands
}

// mergeBound returns an upper bound on the error at weight 1 of the best
// Kronecker strategy for the terms of a and b together, and its blocks:
// per attribute the block of a or of b (one resolving the attribute where
// only one does; where both do, each is tried in turn, keeping the lower
// error). It needs only traces tr(V X⁺) of the two parts' blocks, memoized.
func (u *unionRun) mergeBound(a, b *partSol) (float64, []*block) {
	s := u.s
	prods := append(groupProducts(s.w, a.terms), groupProducts(s.w, b.terms)...)
	k := len(s.attrs)
	ra, rb := u.resolved(a), u.resolved(b)
	blocks := make([]*block, k)
	var both []int
	for i := 0; i < k; i++ {
		switch {
		case ra[i] && rb[i]:
			blocks[i] = a.kron.blocks[i]
			both = append(both, i)
		case rb[i]:
			blocks[i] = b.kron.blocks[i]
		default:
			blocks[i] = a.kron.blocks[i]
		}
	}
	e := u.errorWith(prods, blocks)
	for _, i := range both {
		blocks[i] = b.kron.blocks[i]
		if eb := u.errorWith(prods, blocks); eb < e {
			e = eb
		} else {
			blocks[i] = a.kron.blocks[i]
		}
	}
	return e, blocks
}

// resolved marks the attributes some product of the part does not total.
func (u *unionRun) resolved(p *partSol) []bool {
	if p.resolved != nil {
		return p.resolved
	}
	out := make([]bool, len(u.s.attrs))
	for _, pr := range groupProducts(u.s.w, p.terms) {
		for i, b := range pr.Blocks {
			if b.Kind != domain.BlockTotal {
				out[i] = true
			}
		}
	}
	p.resolved = out
	return out
}

// errorWith is Σₚ wₚ²·Πᵢ tr(Vᵢₚ Xᵢ⁺) for the given blocks, +Inf when some
// block cannot answer its product's queries (range(Vᵢₚ) ⊄ range(Xᵢ): a
// singular block — a total row, a grouping — asked for finer queries; the
// trace formula would then not be an error at all).
func (u *unionRun) errorWith(prods []*domain.Product, blocks []*block) float64 {
	if u.traces == nil {
		u.traces = map[traceKey]float64{}
	}
	total := 0.0
	for _, p := range prods {
		e := u.s.w.Weight2(p)
		if e == 0 {
			continue
		}
		for i, b := range p.Blocks {
			f := blocks[i]
			b = u.s.cb(i, b)
			k := traceKey{i, f, b}
			v, ok := u.traces[k]
			if !ok {
				v = math.Inf(1)
				if f.answers(b.Gram()) {
					v = f.trace(b.Gram())
				}
				u.traces[k] = v
			}
			e *= v
		}
		total += e
	}
	return total
}

// finish solves every final Kronecker part in full, from its strategy so
// far, keeping the lower error, tries the other kinds of part on the final
// groups (hybrid unions), and gives the terms of a part without
// error (only zero-weight terms, which would get weight 0) to the part of
// largest error: they add no error wherever they are answered.
func (u *unionRun) finish(ctx context.Context, parts []*partSol) ([]*partSol, error) {
	s := u.s
	for i, p := range parts {
		if p.other == nil && !p.kron.exact {
			sol, err := s.kronWith(ctx, groupProducts(s.w, p.terms), kronCfg{start: u.start, init: p.kron.blocks})
			if err != nil {
				return nil, err
			}
			if sol.obj <= p.err {
				p = &partSol{terms: p.terms, err: sol.obj, kron: sol, othersTried: p.othersTried}
				parts[i] = p
			}
		}
		if u.hybrid && !p.othersTried {
			if err := u.otherParts(ctx, p); err != nil {
				return nil, err
			}
			p.othersTried = true
		}
	}
	big := 0
	for i, p := range parts {
		if p.err > parts[big].err {
			big = i
		}
	}
	var kept []*partSol
	var orphans []int
	for i, p := range parts {
		if p.err > 0 || i == big {
			kept = append(kept, p)
		} else {
			orphans = append(orphans, p.terms...)
		}
	}
	if len(orphans) > 0 {
		for ki, p := range kept {
			if p == parts[big] {
				np := *p
				np.terms = append(append([]int(nil), p.terms...), orphans...)
				np.orphans = len(orphans)
				kept[ki] = &np
			}
		}
	}
	u.report(u.total(kept), "final parts")
	return kept, nil
}

// result builds the Result of the chosen parts.
func (u *unionRun) result(ctx context.Context, parts []*partSol) (*Result, error) {
	s := u.s
	terms := s.w.Terms()
	es := make([]float64, len(parts))
	for i, p := range parts {
		es[i] = p.err
	}
	weights := partWeights(es, s.o.Noise)
	per := map[*domain.Product]float64{}
	termErr := make([]float64, len(terms))
	strat := &Plan{Template: "union", Noise: s.o.Noise}
	theta, sweeps := 0.0, 0
	for gi, p := range parts {
		scale := 1 / (weights[gi] * weights[gi])
		part := Part{Weight: weights[gi]}
		for _, j := range p.terms {
			part.Terms = append(part.Terms, terms[j].Name)
		}
		if p.other != nil {
			part.Strategy = p.other.Strategy
			for k, j := range p.terms[:len(p.terms)-p.orphans] {
				termErr[j] = p.other.TermErrors[k].Error * scale
			}
			theta = math.Max(theta, p.other.Regularization)
		} else {
			part.Factors = s.factors(p.kron.blocks)
			prods := groupProducts(s.w, p.terms[:len(p.terms)-p.orphans])
			for pi, pr := range prods {
				per[pr] = p.kron.perProd[pi] * scale
			}
			theta = math.Max(theta, p.kron.theta)
			sweeps += p.kron.sweeps
		}
		strat.Parts = append(strat.Parts, part)
	}
	tes := s.termErrors(per)
	for j := range tes {
		tes[j].Error += termErr[j]
	}
	res := &Result{
		Template: "union", Strategy: strat, Objective: combine(es, s.o.Noise), TermErrors: tes,
		Sweeps: sweeps, Status: status.Converged, Regularization: theta,
		DenseObjective: math.NaN(), AboveDense: math.NaN(),
	}
	if err := s.setBound(ctx, res); err != nil {
		return nil, err
	}
	return res, nil
}

// combine is the total error with the closed-form part weights.
func combine(es []float64, privacy calibrate.NoiseKind) float64 {
	p := 2.0 // Σ w² = 1
	if privacy == calibrate.Laplace {
		p = 3 // Σ w = 1
	}
	s := 0.0
	for _, e := range es {
		s += math.Pow(e, 1/p)
	}
	return math.Pow(s, p)
}

// partWeights are the optimal weights for part errors es (see Union).
func partWeights(es []float64, privacy calibrate.NoiseKind) []float64 {
	p := 2.0
	if privacy == calibrate.Laplace {
		p = 3
	}
	s := 0.0
	for _, e := range es {
		s += math.Pow(e, 1/p)
	}
	w := make([]float64, len(es))
	for i, e := range es {
		if privacy == calibrate.Laplace {
			w[i] = math.Pow(e, 1/p) / s
		} else {
			w[i] = math.Sqrt(math.Sqrt(e) / s)
		}
	}
	return w
}

func groupProducts(w *domain.Kron, g []int) []*domain.Product {
	var out []*domain.Product
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
