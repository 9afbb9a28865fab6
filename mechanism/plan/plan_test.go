package plan

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

func spec(t *testing.T, s string) *domain.Kron {
	t.Helper()
	k, err := domain.ParseSpec(strings.NewReader(s), "", workload.Blocks)
	require.NoError(t, err)
	return k
}

// factorGrams returns Xᵢ = AᵢᵀAᵢ of a Kronecker strategy's factors and
// checks their sensitivity: the largest column norm is 1 (to 1e-12).
func factorGrams(t *testing.T, fs []Factor, l1 bool) []*mat.SymDense {
	t.Helper()
	xs := make([]*mat.SymDense, len(fs))
	for i, f := range fs {
		r, c := f.A.Dims()
		mx := 0.0
		for j := 0; j < c; j++ {
			s := 0.0
			for q := 0; q < r; q++ {
				if l1 {
					s += math.Abs(f.A.At(q, j))
				} else {
					s += f.A.At(q, j) * f.A.At(q, j)
				}
			}
			if !l1 {
				s = math.Sqrt(s)
			}
			mx = math.Max(mx, s)
		}
		assert.InDelta(t, 1, mx, 1e-12, "factor %s: max column norm", f.Attribute)
		xs[i] = mat.NewSymDense(c, nil)
		xs[i].SymOuterK(1, f.A.T())
	}
	return xs
}

const singleSpec = `{"domain": [{"name": "a", "size": 5}, {"name": "b", "size": 8}, {"name": "c", "size": 6}],
  "workload": [{"name": "p", "weight": 1.5, "product": {"a": "prefix", "b": "allrange", "c": "identitytotal"}}]}`

// A single product term: the plan is the product of the per-attribute
// newton optima (computed here by calling newton on each 1-D Gram), its
// lower bound is the product of their certificates, and on 240 cells the
// dense newton solve on the explicit Gram agrees: the structured plan is
// globally optimal, and its bound holds against the dense optimum.
// Tolerances: newton certifies every solve to a relative gap ≤ 1e-8
// (default) — the dense one — or 1e-12 (blocks), so objectives agree to
// 2e-8 relative and each bound is below each objective up to 1e-12·obj.
func TestSingleProductIsProductOfOptima(t *testing.T) {
	w := spec(t, singleSpec)
	res, err := Kron{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	want, bound := 1.5*1.5, 1.5*1.5
	for _, name := range []string{"prefix", "allrange", "identitytotal"} {
		size := map[string]int{"prefix": 5, "allrange": 8, "identitytotal": 6}[name]
		b, err := domain.NewBlock(name, size, workload.Blocks)
		require.NoError(t, err)
		nr, err := newton.Solve(context.Background(), b.Gram(), nil)
		require.NoError(t, err)
		want *= nr.Objective
		bound *= nr.LowerBound
	}
	assert.InDelta(t, want, res.Objective, 2e-8*want)
	assert.InDelta(t, bound, res.LowerBound, 2e-8*want)
	assert.LessOrEqual(t, res.LowerBound, res.Objective*(1+1e-12))
	assert.Equal(t, 0, res.Sweeps, "a single product needs no descent")
	assert.Equal(t, status.Converged, res.Status)

	dense, err := Dense{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	assert.InDelta(t, dense.Objective, res.Objective, 2e-8*dense.Objective, "product of optima is the global optimum")
	assert.LessOrEqual(t, res.LowerBound, dense.Objective*(1+1e-12), "the product bound holds against the dense optimum")
	assert.LessOrEqual(t, dense.LowerBound, res.Objective*(1+1e-12))

	// The strategy's error, recomputed from its factors by the workload's
	// own (eigendecomposition-based) evaluation, is the reported objective.
	xs := factorGrams(t, res.Strategy.Factors, false)
	total, per, err := w.KronError(xs)
	require.NoError(t, err)
	assert.InDelta(t, total, res.Objective, 1e-10*total)
	assert.InDelta(t, per[0], res.TermErrors[0].Error, 1e-10*total)
}

const unionSpec = `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 12}, {"name": "race", "size": 6}],
  "workload": [{"name": "t1", "product": {"sex": "identity", "age": "prefix"}},
               {"name": "t2", "weight": 2, "product": {"age": {"ranges": [[0, 3], [4, 8], [9, 11]]}, "race": "identity"}},
               {"name": "t3", "product": {"race": "identitytotal"}},
               {"name": "t4", "weight": 0.5, "product": {"sex": "identity", "age": "allrange", "race": "identity"}},
               {"name": "m", "marginals": {"k": 1}}]}`

// A union workload on 144 cells: block coordinate descent decreases the
// objective monotonically and stops on its rule; the kron plan is never
// below the dense certified lower bound and reports how far above the
// dense optimum it is.
func TestKronUnionAgainstDense(t *testing.T) {
	w := spec(t, unionSpec)
	var events []progress.Event
	res, err := Run(context.Background(), w, Kron{}, Options{Progress: func(e progress.Event) { events = append(events, e) }})
	require.NoError(t, err)
	require.Greater(t, res.Sweeps, 1)
	require.Len(t, res.History, res.Sweeps)
	for i := 1; i < len(res.History); i++ {
		assert.LessOrEqual(t, res.History[i], res.History[i-1], "sweep %d raised the objective", i+1)
	}
	n := len(res.History)
	assert.Equal(t, status.Converged, res.Status)
	assert.LessOrEqual(t, res.History[n-2]-res.History[n-1], 1e-10*res.History[n-1], "stopped on relative change ≤ 1e-10")
	// And not before: an earlier sweep may change as little only if it was
	// solved at a looser gap than blockTol (sweepTolerance), which never
	// ends the descent.
	checkStopRule(t, w, Options{})
	assert.Equal(t, res.History[n-1], res.Objective)
	// One event per sweep with that sweep's objective, then the
	// template's, dense's and Run's final events.
	require.Len(t, events, res.Sweeps+3)
	for i, h := range res.History {
		assert.Equal(t, progress.Event{Stage: "plan kron", Step: i + 1, Objective: h}, withoutNaN(events[i]), "sweep %d", i+1)
	}
	for i, stage := range []string{"plan kron", "plan dense", "plan"} {
		e := events[res.Sweeps+i]
		assert.True(t, e.Done, stage)
		assert.Equal(t, stage, e.Stage)
	}

	require.False(t, math.IsNaN(res.DenseObjective), "Run compares with dense on small domains")
	assert.GreaterOrEqual(t, res.Objective, res.LowerBound*(1-1e-12))
	assert.Equal(t, "dense newton certificate", res.LowerBoundSource)
	assert.GreaterOrEqual(t, res.AboveDense, -1e-8, "a Kronecker plan cannot beat the certified optimum")
	assert.InDelta(t, (res.Objective-res.DenseObjective)/res.DenseObjective, res.AboveDense, 1e-15)
	t.Logf("kron %.10g, dense %.10g (%.3g above), %d sweeps", res.Objective, res.DenseObjective, res.AboveDense, res.Sweeps)

	xs := factorGrams(t, res.Strategy.Factors, false)
	total, per, err := w.KronError(xs)
	require.NoError(t, err)
	assert.InDelta(t, total, res.Objective, 1e-10*total)
	for j := range per {
		assert.InDelta(t, per[j], res.TermErrors[j].Error, 1e-10*total)
	}

	// A sweep cap ends the descent early with its status.
	capped, err := Kron{}.Plan(context.Background(), w, Options{MaxSweeps: 1})
	require.NoError(t, err)
	assert.Equal(t, 1, capped.Sweeps)
	assert.Equal(t, status.IterationLimit, capped.Status)
	assert.GreaterOrEqual(t, capped.Objective, res.Objective)
}

// The union template: weights with Σ w² = 1, its objective re-evaluated by
// the workload's UnionError, never above kron (kron's single part is one of
// its candidates), never below the dense bound.
func TestUnionTemplate(t *testing.T) {
	w := spec(t, unionSpec)
	u, err := Run(context.Background(), w, Union{}, Options{})
	require.NoError(t, err)
	k, err := Kron{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	assert.LessOrEqual(t, u.Objective, k.Objective*(1+1e-12))
	assert.GreaterOrEqual(t, u.Objective, u.LowerBound*(1-1e-12))
	sum := 0.0
	names := map[string]int{}
	for i, tm := range w.Terms() {
		names[tm.Name] = i
	}
	var parts []domain.UnionPart
	for _, p := range u.Strategy.Parts {
		sum += p.Weight * p.Weight
		up := domain.UnionPart{Weight: p.Weight, X: factorGrams(t, p.Factors, false)}
		for _, tn := range p.Terms {
			up.Terms = append(up.Terms, names[tn])
		}
		parts = append(parts, up)
	}
	assert.InDelta(t, 1, sum, 1e-12)
	total, per, err := w.UnionError(parts)
	require.NoError(t, err)
	assert.InDelta(t, total, u.Objective, 1e-10*total)
	for j := range per {
		assert.InDelta(t, per[j], u.TermErrors[j].Error, 1e-10*total)
	}
	t.Logf("union %.10g in %d parts, kron %.10g, dense %.10g", u.Objective, len(u.Strategy.Parts), k.Objective, u.DenseObjective)
}

// An attribute that is "total" in every term: its factor is the exact 1×d
// ones row (X = J, singular), with error factor exactly 1 per unit of its
// Gram, certified; the plan matches the dense solve, newton's exact solve
// of the singular Gram (to its certified gap 1e-8).
func TestTotalEverywhereIsExact(t *testing.T) {
	w := spec(t, `{"domain": [{"name": "a", "size": 6}, {"name": "b", "size": 5}],
	  "workload": [{"product": {"a": "prefix"}}, {"weight": 2, "product": {"a": "identity"}}]}`)
	res, err := Kron{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	f := res.Strategy.Factors[1]
	r, c := f.A.Dims()
	assert.Equal(t, []int{1, 5}, []int{r, c}, "the total's factor is one row")
	assert.Equal(t, 0.0, res.Regularization)
	assert.Equal(t, 1, res.Sweeps, "b is fixed; one exact solve for a, the only free attribute")
	// a's Gram is prefix + 4·I whatever b's factor; b contributes tr(J J⁺) = 1.
	g := mat.NewSymDense(6, nil)
	pb, _ := domain.NewBlock("prefix", 6, workload.Blocks)
	g.AddSym(pb.Gram(), scaled(identityBlock(6).x, 4))
	nr, err := newton.Solve(context.Background(), g, nil)
	require.NoError(t, err)
	assert.InDelta(t, nr.Objective, res.Objective, 2e-8*nr.Objective)
	dense, err := Dense{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	assert.LessOrEqual(t, dense.LowerBound, res.Objective*(1+1e-12))
	assert.InDelta(t, dense.Objective, res.Objective, 2e-8*res.Objective)
}

// The portfolio runs every template and keeps the best; Tried lists them.
// No template certifies this workload of several products (kron's bound
// is a product of per-attribute bounds, union has none), so the portfolio
// must not stop early: every template runs.
func TestBestPortfolio(t *testing.T) {
	w := spec(t, unionSpec)
	assert.False(t, Kron{}.Certifies(w, Options{}))
	res, err := Best{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	require.Len(t, res.Tried, 3)
	for _, tr := range res.Tried {
		assert.Empty(t, tr.Err)
		assert.GreaterOrEqual(t, tr.Objective, res.Objective)
	}
	assert.False(t, math.IsNaN(res.AboveDense))
	k, err := Kron{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	assert.Less(t, k.LowerBound, k.Objective*(1-certifiedGap), "kron is not certified here, so stopping after it would be wrong")
}

// Pure ε-DP: factors have unit L1 column norm; the L2 product-of-
// certificates bound still holds (the L1 ball is inside the L2 ball); the
// objective is never below the Gaussian plan's.
func TestPurePrivacy(t *testing.T) {
	w := spec(t, unionSpec)
	res, err := Kron{}.Plan(context.Background(), w, Options{Noise: calibrate.Laplace})
	require.NoError(t, err)
	xs := factorGrams(t, res.Strategy.Factors, true)
	total, _, err := w.KronError(xs)
	require.NoError(t, err)
	assert.InDelta(t, total, res.Objective, 1e-9*total, "the L1-normalized factors have the reported error")
	for i := 1; i < len(res.History); i++ {
		assert.LessOrEqual(t, res.History[i], res.History[i-1])
	}
	g, err := Kron{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Objective, g.Objective*(1-1e-9))
	assert.GreaterOrEqual(t, res.Objective, res.LowerBound)
	u, err := Union{}.Plan(context.Background(), w, Options{Noise: calibrate.Laplace})
	require.NoError(t, err)
	sum := 0.0
	for _, p := range u.Strategy.Parts {
		sum += p.Weight
		factorGrams(t, p.Factors, true)
	}
	assert.InDelta(t, 1, sum, 1e-12, "pure: Σ w = 1 (L1 sensitivity of the stack)")
	_, err = Dense{}.Plan(context.Background(), w, Options{Noise: calibrate.Laplace})
	assert.ErrorIs(t, err, ErrInput)
}

func TestBadOptions(t *testing.T) {
	w := spec(t, unionSpec)
	_, err := Kron{}.Plan(context.Background(), w, Options{Noise: "pure"})
	assert.ErrorIs(t, err, ErrInput)
	_, err = Run(context.Background(), w, nil, Options{})
	assert.ErrorIs(t, err, ErrInput)
	big := spec(t, `{"domain": [{"name": "a", "size": 100}, {"name": "b", "size": 100}], "workload": [{"product": {"a": "identity", "b": "identity"}}]}`)
	_, err = Dense{}.Plan(context.Background(), big, Options{})
	assert.ErrorIs(t, err, ErrInput)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// Memory never grows with the cell count: planning ten attributes of 16
// values (1.1e12 cells; one float64 per cell would be 8.8 TB) allocates a
// few MiB in all, and the single product is exact and certified.
func TestMemoryIndependentOfCells(t *testing.T) {
	var dom, prod []string
	for i := 0; i < 10; i++ {
		dom = append(dom, fmt.Sprintf(`{"name": "a%d", "size": 16}`, i))
		prod = append(prod, fmt.Sprintf(`"a%d": "%s"`, i, []string{"prefix", "allrange", "identitytotal"}[i%3]))
	}
	w := spec(t, `{"domain": [`+strings.Join(dom, ",")+`], "workload": [{"product": {`+strings.Join(prod, ",")+`}},
	  {"weight": 0.5, "product": {"a0": "identity", "a5": "identity"}}]}`)
	require.Equal(t, 1<<40, w.Cells())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Best{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB in all, objective %.10g, %d sweeps", float64(alloc)/(1<<20), res.Objective, res.Sweeps)
	assert.Less(t, alloc, uint64(256<<20), "total allocation is bounded by the per-attribute work, not the cells")
	assert.GreaterOrEqual(t, res.Objective, res.LowerBound)
}

// Both 1-way marginals of an 8×8 table, three independent closed forms:
// the union of the two marginal strategies I⊗1ᵀ and 1ᵀ⊗I costs
// (√8 + √8)² = 32 with weights w² = ½; the optimum over all strategies is
// the SVD bound (tr V^{1/2})²/n (attained for marginal workloads), and V =
// I⊗J + J⊗I has eigenvalues 16 (once), 8 (14 times), 0, so it is
// (4 + 14·√8)²/64; and the best Kronecker strategy, X = (1−β)I + βJ on both
// attributes by symmetry, costs min_β 16/(1+7β)·(7/(1−β) + 1/(1+7β)),
// minimized here by a fine grid. Union beats kron on this workload, and
// both stay above the dense certified bound.
func TestOneWayMarginalsClosedForms(t *testing.T) {
	w := spec(t, `{"domain": [{"name": "a", "size": 8}, {"name": "b", "size": 8}],
	  "workload": [{"name": "A", "product": {"a": "identity"}}, {"name": "B", "product": {"b": "identity"}}]}`)
	res, err := Best{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	byName := map[string]float64{}
	for _, tr := range res.Tried {
		byName[tr.Template] = tr.Objective
	}
	opt := math.Pow(4+14*math.Sqrt(8), 2) / 64
	kronOpt := math.Inf(1)
	for i := 1; i < 1000000; i++ {
		b := float64(i) / 1e6
		kronOpt = math.Min(kronOpt, 16/(1+7*b)*(7/(1-b)+1/(1+7*b)))
	}
	assert.InDelta(t, 32, byName["union"], 1e-12)
	// The dense solve of this singular V is exact to its certified gap 1e-8.
	assert.InDelta(t, opt, byName["dense"], 2e-8*opt)
	assert.LessOrEqual(t, res.LowerBound, opt*(1+1e-12))
	// The grid's resolution (1e-6 in β near a smooth minimum) limits the
	// closed form to ~1e-10 relative; newton's blocks are certified to 1e-12.
	assert.InDelta(t, kronOpt, byName["kron"], 1e-8*kronOpt)
	assert.Equal(t, "dense", res.Template)
	u, err := Union{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	require.Len(t, u.Strategy.Parts, 2)
	for _, p := range u.Strategy.Parts {
		assert.InDelta(t, math.Sqrt(0.5), p.Weight, 1e-15)
	}
}

// A cancelled context stops every template with an error wrapping
// context.Canceled (the CLI then writes nothing).
func TestCancelled(t *testing.T) {
	w := spec(t, unionSpec)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tp := range []Template{Kron{}, Union{}, Dense{}, Best{}} {
		_, err := Run(ctx, w, tp, Options{})
		assert.ErrorIs(t, err, context.Canceled, tp.Name())
	}
}

// A zero-weight term costs nothing and gets no part of its own (a part of
// weight 0 would have infinite error per unit weight).
func TestUnionZeroWeightTerm(t *testing.T) {
	w := spec(t, `{"domain": [{"name": "a", "size": 8}, {"name": "b", "size": 8}],
	  "workload": [{"name": "A", "product": {"a": "identity"}}, {"name": "Z", "weight": 0, "product": {"a": "prefix"}},
	               {"name": "B", "product": {"b": "identity"}}]}`)
	u, err := Union{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	assert.InDelta(t, 32, u.Objective, 1e-12)
	require.Len(t, u.Strategy.Parts, 2)
	n := 0
	for _, p := range u.Strategy.Parts {
		assert.Greater(t, p.Weight, 0.0)
		n += len(p.Terms)
	}
	assert.Equal(t, 3, n, "every term is in a part")
	for _, te := range u.TermErrors {
		assert.False(t, math.IsNaN(te.Error), te.Term)
	}
	assert.Equal(t, 0.0, u.TermErrors[1].Error)
}

// The portfolio stops at kron when kron is certified optimal (a single
// product term): union and dense are skipped, and Tried says so. The plan
// is checked against the dense certified optimum computed separately
// (both certified to newton's 1e-8 gap).
func TestBestSkipsUnionWhenCertified(t *testing.T) {
	w := spec(t, singleSpec)
	assert.True(t, Kron{}.Certifies(w, Options{}))
	res, err := Best{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	require.Len(t, res.Tried, 3)
	assert.Equal(t, "kron", res.Tried[0].Template)
	assert.Empty(t, res.Tried[0].Err)
	for _, tr := range res.Tried[1:] {
		assert.Contains(t, []string{"union", "dense"}, tr.Template)
		assert.Contains(t, tr.Err, "the kron plan is certified optimal")
		assert.Zero(t, tr.Seconds, "a skipped template costs nothing")
	}
	assert.Equal(t, "kron", res.Template)
	assert.GreaterOrEqual(t, res.LowerBound, res.Objective*(1-certifiedGap))
	dense, err := Dense{}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	assert.InDelta(t, dense.Objective, res.Objective, 2e-8*res.Objective)
}

// A template that certifies the workload runs first whatever its place
// in the list, and the portfolio stops there.
func TestBestRunsCertifierFirst(t *testing.T) {
	w := spec(t, singleSpec)
	res, err := Best{Templates: []Template{Union{}, Dense{}, Kron{}}}.Plan(context.Background(), w, Options{})
	require.NoError(t, err)
	require.Len(t, res.Tried, 3)
	assert.Equal(t, []string{"kron", "union", "dense"}, []string{res.Tried[0].Template, res.Tried[1].Template, res.Tried[2].Template})
	assert.Equal(t, "kron", res.Template)
}

// withoutNaN returns e with its unknown (NaN) fields and its time zeroed,
// for comparison.
func withoutNaN(e progress.Event) progress.Event {
	if !progress.Known(e.Objective) {
		e.Objective = 0
	}
	if !progress.Known(e.Bound) {
		e.Bound = 0
	}
	if !progress.Known(e.Gap) {
		e.Gap = 0
	}
	e.Seconds = 0
	return e
}

// A strategy the caller's Accept rejects is listed as not accepted and
// never returned.
func TestBestNotAccepted(t *testing.T) {
	w := spec(t, unionSpec)
	noUnion := func(s *Plan) error {
		if s.Kind() == "union" {
			return fmt.Errorf("no unions here")
		}
		return nil
	}
	res, err := Best{}.Plan(context.Background(), w, Options{Accept: noUnion})
	require.NoError(t, err)
	assert.NotEqual(t, "union", res.Strategy.Kind())
	found := false
	for _, tr := range res.Tried {
		if tr.Template == "union" {
			found = true
			assert.Contains(t, tr.Err, "not accepted: no unions here")
		}
	}
	assert.True(t, found)
}
