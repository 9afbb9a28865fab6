package tables

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/mechanism/marginals"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// sharedSpec mixes marginals (shared blocks), a product of identity and
// total blocks written as a product term, a product with a prefix block,
// and an attribute with a codebook.
const sharedSpec = `{"domain": [{"name": "sex", "values": ["F", "M"]}, {"name": "b", "size": 3},
  {"name": "c", "size": 2}, {"name": "d", "size": 4}],
 "workload": [{"name": "m", "marginals": {"upto": 2}},
  {"name": "p", "product": {"b": "identity", "d": "prefix"}, "weight": 2},
  {"name": "q", "product": {"sex": "identity", "c": "identity"}}]}`

// unshared returns w with every product's blocks spelled out, as explicitOf
// built every product before marginals shared their blocks.
func unshared(w *explicitWorkload) *explicitWorkload {
	out := &explicitWorkload{Domain: w.Domain}
	for _, t := range w.Terms {
		u := explicitTerm{Name: t.Name, Weight: t.Weight}
		for pi := range t.Products {
			q := *t.Products[pi].expanded()
			q.shared = nil
			u.Products = append(u.Products, q)
		}
		out.Terms = append(out.Terms, u)
	}
	return out
}

// TestExplicitOfMatchesDomainBlocks: every product of explicitOf, shared or
// not, expands to its domain product's blocks (their explicit matrices,
// kinds and descriptions) and its set.
func TestExplicitOfMatchesDomainBlocks(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(sharedSpec), ".", workload.Blocks)
	require.NoError(t, err)
	w, err := explicitOf(k)
	require.NoError(t, err)
	require.NoError(t, w.validate())
	shared := 0
	for ti, term := range k.Terms() {
		require.Len(t, w.Terms[ti].Products, len(term.Products))
		for pi, p := range term.Products {
			e := &w.Terms[ti].Products[pi]
			if e.shared != nil {
				shared++
			}
			x := e.expanded()
			assert.Equal(t, p.Queries(), e.Queries())
			for i, b := range p.Blocks {
				m, err := b.Matrix()
				require.NoError(t, err)
				assert.Equal(t, m.RawMatrix(), x.Blocks[i].RawMatrix(), "term %s product %d attribute %d", term.Name, pi, i)
				assert.Equal(t, b.Kind, x.Kinds[i])
				assert.Equal(t, blockSource(b), x.Sources[i])
			}
			if term.Kind == domain.TermMarginals {
				assert.Equal(t, p.Set, e.Set)
			}
		}
	}
	// The 1+4+6 marginals of upto 2, and q: the spec parser gives a
	// product term the same identity and total blocks.
	assert.Equal(t, 12, shared)
}

// TestSharedReleaseEqualsUnshared: a release (answers, variances, the
// estimators, answers.csv and the table files) on the shared workload is
// byte for byte the one on the same workload with every product spelled
// out, for a marginals plan and a Kronecker plan, with and without
// post-processing.
func TestSharedReleaseEqualsUnshared(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(sharedSpec), ".", workload.Blocks)
	require.NoError(t, err)
	w, err := explicitOf(k)
	require.NoError(t, err)
	mk, err := k.Part([]int{0})
	require.NoError(t, err)
	mw, err := explicitOf(mk)
	require.NoError(t, err)
	x := make([]float64, 2*3*2*4)
	for i := range x {
		x[i] = float64((i * 7) % 5)
	}
	strat := kronStrategy(t, identityTotal(2), identityTotal(3), identityTotal(2), identityTotal(4))
	for _, c := range []struct {
		name string
		w    *explicitWorkload
		s    Measurement
	}{{"kron", w, strat}, {"marginals", mw, MarginalsStrategy{}}} {
		for _, pp := range []Publishable{{}, {NonNegative: true, Integer: true}, {Integer: true}} {
			var got [2]string
			for v, ww := range []*explicitWorkload{c.w, unshared(c.w)} {
				r, err := prepare(ww, c.s, zcdp(0.5))
				require.NoError(t, err)
				_, sets := r.Needs()
				d := Data{Histogram: x, Tables: records.Marginalize(x, ww.Domain, sets)}
				res, err := r.Run(context.Background(), d, noise.NewSeededInsecure(3), nil, pp)
				require.NoError(t, err, "%s %+v", c.name, pp)
				var b bytes.Buffer
				require.NoError(t, writeAnswersCSV(&b, ww, res))
				dir := t.TempDir()
				names, err := writeTableFiles(dir, ww, res)
				require.NoError(t, err)
				for _, n := range names {
					f, err := os.ReadFile(filepath.Join(dir, n))
					require.NoError(t, err)
					b.WriteString(n + "\n")
					b.Write(f)
				}
				if res.Estimator != nil {
					for _, tc := range res.Estimator.Tables {
						b.WriteString(tc.Term + " " + tc.Table + "\n")
					}
				}
				got[v] = b.String()
				assert.Equal(t, r.Variances(), func() [][]float64 {
					r2, err := prepare(unshared(c.w), c.s, zcdp(0.5))
					require.NoError(t, err)
					return r2.Variances()
				}())
			}
			assert.Equal(t, got[1], got[0], "%s %+v", c.name, pp)
			assert.Contains(t, got[0], "sex label")
		}
	}
}

// TestExplicitOfMarginals100Memory: the 166,751 marginals of all ≤3-way
// sets over 100 binary attributes hold their sets, not three 100-entry
// slices each (1.3 GB before, over explicitOf's two calls in a release).
// The bound: each product is a ~110-byte struct plus its set (≤ 3 ints,
// a 32-byte allocation), ~24 MB; 64 MB leaves room for the slices'
// growth, and is a tenth of the 667 MB one call took spelled out.
func TestExplicitOfMarginals100Memory(t *testing.T) {
	var dom []string
	for i := 0; i < 100; i++ {
		dom = append(dom, fmt.Sprintf(`{"name": "a%d", "size": 2}`, i))
	}
	src := `{"domain": [` + strings.Join(dom, ", ") + `], "workload": [{"name": "m3", "marginals": {"k": 3}},
	  {"name": "m2", "marginals": {"k": 2}}, {"name": "m1", "marginals": {"k": 1}}]}`
	k, err := domain.ParseSpec(strings.NewReader(src), "", nil)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := explicitOf(k)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("explicitOf allocated %d bytes", alloc)
	assert.Less(t, alloc, uint64(64<<20))
	assert.Equal(t, 161700*8+4950*4+100*2, w.Queries())
	require.NoError(t, w.validate())
}

// TestRunReusesPreparedPseudoInverse: Prepare keeps each part's
// pseudo-inverse and Run reconstructs with it (a doubled one doubles the
// least-squares answers); without it Run computes the same one again.
func TestRunReusesPreparedPseudoInverse(t *testing.T) {
	w := smallWorkload()
	s := kronStrategy(t, identityTotal(3), identityTotal(4), identityTotal(2))
	x := make([]float64, 24)
	for i := range x {
		x[i] = float64((i * 5) % 7)
	}
	run := func(r *Release) [][]float64 {
		res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(9), nil, Publishable{})
		require.NoError(t, err)
		return res.Answers
	}
	r, err := prepare(w, s, zcdp(1))
	require.NoError(t, err)
	require.Len(t, r.pinvs, 1)
	want := run(r)
	r, err = prepare(w, s, zcdp(1))
	require.NoError(t, err)
	clear(r.pinvs)
	assert.Equal(t, want, run(r))
	r, err = prepare(w, s, zcdp(1))
	require.NoError(t, err)
	p := r.pinvs[s.A]
	require.NotNil(t, p)
	var fs []mat.Matrix
	for i := 0; i < p.Len(); i++ {
		f := mat.DenseCopyOf(p.Factor(i))
		if i == 0 {
			f.Scale(2, f)
		}
		fs = append(fs, f)
	}
	r.pinvs[s.A], err = kron.New(fs...)
	require.NoError(t, err)
	got := run(r)
	for ti := range want {
		for i := range want[ti] {
			assert.InDelta(t, 2*want[ti][i], got[ti][i], 1e-9*(1+math.Abs(want[ti][i])))
		}
	}
}

// TestPlanFileReleaseReusesCheckedPlan: reading a marginals plan file
// re-plans the workload to check the file, and preparing the release on
// the same explicit workload takes that plan instead of planning again;
// its variances are those of a release planned afresh.
func TestPlanFileReleaseReusesCheckedPlan(t *testing.T) {
	k := compactSpec(t, 2, 3)
	res, err := PlanStrategy(context.Background(), PlanRequest{Workload: k, Template: marginals.TemplateName, Writable: true})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WriteStrategy(dir, k, res))
	w, err := explicitOf(k)
	require.NoError(t, err)
	s, err := readStrategyDir(dir, w)
	require.NoError(t, err)
	checked := w.plans[marginals.Sum]
	require.NotNil(t, checked, "the file was checked against a re-plan")
	r, err := prepare(w, s, zcdp(2))
	require.NoError(t, err)
	assert.Same(t, checked, r.Plan())
	fresh, err := Prepare(k, MarginalsStrategy{}, zcdp(2))
	require.NoError(t, err)
	assert.NotSame(t, checked, fresh.Plan())
	assert.Equal(t, fresh.Variances(), r.Variances())
}
