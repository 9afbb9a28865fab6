package plan

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/pinv"
	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// blockTol is the certified relative gap asked of every per-attribute newton
// solve: block coordinate descent judges sweeps by a relative change of
// 1e-10, so each block must be solved well below that; newton reaches gaps of
// 1e-12–1e-14 at these sizes in one extra quadratic step, and reports
// Stalled (with its certificate) where rounding stops it first.
const blockTol = 1e-12

// block is one attribute's strategy: A (p×d, unit max column norm in the
// privacy's norm), its Gram X = AᵀA, and X⁺ for error evaluation.
type block struct {
	a    *mat.Dense
	x    *mat.SymDense
	pinv []float64 // X⁺, d×d row-major
	// obj and lb are the objective tr(G X⁺) and a certified lower bound on
	// min tr(G X⁺) over all d×d strategies of sensitivity 1, for the Gram G
	// the block was solved for.
	obj, lb float64
	theta   float64 // newton's regularization, 0 when exact
	how     string  // "identity", "total", "newton", "pidentity"
	iters   int     // newton iterations spent on the block (0: closed form)
	// singular is set when X may be singular (its inverse came from the
	// pseudo-inverse, or a closed form of fewer rows than values); proj is
	// then X⁺X (row-major) once answers needs it, empty when X turned out
	// to have full rank after all.
	singular bool
	proj     []float64
}

// trace returns tr(V X⁺) = Σᵢⱼ Vᵢⱼ X⁺ᵢⱼ.
func (b *block) trace(v *mat.SymDense) float64 {
	d := v.SymmetricDim()
	raw := v.RawSymmetric()
	s := 0.0
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		p := b.pinv[i*d : i*d+d]
		s += row[i] * p[i]
		off := 0.0
		for j := i + 1; j < d; j++ {
			off += row[j] * p[j]
		}
		s += 2 * off
	}
	return s
}

// answers reports whether the block can answer queries of Gram v:
// range(v) ⊆ range(X), i.e. tr(v(I − X⁺X)) = 0 (v and I − X⁺X are
// positive semidefinite, so the trace vanishes only then). A full-rank
// block answers everything; for a singular one the projector X⁺X is formed
// once (d³) and kept. The test allows 1e-9 of tr v for the rounding of X⁺.
func (b *block) answers(v *mat.SymDense) bool {
	d := v.SymmetricDim()
	if !b.singular {
		return true
	}
	if b.how == "total" {
		// X = J: range(v) ⊆ span 1 iff v = c·J, i.e. tr v = 1ᵀv1/d.
		raw := v.RawSymmetric()
		tr, sum := 0.0, 0.0
		for i := 0; i < d; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+d]
			tr += row[i]
			sum += row[i]
			for j := i + 1; j < d; j++ {
				sum += 2 * row[j]
			}
		}
		return tr-sum/float64(d) <= 1e-9*tr
	}
	if b.proj == nil {
		proj := make([]float64, d*d)
		full := true
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				s := 0.0
				for l := 0; l < d; l++ {
					s += b.pinv[i*d+l] * b.x.At(l, j)
				}
				proj[i*d+j] = s
				if i == j {
					s--
				}
				full = full && math.Abs(s) <= 1e-9
			}
		}
		b.proj = proj
		if full {
			b.proj = []float64{} // full rank: answers every Gram
		}
	}
	if len(b.proj) == 0 {
		return true
	}
	// tr(v P) with v symmetric (upper triangle stored) and P = X⁺X.
	raw := v.RawSymmetric()
	tr, trp := 0.0, 0.0
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		tr += row[i]
		trp += row[i] * b.proj[i*d+i]
		for j := i + 1; j < d; j++ {
			trp += row[j] * (b.proj[j*d+i] + b.proj[i*d+j])
		}
	}
	return tr-trp <= 1e-9*tr
}

// identityBlock is A = I.
func identityBlock(d int) *block {
	a := mat.NewDense(d, d, nil)
	x := mat.NewSymDense(d, nil)
	p := make([]float64, d*d)
	for i := 0; i < d; i++ {
		a.Set(i, i, 1)
		x.SetSym(i, i, 1)
		p[i*d+i] = 1
	}
	return &block{a: a, x: x, pinv: p, how: "identity"}
}

// groupClasses detects a Gram of "disjoint groups": G = Σᵣ cᵣ·J_{Sᵣ} for
// disjoint value sets Sᵣ covering 0…d−1 (cᵣ > 0) — the Gram of any block
// whose queries are constant on disjoint groups of values: identity,
// total, a partition into ranges, single-race categories. It returns the
// classes (each increasing) and their constants, or ok = false. Entries
// are compared to 1e-14 relative: the weighted sums Σ cⱼ·Vⱼ of such blocks
// are equal within a class up to rounding of the additions (≈ terms·1e-16).
func groupClasses(g *mat.SymDense) (classes [][]int, c []float64, ok bool) {
	d := g.SymmetricDim()
	raw := g.RawSymmetric()
	at := func(i, j int) float64 {
		if i > j {
			i, j = j, i
		}
		return raw.Data[i*raw.Stride+j]
	}
	class := make([]int, d)
	for i := range class {
		class[i] = -1
	}
	for i := 0; i < d; i++ {
		if class[i] >= 0 {
			continue
		}
		gi := at(i, i)
		if !(gi > 0) {
			return nil, nil, false
		}
		var members []int
		for j := i; j < d; j++ {
			v := at(i, j)
			if v == 0 {
				continue
			}
			if class[j] >= 0 || math.Abs(v-gi) > 1e-14*gi {
				return nil, nil, false
			}
			members = append(members, j)
		}
		r := len(classes)
		for _, j := range members {
			class[j] = r
		}
		classes = append(classes, members)
		c = append(c, gi)
	}
	// Every entry must be cᵣ inside class r and 0 across classes — the
	// diagonal too: [[1, 1], [1, 2]] has one class by its first row, but it
	// is not 1·J (the diagonal was once left unchecked, and such a block was
	// planned as "total" with an objective below the certified optimum).
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := at(i, j)
			if class[i] == class[j] {
				if math.Abs(v-c[class[i]]) > 1e-14*c[class[i]] {
					return nil, nil, false
				}
			} else if v != 0 {
				return nil, nil, false
			}
		}
	}
	return classes, c, true
}

// groupsBlock is the optimal strategy for G = Σᵣ cᵣ·J_{Sᵣ}: one row
// 1_{Sᵣ} per class (disjoint supports, so every column has unit L1 and L2
// norm), X = Σᵣ J_{Sᵣ}, X⁺ = Σᵣ J_{Sᵣ}/|Sᵣ|², tr(G X⁺) = Σᵣ cᵣ. It is
// optimal and certified for L1 and L2 alike: the dual point yᵢ = cᵣ/|Sᵣ|
// on Sᵣ gives D^{1/2}GD^{1/2} = Σᵣ (cᵣ²/|Sᵣ|)·J_{Sᵣ} with eigenvalues cᵣ²,
// so g(y) = 2·Σᵣ cᵣ − Σᵣ cᵣ = Σᵣ cᵣ. Identity (classes of one) and total
// (one class) are the common cases.
func groupsBlock(d int, classes [][]int, c []float64) *block {
	if len(classes) == d {
		b := identityBlock(d)
		for _, v := range c {
			b.obj += v
		}
		b.lb = b.obj
		return b
	}
	a := mat.NewDense(len(classes), d, nil)
	x := mat.NewSymDense(d, nil)
	p := make([]float64, d*d)
	obj := 0.0
	for r, cl := range classes {
		inv := 1 / float64(len(cl)*len(cl))
		for _, i := range cl {
			a.Set(r, i, 1)
			for _, j := range cl {
				if i <= j {
					x.SetSym(i, j, 1)
				}
				p[i*d+j] = inv
			}
		}
		obj += c[r]
	}
	how := "groups"
	if len(classes) == 1 {
		how = "total"
	}
	return &block{a: a, x: x, pinv: p, obj: obj, lb: obj, how: how, singular: true}
}

// solveBlock returns the optimal strategy for one attribute's Gram G (d×d,
// positive semidefinite, positive diagonal) under the privacy's norm.
//
// Exact closed forms first: values no query touches are split off
// (solveOnSupport); a Gram of disjoint groups Σᵣ cᵣ·J_{Sᵣ} — diagonal,
// a total shared by every term, a partition into ranges — has the
// certified optimum of groupsBlock, singular or not. Otherwise newton.Solve
// (Gaussian) certifies the optimum, exactly also for a singular G (then X
// is singular with range(G) ⊆ range(X), and the factor keeps only the
// Rank rows that measure something). For Laplace noise the
// block is HDMM's p-Identity strategy optimized by lrm, and its lower bound
// is newton's L2 certificate (the L1 unit ball lies inside the L2 one, so no
// L1 strategy beats the L2 optimum).
func solveBlock(ctx context.Context, g *mat.SymDense, privacy calibrate.NoiseKind) (*block, error) {
	return solveBlockWith(ctx, g, privacy, nil)
}

// warmSolver is one attribute's newton.Solver, kept across the sweeps of
// block coordinate descent (and the union template's groups) so that its
// n×n workspaces are allocated once, with the X of the attribute's last
// solve in this descent as the next solve's warm start (newton's
// Options.Start): from one sweep to the next the block's Gram changes only
// through the weights cₚ, and the previous optimum is a few Newton steps
// from the new one. The start only moves where newton begins; each solve is
// still certified to blockTol.
type warmSolver struct {
	s     *newton.Solver
	start *mat.SymDense // X of the last converged solve, nil before the first
	tol   float64       // certified relative gap asked; 0 means blockTol
	theta *mat.Dense    // pure ε: the last p-Identity Θ, the next solve's warm start
	// warmOnly (pure ε) is set once a random restart failed to beat the
	// descent from the warm Θ: later solves descend from the warm Θ alone
	// (and polish it), see pureBlock.
	warmOnly bool
}

// solve runs newton on g, warm-started where a start of g's size is known.
func (w *warmSolver) solve(ctx context.Context, g *mat.SymDense, tol float64) (*newton.Result, error) {
	if w == nil {
		return newton.Solve(ctx, g, &newton.Options{Tol: tol})
	}
	w.s.Options.Tol, w.s.Options.Start = tol, nil
	if w.start != nil && w.start.SymmetricDim() == g.SymmetricDim() {
		w.s.Options.Start = w.start
	}
	// A fresh Result: the block keeps its X, so the next solve must not
	// overwrite it (the Solver's workspaces are what is reused).
	res := &newton.Result{}
	if err := w.s.Solve(ctx, g, res); err != nil {
		if res.X == nil {
			return nil, err
		}
		return res, err
	}
	if res.Status == newton.Converged && res.Rank == g.SymmetricDim() {
		w.start = res.X
	}
	return res, nil
}

// solveBlockWith is solveBlock with the attribute's warm solver (nil: a
// one-shot newton.Solve).
func solveBlockWith(ctx context.Context, g *mat.SymDense, privacy calibrate.NoiseKind, ws *warmSolver) (*block, error) {
	d := g.SymmetricDim()
	var support []int
	for i := 0; i < d; i++ {
		if g.At(i, i) > 0 {
			support = append(support, i)
		}
	}
	if len(support) < d {
		return solveOnSupport(ctx, g, support, privacy, ws)
	}
	if classes, c, ok := groupClasses(g); ok {
		return groupsBlock(d, classes, c), nil
	}
	tol := blockTol
	if ws != nil && ws.tol > 0 {
		tol = ws.tol
	}
	if privacy == calibrate.Laplace && ws != nil {
		// A block of a descent: only its strategy and error are read (the
		// plan's bound comes from singleBound), so newton's L2 solve,
		// which would only supply the block's bound, is skipped (on HDMM's
		// SF1 it was two fifths of the planning time).
		return pureBlock(ctx, g, nil, pureIters(tol), ws)
	}
	res, err := ws.solve(ctx, g, tol)
	if err == nil && res.Status == newton.Cancelled {
		// newton returns the best X so far on cancellation; a plan must
		// not build on an unfinished block.
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if privacy == calibrate.Laplace {
		return pureBlock(ctx, g, res, pureIters(tol), ws)
	}
	b := &block{x: res.X, obj: res.Objective, lb: res.LowerBound, theta: res.Regularization, how: "newton", iters: res.Iterations}
	// For a singular G only the first Rank rows of A are non-zero; the
	// others measure nothing and are dropped.
	rows := d
	if res.Rank > 0 && res.Rank < d {
		rows = res.Rank
	}
	b.a = mat.NewDense(rows, d, nil)
	for i := 0; i < rows; i++ {
		for j := i; j < d; j++ {
			b.a.Set(i, j, res.A.At(i, j))
		}
	}
	// A singular optimum has diag(X) ≤ 1, equal to 1 only up to the gap:
	// scaling A to unit max column norm keeps sensitivity 1 and can only
	// lower the error (X → X/s, X⁺ → s·X⁺).
	if s := maxDiag(b.a); s > 0 && s < 1 {
		b.a.Scale(1/math.Sqrt(s), b.a)
		x := mat.NewSymDense(d, nil)
		x.SymOuterK(1, b.a.T())
		b.x = x
	}
	if b.pinv, b.singular, err = inverse(b.x); err != nil {
		return nil, err
	}
	// The objective for the caller's G from our own inverse (newton's raw
	// objective is the same number; this keeps every error in the plan
	// computed by one formula).
	b.obj = b.trace(g)
	return b, nil
}

// pureIters is the p-Identity L-BFGS iteration cap for a block solved at
// the certified gap tol: lrm's default (0, 500 iterations) at blockTol,
// else 100 — a loose sweep of a descent, whose block is a waypoint (see
// sweepTolerance), gets a fifth of the default; the kept strategy's error
// is still computed exactly. A pure-ε descent stops on its change alone
// (see kronDescent.run), before its sweeps reach blockTol, so all its
// sweeps run at 100; each block's polish (see pureBlock) runs another 100.
func pureIters(tol float64) int {
	if tol > blockTol {
		return 100
	}
	return 0
}

// maxDiag returns the largest squared column norm of a.
func maxDiag(a *mat.Dense) float64 {
	r, c := a.Dims()
	mx := 0.0
	for j := 0; j < c; j++ {
		s := 0.0
		for i := 0; i < r; i++ {
			s += a.At(i, j) * a.At(i, j)
		}
		mx = math.Max(mx, s)
	}
	return mx
}

// solveOnSupport solves a block whose Gram has zero rows (values no query
// of the block touches — possible for a single block, e.g. a race predicate
// that leaves a code out, never for the weighted Gram of a whole workload,
// which NewKron checks covers every value). Restricted to the support S the
// problem is a smaller one of the same kind, and it has the same optimum:
// for any feasible X, (X⁻¹)_SS ⪰ (X_SS)⁻¹ (Schur complement), so
// tr(V X⁻¹) ≥ tr(V_S X_SS⁻¹), while X = diag(X_S, I) attains it. The
// factor is diag(A_S, I): unit column norms, full rank, certified by the
// support's certificate.
func solveOnSupport(ctx context.Context, g *mat.SymDense, support []int, privacy calibrate.NoiseKind, ws *warmSolver) (*block, error) {
	d := g.SymmetricDim()
	if len(support) == 0 { // a zero block: its products contribute nothing
		return identityBlock(d), nil
	}
	k := len(support)
	gs := mat.NewSymDense(k, nil)
	for a, i := range support {
		for b := a; b < k; b++ {
			gs.SetSym(a, b, g.At(i, support[b]))
		}
	}
	sb, err := solveBlockWith(ctx, gs, privacy, ws)
	if err != nil {
		return nil, err
	}
	inS := make([]bool, d)
	for _, i := range support {
		inS[i] = true
	}
	ra, _ := sb.a.Dims()
	rows := ra + d - k
	a := mat.NewDense(rows, d, nil)
	for r := 0; r < ra; r++ {
		for c, i := range support {
			a.Set(r, i, sb.a.At(r, c))
		}
	}
	r := ra
	for i := 0; i < d; i++ {
		if !inS[i] {
			a.Set(r, i, 1)
			r++
		}
	}
	x := mat.NewSymDense(d, nil)
	p := make([]float64, d*d)
	for i := 0; i < d; i++ {
		if !inS[i] {
			x.SetSym(i, i, 1)
			p[i*d+i] = 1
		}
	}
	for ai, i := range support {
		for bi, j := range support {
			x.SetSym(i, j, sb.x.At(ai, bi))
			p[i*d+j] = sb.pinv[ai*k+bi]
		}
	}
	return &block{a: a, x: x, pinv: p, obj: sb.obj, lb: sb.lb, theta: sb.theta, how: sb.how + " on the support", iters: sb.iters, singular: sb.singular}, nil
}

// pureBlock optimizes HDMM's p-Identity strategy for G under the L1 ball
// with lrm.PIdentityGram (on G itself: no factor of G, no eigensolve),
// and keeps newton's L2 certificate l2 as the lower bound (l2 nil: the
// trivial bound 0).
//
// With a warm solver the previous sweep's Θ is a start too, so a block
// never ends above the previous factor's error for the new G. The first
// solve of an attribute (no warm Θ yet) takes the best of HDMM's four
// random restarts (Φ is not convex in Θ); later ones descend from the warm
// Θ and from one random start, keeping the lower, and polish it (on HDMM's
// SF1 benchmark this reached a basin 0.3% lower than the warm Θ alone, for
// 2.3× the CPU time; four starts per sweep found the same basin at 2.9×).
// Once the warm Θ's descent beats the random start, the attribute's later
// solves skip the random start and only polish the warm descent: on SF1
// the random start never won again after that, and the polish — a fresh
// L-BFGS run from the kept Θ — was what lowered the error.
func pureBlock(ctx context.Context, g *mat.SymDense, l2 *newton.Result, iters int, ws *warmSolver) (*block, error) {
	o := &lrm.Options{Noise: calibrate.Laplace, Start: lrm.StartPIdentity, PIdentityIters: iters, PIdentityRestarts: 4}
	warm := false
	if ws != nil && ws.theta != nil {
		if _, c := ws.theta.Dims(); c == g.SymmetricDim() {
			warm = true
			o.PIdentityWarm, o.PIdentityRestarts = ws.theta, 1
			if ws.warmOnly {
				o.PIdentityRestarts, o.PIdentityPolish = 0, true
			}
		}
	}
	res, err := lrm.PIdentityGram(ctx, g, o)
	if err != nil {
		return nil, err
	}
	if ws != nil {
		ws.theta = res.Theta
		ws.warmOnly = warm && res.WarmKept
	}
	// Normalize to unit max L1 column norm exactly.
	l := mat.DenseCopyOf(res.L)
	r, d := l.Dims()
	mx := 0.0
	for j := 0; j < d; j++ {
		s := 0.0
		for i := 0; i < r; i++ {
			s += math.Abs(l.At(i, j))
		}
		mx = math.Max(mx, s)
	}
	if !(mx > 0) {
		return nil, fmt.Errorf("plan: the p-Identity strategy is zero")
	}
	l.Scale(1/mx, l)
	x := mat.NewSymDense(d, nil)
	x.SymOuterK(1, l.T())
	lb := 0.0 // no L2 solve (a descent's block): the trivial bound
	if l2 != nil {
		lb = l2.LowerBound
	}
	b := &block{a: l, x: x, lb: lb, how: "pidentity"}
	if b.pinv, b.singular, err = inverse(x); err != nil {
		// LᵀL = D⁻¹(I + ΘᵀΘ)D⁻¹ is definite, but with Θ's entries in the
		// thousands rounding can defeat its inverse: Identity is always
		// feasible and answers everything.
		ib := identityBlock(d)
		ib.obj, ib.lb = mat.Trace(g), lb
		return ib, nil
	}
	b.obj = b.trace(g)
	// Identity is feasible under L1 too; keep it when it is better.
	if id := mat.Trace(g); id < b.obj {
		ib := identityBlock(d)
		ib.obj, ib.lb = id, b.lb
		return ib, nil
	}
	return b, nil
}

// inverse returns X⁺ (row-major) of a positive semidefinite X: X⁻¹ when X
// is definite (Cholesky), else the pseudo-inverse from X's eigendecomposition.
// newton's exact solve of a singular Gram G returns a singular X with
// range(G) ⊆ range(X); every Gram the block is charged with (G and the
// per-term Grams whose weighted sum it is) then lies in range(X), where
// tr(V X⁺) is the error of the least-squares estimate through the
// rank-deficient factor.
//
// singular reports that the pseudo-inverse was used.
func inverse(x *mat.SymDense) (p []float64, singular bool, err error) {
	d := x.SymmetricDim()
	var inv mat.SymDense
	var c mat.Cholesky
	if ok := c.Factorize(x); !ok || c.InverseTo(&inv) != nil {
		if err := pseudoInverse(x, &inv); err != nil {
			return nil, true, err
		}
		singular = true
	}
	p = make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := inv.At(i, j)
			p[i*d+j], p[j*d+i] = v, v
		}
	}
	return p, singular, nil
}

// pseudoInverse sets dst = X⁺ = Q Λ⁺ Qᵀ with pinv.NewSym (dpsolve's one
// pseudo-inverse), dropping eigenvalues at or below d·ε·λ_max (the usual
// numerical-rank threshold; an eigenvalue that small is rounding of a zero
// one, and inverting it would amplify that rounding).
func pseudoInverse(x *mat.SymDense, dst *mat.SymDense) error {
	d := x.SymmetricDim()
	e, err := pinv.NewSym(x)
	if err != nil {
		return fmt.Errorf("plan: eigendecomposition of a strategy Gram failed")
	}
	vals := e.Values
	if lmax := vals[len(vals)-1]; !(lmax > 0) {
		return fmt.Errorf("plan: a strategy Gram is zero")
	}
	*dst = *mat.NewSymDense(d, nil)
	for k, l := range vals {
		if !e.Kept(k) {
			if l < -e.Cutoff {
				return fmt.Errorf("plan: a strategy Gram is not positive semidefinite (eigenvalue %g)", l)
			}
			continue
		}
		col := mat.Col(nil, k, e.Vectors)
		dst.SymRankOne(dst, 1/l, mat.NewVecDense(d, col))
	}
	return nil
}
