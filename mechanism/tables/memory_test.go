package tables

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/records"
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
	dom := []records.Attribute{{Name: "a", Size: 40}, {Name: "b", Size: 40}, {Name: "c", Size: 40}}
	w := &Workload{Domain: dom, Terms: []Term{{Name: "two-way", Weight: 1, Products: []Product{
		Marginal(dom, []int{0, 1}), Marginal(dom, []int{0, 2}), Marginal(dom, []int{1, 2}),
	}}}}
	r, err := Prepare(w, MarginalsStrategy{}, zcdp(1))
	require.NoError(t, err)
	extra := r.MemoryEstimate(PostProcess{NonNegative: true}) - r.MemoryEstimate(PostProcess{})
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
