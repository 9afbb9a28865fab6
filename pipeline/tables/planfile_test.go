package tables

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

const planfileSpec = `{"domain": [{"name": "sex", "size": 2}, {"name": "age group", "size": 5}, {"name": "race", "size": 3}],
  "workload": [{"name": "m", "marginals": {"upto": 1}},
               {"name": "p", "product": {"age group": "prefix", "race": "identity"}, "weight": 2}]}`

// Every template's plan, written by WriteStrategy and read back by
// ReadStrategyDir, is the strategy that was planned: its expected error at
// ρ = 1/2 (σ² = 1 at sensitivity 1) is the plan's objective. The two are
// computed independently (the planner's Kron/union error formulas, and
// Prepare's per-answer variances from the matrices read back); they agree
// to the noise grid's snapping, which inflates σ by a relative ~2^-40·√p,
// so 1e-9 is loose by orders of magnitude and still fails on any lost or
// swapped factor.
func TestWriteStrategyRoundTrip(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(planfileSpec), ".", workload.Blocks)
	require.NoError(t, err)
	for _, tc := range []struct {
		template string
		obj      marginals.Objective
		spec     *domain.Kron
	}{{"kron", "", k}, {"union", "", k}, {"dense", "", k}, {"best", "", k}} {
		res, err := PlanStrategy(context.Background(), PlanRequest{Workload: tc.spec, Template: tc.template, Objective: tc.obj, Writable: true})
		require.NoError(t, err, tc.template)
		require.NoError(t, Writable(res.Strategy), tc.template)
		dir := t.TempDir()
		require.NoError(t, WriteStrategy(dir, tc.spec, res), tc.template)
		s, err := ReadStrategyDir(dir, k)
		require.NoError(t, err, tc.template)
		r, err := Prepare(tc.spec, s, zcdp(0.5))
		require.NoError(t, err, tc.template)
		assert.InEpsilon(t, res.Objective, r.ExpectedWeightedError(), 1e-9, tc.template)
	}
}

// The marginals template under the max objective is planned directly (the
// portfolio takes only sum), and its file re-plans to the same residuals:
// ReadStrategyDir refuses one whose listed variances differ.
func TestPlanStrategyMarginalsMax(t *testing.T) {
	spec := `{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 3}, {"name": "c", "size": 4}],
	  "workload": [{"name": "m", "marginals": {"upto": 2}}]}`
	k, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	require.NoError(t, err)
	res, err := PlanStrategy(context.Background(), PlanRequest{Workload: k, Template: marginals.TemplateName, Objective: marginals.Max, Writable: true})
	require.NoError(t, err)
	mp, ok := res.Strategy.Other.(*marginals.Plan)
	require.True(t, ok)
	assert.Equal(t, marginals.Max, mp.Objective)
	dir := t.TempDir()
	require.NoError(t, WriteStrategy(dir, k, res))
	data, err := os.ReadFile(filepath.Join(dir, "strategy.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"objective": "max"`)
	tmpl, priv := PlanInfo(dir)
	assert.Equal(t, []string{"marginals", "gaussian"}, []string{tmpl, priv})
	tmpl, priv = PlanInfo(t.TempDir())
	assert.Equal(t, []string{"", ""}, []string{tmpl, priv}, "no strategy.json")
	_, err = ReadStrategyDir(dir, k)
	require.NoError(t, err)

	// A strategy with no file format is refused by Writable and WriteStrategy.
	other := &plan.Result{Template: "x", Strategy: &plan.Plan{Template: "x", Other: struct{}{}}}
	assert.Error(t, Writable(other.Strategy))
	assert.Error(t, WriteStrategy(t.TempDir(), k, other))
}

// A Laplace (pure ε-DP) kron plan is stored with "privacy": "pure", the
// value plan files have always held, although plan.Options and plan.Plan
// now carry the noise model as a calibrate.NoiseKind ("laplace").
func TestPlanFileKeepsPurePrivacy(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(planfileSpec), ".", workload.Blocks)
	require.NoError(t, err)
	for noise, want := range map[calibrate.NoiseKind]string{calibrate.Laplace: "pure", calibrate.Gaussian: "gaussian"} {
		res, err := PlanStrategy(context.Background(), PlanRequest{Workload: k, Template: "kron", Writable: true,
			Options: plan.Options{Noise: noise}})
		require.NoError(t, err, noise)
		require.Equal(t, noise, res.Strategy.Noise)
		dir := t.TempDir()
		require.NoError(t, WriteStrategy(dir, k, res))
		tmpl, priv := PlanInfo(dir)
		assert.Equal(t, []string{"kron", want}, []string{tmpl, priv}, noise)
	}
}
