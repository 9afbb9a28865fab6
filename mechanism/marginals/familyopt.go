package marginals

import (
	"math"
	"slices"
	"strings"
)

// Optimizing the marginal-table weights.
//
// With q_S = x_S^p·γ_S the family's error is E(x) = Σ_T C'_T/ℓ_T(x),
// ℓ_T = Σ_{S⊇T} q_S, over the simplex Σ_S x_S = 1: p = 2 for pure ε (x = θ,
// the L1 weights; not convex) and p = 1 for the L2 relaxation (x = u = θ²;
// convex). Its gradient is ∂E/∂x_S = −p·x_S^{p−1}·g_S with
// g_S = γ_S Σ_{T⊆S} C'_T/ℓ_T², two O(k·2^k) transforms.
//
// Minorize–maximize (here majorize–minimize) step. By convexity of 1/z,
// with α_{TS} = q_S⁰/ℓ_T⁰ (Σ_{S⊇T} α_{TS} = 1),
//
//	1/ℓ_T(x) = 1/Σ_S α_{TS}(q_S/α_{TS}) ≤ Σ_S α_{TS}²/q_S,
//
// equality at x⁰, so E(x) ≤ Σ_S A_S/x_S^p with A_S = (x_S⁰)^{2p}·g_S⁰
// (summing the bound over T ⊆ S). The majorizer separates; on the simplex its minimum is x_S ∝ A_S^{1/(p+1)}, i.e.
//
//	x_S ← x_S·(x_S^{p−1}·g_S)^{1/(p+1)}   (normalized to Σ x = 1),
//
// which never raises E (it is the exact minimum of an upper bound that
// touches E at x⁰), keeps positive weights positive, and whose fixed points
// are E's KKT points on the support (x_S^{p−1}g_S equal). An over-relaxed
// step (exponent ω/(p+1), ω > 1) is tried first and kept only when it lowers
// E; otherwise the plain step is taken, so the iterates descend
// monotonically.
//
// L2 relaxation bound. Σ_S θ_S = 1 implies Σ_S θ_S² ≤ 1, so the pure
// family's optimum is at least that of the convex problem in u = θ² over
// {u ≥ 0, Σu ≤ 1} (E decreases in u, so over the simplex). At any u the
// Frank–Wolfe (linearization) bound E(u) + min_{v∈simplex} ∇E·(v − u) =
// 2E(u) − max_S g_S (Σ_S u_S g_S = E) is a certified lower bound on it.

// mm evaluates and steps the family objective for one exponent p.
type mm struct {
	f      *family
	p      float64
	s      float64 // the constraint Σ x^s = 1
	ell    []float64
	gx, gy []float64
	y      []float64
}

func newMM(f *family, p float64) *mm {
	return &mm{f: f, p: p, s: 1, ell: make([]float64, f.n), gx: make([]float64, f.n), gy: make([]float64, f.n), y: make([]float64, f.n)}
}

// eval returns E(x) and fills g (the g_S above) for x.
func (o *mm) eval(x, g []float64) float64 {
	f := o.f
	k := len(f.attrs)
	for m, v := range x {
		if o.p == 2 {
			o.ell[m] = v * v * f.gamma[m]
		} else {
			o.ell[m] = v * f.gamma[m]
		}
	}
	supersetSum(o.ell, k)
	obj := 0.0
	for m, c := range f.c {
		g[m] = 0
		if c > 0 {
			l := o.ell[m]
			if !(l > 0) {
				return math.Inf(1)
			}
			obj += c / l
			g[m] = c / (l * l)
		}
	}
	subsetSum(g, k)
	for m := range g {
		g[m] *= f.gamma[m]
	}
	return obj
}

// step writes into y the step from x with over-relaxation ω under the
// constraint Σ x^s = 1 (see homotopy; s = 1 is the simplex): the
// majorizer's minimum there is x ∝ A^{1/(p+s)}, i.e. x·(x^{p−s}·g)^{1/(p+s)}.
func (o *mm) step(y, x, g []float64, obj, omega float64) {
	e := omega / (o.p + o.s)
	sum := 0.0
	for m, v := range x {
		if v <= 0 {
			y[m] = 0
			continue
		}
		r := g[m] / obj
		if o.p != o.s {
			r *= math.Pow(v, o.p-o.s)
		}
		var nv float64
		switch {
		case omega == 1 && o.p+o.s == 3:
			nv = v * math.Cbrt(r)
		case omega == 1 && o.p+o.s == 2:
			nv = v * math.Sqrt(r)
		default:
			nv = v * math.Pow(r, e)
		}
		if !(nv > 1e-300) || math.IsInf(nv, 0) {
			nv = 0
		}
		y[m] = nv
		if o.s == 1 {
			sum += nv
		} else {
			sum += math.Pow(nv, o.s)
		}
	}
	c := 1 / sum
	if o.s != 1 {
		c = math.Pow(sum, -1/o.s)
	}
	for m := range y {
		y[m] *= c
	}
}

// run descends from x (overwritten with the result) until the relative
// decrease stays below tol for three iterations or maxIter steps; onIter,
// when non-nil, sees every accepted iterate's objective and g and may stop
// the descent by returning true. It returns the objective and the number
// of steps.
func (o *mm) run(x []float64, maxIter int, tol float64, onIter func(obj float64, g []float64) bool) (float64, int) {
	fx := o.eval(x, o.gx)
	if onIter != nil && onIter(fx, o.gx) {
		return fx, 0
	}
	omega, small := 2.0, 0
	it := 0
	for it < maxIter && !math.IsInf(fx, 0) {
		it++
		o.step(o.y, x, o.gx, fx, omega)
		fy := o.eval(o.y, o.gy)
		if !(fy <= fx) {
			omega = math.Max(1, omega/2)
			o.step(o.y, x, o.gx, fx, 1)
			fy = o.eval(o.y, o.gy)
			if !(fy <= fx) { // rounding at the fixed point
				break
			}
		} else {
			omega = math.Min(4, omega*1.25)
		}
		dec := (fx - fy) / fx
		copy(x, o.y)
		o.gx, o.gy = o.gy, o.gx
		fx = fy
		if onIter != nil && onIter(fx, o.gx) {
			break
		}
		if dec < tol {
			small++
			if small >= 3 {
				break
			}
		} else {
			small = 0
		}
	}
	return fx, it
}

// mmIterations is the step budget of one descent: about 10⁸ array element
// operations (a few tenths of a second), between 20 and 5000 steps — 300 at
// 14 resolved attributes, 20 at the 20 of MaxFamilyAttributes, where one
// step touches 2²⁰ weights.
func (f *family) mmIterations() int {
	work := float64(f.n) * float64(len(f.attrs)+6)
	return int(math.Max(20, math.Min(5000, 1e8/work)))
}

// l2Relaxation minimizes the convex L2 problem in u from the uniform start
// and returns u and the best Frank–Wolfe lower bound seen (a bound on the
// pure family's optimum; see above), lowered by 1e-12 relative for the
// rounding of its sums.
func (f *family) l2Relaxation() (u []float64, bound float64, iters int) {
	o := newMM(f, 1)
	u = make([]float64, f.n)
	for m := range u {
		u[m] = 1 / float64(f.n)
	}
	bound = 0
	_, iters = o.run(u, f.mmIterations(), 1e-12, func(obj float64, g []float64) bool {
		mx := 0.0
		for _, v := range g {
			mx = math.Max(mx, v)
		}
		if lb := 2*obj - mx; lb > bound {
			bound = lb
		}
		return obj-bound <= 1e-9*obj
	})
	return u, bound * (1 - 1e-12), iters
}

// pureStart is one deterministic start of the pure descent.
type pureStart struct {
	name  string
	theta []float64
}

// pureStarts returns the starts: the uniform weights; the L2 relaxation's
// optimum mapped to θ ∝ √u; the largest table; and any given extra weights
// (a table plan of the workload's own marginals) — each but the first
// mixed with 5% of the uniform weights so that every table stays
// reachable (a weight at 0 stays at 0 under the multiplicative steps, and
// a face of the simplex holds local minima of its own).
func (f *family) pureStarts(u []float64, extra []float64) []pureStart {
	uni := 1 / float64(f.n)
	mix := func(v []float64) []float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		out := make([]float64, f.n)
		for m, x := range v {
			out[m] = 0.95*x/s + 0.05*uni
		}
		return out
	}
	uniform := make([]float64, f.n)
	for m := range uniform {
		uniform[m] = uni
	}
	starts := []pureStart{{"uniform", uniform}}
	if u != nil {
		r := make([]float64, f.n)
		for m, v := range u {
			r[m] = math.Sqrt(v)
		}
		starts = append(starts, pureStart{"l2-relaxation", mix(r)})
	}
	full := make([]float64, f.n)
	full[f.n-1] = 1
	starts = append(starts, pureStart{"largest-table", mix(full)})
	if extra != nil {
		starts = append(starts, pureStart{"workload-tables", mix(extra)})
	}
	starts = append(starts, pureStart{"product", mix(f.productStart())})
	return starts
}

// productStart returns the Kronecker-product weights θ_S = Π_{a∈S} β_a
// Π_{a∉S} (1 − β_a) (Σθ = 1): the strategy ⊗_a [(1 − β_a)·1ᵀ; β_a·I],
// whose error on one product term separates into Π_a e_a(β_a),
// e_a(β) = r_a/β² + t_a/((1 − β)²d_a + β²) (per-attribute traces at cell
// scale times d_a). Each β_a minimizes e_a for the attribute's traces
// summed over the products (each weighted by its other attributes'
// identity errors), by golden-section search on [0.05, 1].
func (f *family) productStart() []float64 {
	k := len(f.attrs)
	beta := make([]float64, k)
	for i := range f.attrs {
		d := float64(f.sizes[f.attrs[i]])
		r, t := 0.0, 0.0
		for _, pc := range f.prods {
			other := pc.w2
			for j := range pc.tot {
				if j != i {
					other *= pc.tot[j] + pc.res[j]
				}
			}
			r += other * pc.res[i] * d
			t += other * pc.tot[i] * d
		}
		e := func(b float64) float64 { return r/(b*b) + t/((1-b)*(1-b)*d+b*b) }
		lo, hi := 0.05, 1.0
		const phi = 0.6180339887498949
		for it := 0; it < 60; it++ {
			m1, m2 := hi-phi*(hi-lo), lo+phi*(hi-lo)
			if e(m1) < e(m2) {
				hi = m2
			} else {
				lo = m1
			}
		}
		beta[i] = (lo + hi) / 2
		if e(1) <= e(beta[i]) {
			beta[i] = 1
		}
	}
	th := make([]float64, f.n)
	for m := range th {
		v := 1.0
		for i := 0; i < k; i++ {
			if m&(1<<i) != 0 {
				v *= beta[i]
			} else {
				v *= 1 - beta[i]
			}
		}
		th[m] = v
	}
	return th
}

// pureResult is the outcome of the pure-family optimization.
type pureResult struct {
	theta      []float64
	value      float64
	iterations int
	start      string
	bound      float64 // the L2 relaxation bound on the family's optimum
}

// optimizePure runs the descent from every start and keeps the lowest
// error; the largest table alone (Identity or better) is a candidate too,
// so the result is never worse than it. Weights below 1e-12 of the largest
// are then dropped (and the rest renormalized) when that does not raise the
// error.
func (f *family) optimizePure(extra []float64) pureResult {
	u, bound, iters := f.l2Relaxation()
	res := pureResult{value: math.Inf(1), iterations: iters, bound: bound}
	o := newMM(f, 2)
	for _, st := range f.pureStarts(u, extra) {
		v, it := o.run(st.theta, f.mmIterations(), 1e-11, nil)
		res.iterations += it
		if v < res.value {
			res.value, res.theta, res.start = v, st.theta, st.name
		}
	}
	if u != nil {
		v, th, it := f.homotopy(u)
		res.iterations += it
		if v < res.value {
			res.value, res.theta, res.start = v, th, "homotopy"
		}
	}
	v, th, it := f.randomStarts(o, 4*f.mmIterations())
	res.iterations += it
	if v < res.value {
		res.value, res.theta, res.start = v, th, "random-spg"
	}
	full := make([]float64, f.n)
	full[f.n-1] = 1
	if v := o.eval(full, o.gx); v <= res.value {
		res.value, res.theta, res.start = v, full, "largest-table"
	}
	// Alternate the two kinds of move until neither helps.
	for round := 0; round < 10; round++ {
		v, it := f.vertexMoves(o, res.theta, res.value, 50)
		res.iterations += it
		v2, it2 := f.mergeMoves(o, res.theta, v, 50)
		res.iterations += it2
		if !(v2 < res.value*(1-1e-9)) {
			break
		}
		res.value = v2
		if !strings.HasSuffix(res.start, "+moves") {
			res.start += "+moves"
		}
	}
	if v := o.eval(full, o.gx); v <= res.value {
		res.value, res.theta, res.start = v, full, "largest-table"
	}
	mx := 0.0
	for _, v := range res.theta {
		mx = math.Max(mx, v)
	}
	pruned := make([]float64, f.n)
	s := 0.0
	for m, v := range res.theta {
		if v >= 1e-12*mx {
			pruned[m] = v
			s += v
		}
	}
	for m := range pruned {
		pruned[m] /= s
	}
	if v := o.eval(pruned, o.gx); v <= res.value {
		res.value, res.theta = v, pruned
	}
	return res
}

// ellOf returns ℓ_T = Σ_{S⊇T} θ_S²γ_S.
func (f *family) ellOf(theta []float64) []float64 {
	ell := make([]float64, f.n)
	for m, v := range theta {
		ell[m] = v * v * f.gamma[m]
	}
	supersetSum(ell, len(f.attrs))
	return ell
}

// homotopySteps are the constraint exponents s of the continuation from the
// L2 problem (s = 2, convex in θ²) to the pure one (s = 1).
var homotopySteps = []float64{2, 1.8, 1.6, 1.45, 1.3, 1.2, 1.12, 1.06, 1.03, 1}

// homotopy follows the minimizers of E(θ) under Σθ^s = 1 from s = 2, where
// θ = √u is the (global) optimum of the L2 relaxation, down to s = 1, each
// descent warm-started at the previous one's result. Deterministic
// continuation of this kind tracks one basin instead of sampling many; it
// is one more start, kept only when it ends lower.
func (f *family) homotopy(u []float64) (float64, []float64, int) {
	o := newMM(f, 2)
	th := make([]float64, f.n)
	for m, v := range u {
		th[m] = math.Sqrt(v)
	}
	iters := 0
	var v float64
	budget := f.mmIterations()
	for i, s := range homotopySteps {
		o.s = s
		// Renormalize to Σθ^s = 1 (E scales as 1/c²: only the direction
		// matters).
		sum := 0.0
		for _, x := range th {
			sum += math.Pow(x, s)
		}
		c := math.Pow(sum, -1/s)
		for m := range th {
			th[m] *= c
		}
		n := budget / 4
		if i == len(homotopySteps)-1 {
			n = budget
		}
		var it int
		v, it = o.run(th, n, 1e-9, nil)
		iters += it
	}
	return v, th, iters
}

// moveGrid are the masses δ a vertex move shifts onto one table.
var moveGrid = []float64{0.01, 0.03, 0.07, 0.15, 0.3, 0.5, 0.75, 1}

// moveCandidates is how many tables (the largest g_S) a round of vertex
// moves tries.
const moveCandidates = 24

// vertexMoves escapes the local minima of the multiplicative descent.
// A weight at (or near) 0 is a stationary direction of E to first order
// (∂E/∂θ_S = −2θ_S g_S), so the descent cannot grow a table it has let go,
// though a finite mass on it may pay: moving δ of the mass onto table S,
// θ' = (1 − δ)θ + δ·e_S, gives ℓ'_T = (1 − δ)²(ℓ_T + ρ²γ_S[T ⊆ S]) with
// ρ = δ/(1 − δ), so
//
//	E(θ') = (E − Σ_{T⊆S} C'_T/ℓ_T + Σ_{T⊆S} C'_T/(ℓ_T + ρ²γ_S)) / (1 − δ)²,
//
// exact in 2^{|S|} terms. Each round tries the tables with the largest g_S
// (the gain rate of ρ²) on a grid of δ, takes the best move if it lowers E,
// and re-runs the descent from there; it stops when no move helps.
func (f *family) vertexMoves(o *mm, theta []float64, value float64, rounds int) (float64, int) {
	iters := 0
	cur := make([]float64, f.n)
	for r := 0; r < rounds; r++ {
		v := o.eval(theta, o.gx)
		if v < value {
			value = v
		}
		cands := topMasks(o.gx, moveCandidates)
		bestV, bestS, bestD := value, -1, 0.0
		for _, sm := range cands {
			if bits(sm) > moveMaxAttrs {
				continue // 2^|S| terms per δ: the cost cap
			}
			base := 0.0
			for sub := sm; ; sub = (sub - 1) & sm {
				if c := f.c[sub]; c > 0 {
					base += c / o.ell[sub]
				}
				if sub == 0 {
					break
				}
			}
			for _, d := range moveGrid {
				ev := value - base
				if d < 1 {
					rho2 := (d / (1 - d)) * (d / (1 - d)) * f.gamma[sm]
					for sub := sm; ; sub = (sub - 1) & sm {
						if c := f.c[sub]; c > 0 {
							ev += c / (o.ell[sub] + rho2)
						}
						if sub == 0 {
							break
						}
					}
					ev /= (1 - d) * (1 - d)
				} else {
					// All mass on S: finite only if S covers every needed T.
					ev = 0
					for m, c := range f.c {
						if c > 0 {
							if m&^sm != 0 {
								ev = math.Inf(1)
								break
							}
							ev += c / f.gamma[sm]
						}
					}
				}
				if ev < bestV*(1-1e-9) {
					bestV, bestS, bestD = ev, sm, d
				}
			}
		}
		if bestS < 0 {
			break
		}
		copy(cur, theta)
		for m := range cur {
			cur[m] *= 1 - bestD
		}
		cur[bestS] += bestD
		nv, it := o.run(cur, f.mmIterations(), 1e-11, nil)
		iters += it
		if !(nv < value*(1-1e-9)) {
			break
		}
		copy(theta, cur)
		value = nv
	}
	return value, iters
}

// topMasks returns the positions of the k largest entries of g.
func topMasks(g []float64, k int) []int {
	idx := make([]int, 0, k+1)
	for m := range g {
		if len(idx) < k || g[m] > g[idx[len(idx)-1]] {
			pos := len(idx)
			idx = append(idx, m)
			for pos > 0 && g[idx[pos-1]] < g[m] {
				idx[pos] = idx[pos-1]
				pos--
			}
			idx[pos] = m
			if len(idx) > k {
				idx = idx[:k]
			}
		}
	}
	return idx
}

// mergeKeep is the fraction of their weight that the tables a merge move
// empties keep, so that the descent can grow them back where they help (a
// weight at 0 would stay at 0).
const mergeKeep = 0.02

// mergeMoves escapes the local minima in which several tables each answer
// part of what one larger table could answer at once (pair tables
// {a,b}, {a,c}, {b,c} against the table {a,b,c}, cheap when the attributes
// are small). A move onto table S takes the weight of the significant
// tables strictly inside S (all but mergeKeep of it) and puts it on S; only
// ℓ_T with T ⊆ S change, so its error is exact in 2^{|S|}·(tables moved)
// terms. Candidates are the unions of two significant tables (growing the
// larger by at most two attributes) and each significant table with one
// attribute more. Each round follows the mergeProbes best moves (by their
// immediate error) with a descent each and keeps the lowest result if it
// lowers E; rounds stop when none does.
func (f *family) mergeMoves(o *mm, theta []float64, value float64, rounds int) (float64, int) {
	iters := 0
	cur := make([]float64, f.n)
	type move struct {
		s  int
		ev float64
	}
	for r := 0; r < rounds; r++ {
		if v := o.eval(theta, o.gx); v < value {
			value = v
		}
		sig := significant(theta)
		var moves []move
		for _, sm := range f.mergeCandidates(sig) {
			if ev := f.mergeError(o, theta, sig, sm, value); !math.IsInf(ev, 0) {
				moves = append(moves, move{sm, ev})
			}
		}
		// The best few moves by their immediate error are each followed by
		// a descent (a merge that does not pay at once may pay once the
		// weights settle); the best descended point is kept if it is lower.
		slices.SortStableFunc(moves, func(a, b move) int { return cmpFloat(a.ev, b.ev) })
		bestV := value
		var best []float64
		for mi := 0; mi < len(moves) && mi < mergeProbes; mi++ {
			copy(cur, theta)
			applyMerge(cur, sig, moves[mi].s)
			// A probe's descent is short; the kept one is finished below.
			nv, it := o.run(cur, probeIterations, 1e-9, nil)
			iters += it
			if nv < bestV*(1-1e-9) {
				bestV, best = nv, append(best[:0], cur...)
			}
		}
		if best == nil {
			break
		}
		nv, it := o.run(best, f.mmIterations(), 1e-11, nil)
		iters += it
		copy(theta, best)
		value = math.Min(nv, bestV)
	}
	return value, iters
}

// significant returns the tables with at least 1e-3 of the largest weight,
// at most maxSignificant of them (the heaviest).
func significant(theta []float64) []int {
	mx := 0.0
	for _, v := range theta {
		mx = math.Max(mx, v)
	}
	var sig []int
	for m, v := range theta {
		if v >= 1e-3*mx {
			sig = append(sig, m)
		}
	}
	if len(sig) > maxSignificant {
		slices.SortStableFunc(sig, func(a, b int) int { return cmpFloat(theta[b], theta[a]) })
		sig = sig[:maxSignificant]
		slices.Sort(sig)
	}
	return sig
}

// Cost caps of the moves: a move onto S costs 2^|S| terms (per δ, or per
// table moved), so tables of more than moveMaxAttrs attributes are not
// move targets, and merges consider the maxSignificant heaviest tables
// (their candidates grow as its square).
const (
	moveMaxAttrs   = 12
	maxSignificant = 160
)

// mergeCandidates returns, sorted (so that ties go to the smallest mask),
// the tables a merge may move weight onto: each significant table with one
// attribute more, and the union of two significant tables that grows the
// larger by at most two attributes.
func (f *family) mergeCandidates(sig []int) []int {
	cands := map[int]bool{}
	for i, a := range sig {
		for bit := 1; bit < f.n && bits(a) < moveMaxAttrs; bit <<= 1 {
			if a&bit == 0 {
				cands[a|bit] = true
			}
		}
		for _, b := range sig[i+1:] {
			u := a | b
			if u != a && u != b && bits(u) <= min(moveMaxAttrs, max(bits(a), bits(b))+2) {
				cands[u] = true
			}
		}
	}
	order := make([]int, 0, len(cands))
	for sm := range cands {
		order = append(order, sm)
	}
	slices.Sort(order)
	return order
}

// mergeError returns the error after the merge onto sm (see mergeMoves;
// o.ell must hold ℓ of theta, whose error is value), +Inf when no
// significant table lies inside sm.
func (f *family) mergeError(o *mm, theta []float64, sig []int, sm int, value float64) float64 {
	var moved []int
	mass := 0.0
	for _, t := range sig {
		if t != sm && t&^sm == 0 {
			moved = append(moved, t)
			mass += theta[t]
		}
	}
	if len(moved) == 0 {
		return math.Inf(1)
	}
	ns := theta[sm] + (1-mergeKeep)*mass
	ev := value
	for sub := sm; ; sub = (sub - 1) & sm {
		if c := f.c[sub]; c > 0 {
			l := o.ell[sub] + (ns*ns-theta[sm]*theta[sm])*f.gamma[sm]
			for _, t := range moved {
				if sub&^t == 0 {
					l -= (1 - mergeKeep*mergeKeep) * theta[t] * theta[t] * f.gamma[t]
				}
			}
			if !(l > 0) {
				return math.Inf(1)
			}
			ev += c/l - c/o.ell[sub]
		}
		if sub == 0 {
			return ev
		}
	}
}

// applyMerge moves all but mergeKeep of the weight of the significant
// tables inside sm onto sm.
func applyMerge(theta []float64, sig []int, sm int) {
	for _, t := range sig {
		if t != sm && t&^sm == 0 {
			theta[sm] += (1 - mergeKeep) * theta[t]
			theta[t] *= mergeKeep
		}
	}
}

// mergeProbes is how many merge moves a round follows with a descent of
// probeIterations steps (the descent converges in a few dozen steps from a
// nearby point; the kept move's descent then runs to convergence).
const (
	mergeProbes     = 4
	probeIterations = 40
)

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bits counts the attributes of a mask.
func bits(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}
