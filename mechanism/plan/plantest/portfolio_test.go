package plantest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// All ≤2-way marginals of a 3×4×2×3 domain (72 cells, so the dense
// certified optimum is cheap).
const marginalsSpec = `{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}, {"name": "d", "size": 3}],
  "workload": [{"name": "m", "marginals": {"upto": 2}}]}`

// A workload of marginals under Gaussian noise: the portfolio must run the
// marginals template first (it certifies the workload, though it is last
// in the list) and stop there; every other template is listed as skipped.
// The plan is the certified optimum: its objective equals the dense
// newton optimum computed separately (both certified to newton's 1e-8
// gap, hence the 2e-8 tolerance), and the dense re-scoring of the plan.
func TestPortfolioStopsAtCertifiedMarginals(t *testing.T) {
	w, err := domain.ParseSpec(strings.NewReader(marginalsSpec), ".", workload.Blocks)
	require.NoError(t, err)
	res, err := planner.Best().Plan(context.Background(), w, plan.Options{})
	require.NoError(t, err)
	assert.Equal(t, "marginals", res.Template)
	require.NotEmpty(t, res.Tried)
	assert.Equal(t, "marginals", res.Tried[0].Template)
	assert.Empty(t, res.Tried[0].Err)
	var skipped []string
	for _, tr := range res.Tried[1:] {
		assert.Contains(t, tr.Err, "the marginals plan is certified optimal", tr.Template)
		assert.Zero(t, tr.Seconds)
		skipped = append(skipped, tr.Template)
	}
	assert.ElementsMatch(t, []string{"kron", "union", "dense"}, skipped)
	assert.GreaterOrEqual(t, res.LowerBound, res.Objective*(1-1e-8))
	dense, err := plan.Dense{}.Plan(context.Background(), w, plan.Options{})
	require.NoError(t, err)
	assert.InDelta(t, dense.Objective, res.Objective, 2e-8*res.Objective)
	e, sens := rescore(t, w, res)
	assert.LessOrEqual(t, sens, 1+1e-12)
	assert.InDelta(t, 1, e/res.Objective, 1e-8)
}

// The same workload under pure ε: no template certifies it (the Gaussian
// SVD bound is not attained by any L1 strategy), so the portfolio must not
// stop early: kron, union and the marginals template all run, and the
// plan is the lowest of them.
func TestPortfolioDoesNotStopUncertified(t *testing.T) {
	w, err := domain.ParseSpec(strings.NewReader(marginalsSpec), ".", workload.Blocks)
	require.NoError(t, err)
	res, err := planner.Best().Plan(context.Background(), w, plan.Options{Noise: calibrate.Laplace})
	require.NoError(t, err)
	var ran []string
	for _, tr := range res.Tried {
		assert.Empty(t, tr.Err, tr.Template)
		assert.GreaterOrEqual(t, tr.Objective, res.Objective*(1-1e-12), tr.Template)
		ran = append(ran, tr.Template)
	}
	assert.Equal(t, []string{"kron", "union", "marginals"}, ran)
	assert.Less(t, res.LowerBound, res.Objective*(1-1e-8), "not certified")
}

// Run by name: every name resolves, an unknown one is an input error.
func TestPlannerNames(t *testing.T) {
	assert.Equal(t, []string{"best", "dense", "kron", "marginals", "union"}, planner.Names())
	for _, n := range planner.Names() {
		tp, err := planner.Lookup(n)
		require.NoError(t, err)
		assert.Equal(t, n, tp.Name())
	}
	_, err := planner.Lookup("nosuch")
	assert.ErrorIs(t, err, plan.ErrInput)
	assert.Contains(t, err.Error(), "best, dense, kron, marginals, union")
}
