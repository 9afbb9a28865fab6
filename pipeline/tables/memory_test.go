package tables

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// TestMemoryEstimateCountsConsistency: for a marginals plan the estimate
// with post-processing exceeds the one without by at least everything the
// consistency step allocates in its first Dykstra sweep, output included
// (the runtime's allocation counter, on 2-way marginals over 3×40 cells:
// 827,880 bytes = 21.6 copies of the 4,800 cells); later sweeps' buffers
// replace earlier ones. So a release that fits by the estimate does not
// run out of memory in the step the estimate used to ignore, and a change
// that makes the step allocate more fails here.
func TestMemoryEstimateCountsConsistency(t *testing.T) {
	dom := []domain.Attribute{{Name: "a", Size: 40}, {Name: "b", Size: 40}, {Name: "c", Size: 40}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{{Name: "two-way", Weight: 1, Products: []explicitProduct{
		marginalProduct(dom, []int{0, 1}), marginalProduct(dom, []int{0, 2}), marginalProduct(dom, []int{1, 2}),
	}}}}
	r, err := prepare(w, MarginalsStrategy{}, zcdp(1))
	require.NoError(t, err)
	extra := r.MemoryEstimate(Publishable{NonNegative: true}) - r.MemoryEstimate(Publishable{})
	require.Greater(t, extra, 0.0)

	plan := r.Plan()
	var est []marginals.Estimate
	for i, s := range plan.Sets {
		if len(s.Attrs) != 2 {
			continue // the workload's tables are the 2-way sets
		}
		cells := 1
		for _, a := range s.Attrs {
			cells *= dom[a].Size
		}
		v := make([]float64, cells)
		for k := range v {
			v[k] = float64(k%7) - 2 // some negative cells
		}
		est = append(est, marginals.Estimate{Table: marginals.Table{Attrs: s.Attrs, Values: v}, Set: i, CellVariance: 1})
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err = plan.MakeConsistent(est, marginals.ConsistencyOptions{NonNegative: true, MaxIter: 1})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	used := float64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("one sweep allocated %.0f bytes; the estimate adds %.0f", used, extra)
	require.GreaterOrEqual(t, extra, used)
}

// TestMemoryEstimateCountsNonNegative: for a histogram plan the estimate
// with --nonnegative --integer exceeds the one without by at least what
// the estimator allocates beyond the plain release when it runs one
// iteration (the runtime's allocation counter; each further iteration's
// buffers replace the last ones as garbage), except its second answering
// of the terms.
func TestMemoryEstimateCountsNonNegative(t *testing.T) {
	// 32,000 cells: the fixed overheads (reports, factor copies, SVD
	// workspaces) are then small beside the vectors.
	dom := []domain.Attribute{{Name: "a", Size: 40}, {Name: "b", Size: 40}, {Name: "c", Size: 20}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{{Name: "two-way", Weight: 1, Products: []explicitProduct{
		marginalProduct(dom, []int{0, 1}), marginalProduct(dom, []int{0, 2}), marginalProduct(dom, []int{1, 2}),
	}}}}
	r, err := prepare(w, kronStrategy(t, identityTotal(40), identityTotal(40), identityTotal(20)), zcdp(0.05))
	require.NoError(t, err)
	pp := Publishable{NonNegative: true, Integer: true, NNLS: NNLSOptions{MaxIter: 1}}
	extra := r.MemoryEstimate(pp) - r.MemoryEstimate(Publishable{})
	x := make([]float64, 40*40*20)
	alloc := func(pp Publishable) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(1), nil, pp)
		require.NoError(t, err)
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	plain, nn := alloc(Publishable{}), alloc(pp)
	// The estimator answers the terms a second time (from its histogram);
	// those products' buffers are garbage one product after another, not
	// live together, so one answering's allocation is not counted.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.NoError(t, r.answerPart(make([][]float64, len(w.Terms)), 0, x))
	runtime.ReadMemStats(&after)
	answering := float64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("the estimator allocated %.0f bytes more (%.0f of them answering again); the estimate adds %.0f", nn-plain, answering, extra)
	require.GreaterOrEqual(t, extra, nn-plain-answering)
}
