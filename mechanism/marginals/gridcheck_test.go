package marginals

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// CheckGrid refuses exactly what Measure would refuse for the grid, and
// draws nothing: counts of 10³⁰⁰ fail both, ordinary counts pass both, and
// so do cells of 3.3·10⁷ (a total of 4·10⁸, a national population, at σ = 1;
// refused while the bound was 2⁶² grid units).
// (Before it existed a release learnt of such data only from Measure,
// after the budget was charged.)
func TestCheckGridMatchesMeasure(t *testing.T) {
	sizes := []int{3, 4}
	sets := []Set{{Attrs: []int{0, 1}, Weight: 1}}
	p, err := NewPlan(sizes, sets, Sum, nil)
	require.NoError(t, err)
	for _, c := range []struct {
		v  float64
		ok bool
	}{{5, true}, {3.3e7, true}, {1e300, false}} {
		vals := make([]float64, 12)
		for i := range vals {
			vals[i] = c.v
		}
		tabs := []Table{{Attrs: []int{0, 1}, Values: vals}}
		err := p.CheckGrid(tabs, 1)
		_, merr := p.Measure(tabs, noise.NewSeededInsecure(1), 1) // a simulation
		if c.ok {
			assert.NoError(t, err)
			assert.NoError(t, merr)
		} else {
			assert.ErrorContains(t, err, "too large for the noise grid")
			assert.ErrorContains(t, merr, "too large for the grid")
		}
	}
	pp, err := NewPurePlan(sizes, sets, Sum)
	require.NoError(t, err)
	cals, err := pp.Calibrate(budgettest.PureDP(1))
	require.NoError(t, err)
	huge := make([]float64, 12)
	for i := range huge {
		huge[i] = 1e300
	}
	assert.ErrorContains(t, pp.CheckGrid([]Table{{Attrs: []int{0, 1}, Values: huge}}, cals), "too large for the noise grid")
	assert.NoError(t, pp.CheckGrid([]Table{{Attrs: []int{0, 1}, Values: make([]float64, 12)}}, cals))
}
