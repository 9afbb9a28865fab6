package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/tables"
)

const marginalsSpec = `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 10}, {"name": "race", "size": 4}],
  "workload": [{"name": "m", "marginals": {"upto": 2}},
               {"name": "sr", "weight": 2, "product": {"sex": "identity", "race": "identity"}}]}`

// dpsolve plan --template marginals: the JSON reports per-marginal
// variances and a lower bound the objective attains; --objective max gives
// a certified plan with a smaller largest variance; --out writes
// strategy.json with "template": "marginals" and one noise variance per
// residual subset; the portfolio (best) picks marginals on a marginal
// workload too large for its dense run (on small ones dense ties it and,
// being earlier, is kept).
func TestPlanMarginals(t *testing.T) {
	spec := writeSpec(t, marginalsSpec)
	out := filepath.Join(t.TempDir(), "plan")
	code, stdout, stderr := runCLI(t, "plan", "--spec", spec, "--template", "marginals", "--json", "--out", out)
	require.Equal(t, 0, code, stderr)
	var sum struct {
		Template   string  `json:"template"`
		Objective  float64 `json:"objective"`
		LowerBound float64 `json:"lower_bound"`
		Marginals  struct {
			Objective   string  `json:"objective"`
			MaxVariance float64 `json:"max_variance"`
			Residuals   int     `json:"residual_subsets"`
			Sets        []struct {
				Attributes   []string `json:"attributes"`
				CellVariance *float64 `json:"cell_variance"`
			} `json:"sets"`
		} `json:"marginals"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	assert.Equal(t, "marginals", sum.Template)
	assert.InDelta(t, 1, sum.LowerBound/sum.Objective, 1e-12, "the SVD bound is attained")
	require.Len(t, sum.Marginals.Sets, 1+3+3+1)
	assert.Equal(t, []string{"sex", "race"}, sum.Marginals.Sets[7].Attributes)
	for _, s := range sum.Marginals.Sets {
		require.NotNil(t, s.CellVariance)
		assert.Greater(t, *s.CellVariance, 0.0)
	}
	assert.Equal(t, 1+3+3, sum.Marginals.Residuals) // ∅, 3 singletons, 3 pairs

	var sf struct {
		Template  string `json:"template"`
		Residuals []struct {
			Attributes []string `json:"attributes"`
			Variance   float64  `json:"variance"`
		} `json:"residuals"`
		Sensitivity2 float64 `json:"squared_l2_sensitivity"`
	}
	data, err := os.ReadFile(filepath.Join(out, "strategy.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sf))
	assert.Equal(t, "marginals", sf.Template)
	assert.Len(t, sf.Residuals, 7)
	assert.InDelta(t, 1, sf.Sensitivity2, 1e-12)

	code, stdout, stderr = runCLI(t, "plan", "--spec", spec, "--template", "marginals", "--objective", "max", "--json")
	require.Equal(t, 0, code, stderr)
	var mx struct {
		Marginals struct {
			Objective   string  `json:"objective"`
			MaxVariance float64 `json:"max_variance"`
			LowerBound  float64 `json:"lower_bound"`
			Gap         float64 `json:"gap"`
		} `json:"marginals"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &mx))
	assert.Equal(t, "max", mx.Marginals.Objective)
	assert.LessOrEqual(t, mx.Marginals.Gap, 1e-8)
	assert.LessOrEqual(t, mx.Marginals.MaxVariance, sum.Marginals.MaxVariance*(1+1e-12))
	assert.LessOrEqual(t, mx.Marginals.LowerBound, mx.Marginals.MaxVariance)

	big := writeSpec(t, `{"domain": [{"name": "a", "size": 8}, {"name": "b", "size": 10}, {"name": "c", "size": 16}],
	  "workload": [{"name": "m", "marginals": {"upto": 2}}]}`)
	code, stdout, stderr = runCLI(t, "plan", "--spec", big, "--template", "marginals", "--json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	code, stdout, stderr = runCLI(t, "plan", "--spec", big, "--json")
	require.Equal(t, 0, code, stderr)
	var best struct {
		Template  string  `json:"template"`
		Objective float64 `json:"objective"`
		Templates []struct {
			Template string `json:"template"`
		} `json:"templates"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &best))
	assert.Equal(t, "marginals", best.Template)
	assert.InDelta(t, 1, best.Objective/sum.Objective, 1e-12)
	assert.Len(t, best.Templates, 3, "kron, union, marginals (1280 cells: no dense run)")

	code, _, stderr = runCLI(t, "plan", "--spec", spec, "--template", "kron", "--objective", "max")
	assert.Equal(t, 2, code, stderr)
	code, _, stderr = runCLI(t, "plan", "--spec", spec, "--template", "marginals", "--objective", "median")
	assert.Equal(t, 2, code, stderr)
	// A workload that is not only marginals is planned in the marginals
	// family (residual closed form): a family bound, no global one; the
	// max objective takes only marginals.
	code, stdout, stderr = runCLI(t, "plan", "--spec", writeSpec(t, planSpec), "--template", "marginals", "--json")
	require.Equal(t, 0, code, stderr)
	var fam struct {
		Objective   float64  `json:"objective"`
		FamilyBound *float64 `json:"family_bound"`
		Family      *struct {
			Privacy   string `json:"privacy"`
			Residuals int    `json:"residual_subsets"`
		} `json:"marginals_family"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &fam))
	require.NotNil(t, fam.Family)
	require.NotNil(t, fam.FamilyBound)
	assert.Equal(t, "gaussian", fam.Family.Privacy)
	assert.InDelta(t, fam.Objective, *fam.FamilyBound, 1e-12*fam.Objective, "the closed form is the family's optimum")
	code, _, stderr = runCLI(t, "plan", "--spec", writeSpec(t, planSpec), "--template", "marginals", "--objective", "max")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "is not a marginal")
}

// A marginals plan directory written by dpsolve plan is read back by the
// release (pipeline/tables), which re-plans and checks every residual's
// variance against the file.
func TestPlanMarginalsReleaseReadsIt(t *testing.T) {
	spec := writeSpec(t, `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 10}, {"name": "race", "size": 4}],
	  "workload": [{"name": "m", "marginals": {"upto": 2}}, {"name": "x", "weight": 3, "marginals": {"sets": [["sex", "age", "race"]]}}]}`)
	out := filepath.Join(t.TempDir(), "plan")
	code, _, stderr := runCLI(t, "plan", "--spec", spec, "--template", "marginals", "--out", out, "--quiet")
	require.Equal(t, 0, code, stderr)
	k, err := domain.LoadSpec(spec, workload.Blocks)
	require.NoError(t, err)
	s, err := tables.ReadStrategyDir(out, k)
	require.NoError(t, err)
	assert.Equal(t, "marginals", s.Template())
}

// Under --privacy pure the portfolio runs the marginals template too (its
// Laplace table plan); on a marginal workload it beats kron and union, and
// its plan directory carries "privacy": "pure" and the measured tables.
func TestPlanPureMarginalsInPortfolio(t *testing.T) {
	spec := writeSpec(t, `{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
	 "workload": [{"name": "m", "marginals": {"sets": [["a", "c"], ["b"]]}}]}`)
	out := filepath.Join(t.TempDir(), "plan")
	code, stdout, stderr := runCLI(t, "plan", "--spec", spec, "--privacy", "pure", "--json", "--out", out)
	require.Equal(t, 0, code, stderr)
	var res struct {
		Template  string  `json:"template"`
		Objective float64 `json:"objective"`
		Templates []struct {
			Template  string   `json:"template"`
			Objective *float64 `json:"objective"`
		} `json:"templates"`
		Pure *struct {
			Tables []struct {
				Share float64 `json:"epsilon_share"`
			} `json:"tables"`
		} `json:"marginals_pure"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Equal(t, "marginals", res.Template)
	require.NotNil(t, res.Pure)
	share := 0.0
	for _, tb := range res.Pure.Tables {
		share += tb.Share
	}
	assert.InDelta(t, 1, share, 1e-12, "the tables' shares of ε add up to 1")
	for _, tr := range res.Templates {
		if tr.Template != "marginals" && tr.Objective != nil {
			assert.Less(t, res.Objective, *tr.Objective, "marginals beats %s", tr.Template)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "strategy.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"privacy": "pure"`)
	assert.Contains(t, string(b), `"tables"`)
}

// On a plan of many marginals (all ≤3-way of 30 binary attributes: 4,526,
// over the compact-file threshold) the text output lists the first
// planTextRows marginals and ends with a "… N more" line; --json lists
// every one (in the workload's order, the same rows as the text); --out
// writes the compact strategy.json (runs), which release reads back.
func TestPlanMarginalsTextCapped(t *testing.T) {
	var dom []string
	for i := 0; i < 30; i++ {
		dom = append(dom, fmt.Sprintf(`{"name": "a%d", "size": 2}`, i))
	}
	spec := writeSpec(t, `{"domain": [`+strings.Join(dom, ", ")+`], "workload": [{"name": "m", "marginals": {"upto": 3}}]}`)
	const sets = 1 + 30 + 435 + 4060
	out := filepath.Join(t.TempDir(), "plan")
	code, stdout, stderr := runCLI(t, "plan", "--spec", spec, "--template", "marginals", "--out", out)
	require.Equal(t, 0, code, stderr)
	var rows []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "  marginal ") {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, planTextRows)
	assert.Contains(t, stdout, fmt.Sprintf("  … %d more marginals (--json lists them all)\n", sets-planTextRows))
	assert.Contains(t, rows[1], "{a0}")

	code, stdout, stderr = runCLI(t, "plan", "--spec", spec, "--template", "marginals", "--json")
	require.Equal(t, 0, code, stderr)
	var sum struct {
		Marginals struct {
			Sets []struct {
				Attributes []string `json:"attributes"`
			} `json:"sets"`
		} `json:"marginals"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Len(t, sum.Marginals.Sets, sets)
	assert.Equal(t, []string{"a27", "a28", "a29"}, sum.Marginals.Sets[sets-1].Attributes)
	for i, r := range rows {
		assert.Contains(t, r, "{"+strings.Join(sum.Marginals.Sets[i].Attributes, ", ")+"}")
	}

	data, err := os.ReadFile(filepath.Join(out, "strategy.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"residual_runs"`)
	assert.Less(t, len(data), 10000)
	k, err := domain.LoadSpec(spec, workload.Blocks)
	require.NoError(t, err)
	_, err = tables.ReadStrategyDir(out, k)
	require.NoError(t, err)

	// release --plan measures with it: one answer row per marginal cell.
	var csv strings.Builder
	for i := 0; i < 30; i++ {
		if i > 0 {
			csv.WriteByte(',')
		}
		fmt.Fprintf(&csv, "a%d", i)
	}
	for r := 0; r < 20; r++ {
		csv.WriteByte('\n')
		for i := 0; i < 30; i++ {
			if i > 0 {
				csv.WriteByte(',')
			}
			fmt.Fprintf(&csv, "%d", (r>>(i%5))&1)
		}
	}
	records := filepath.Join(t.TempDir(), "data.csv")
	require.NoError(t, os.WriteFile(records, []byte(csv.String()+"\n"), 0o644))
	rel := filepath.Join(t.TempDir(), "rel")
	code, _, stderr = runCLI(t, "release", "--spec", spec, "--plan", out, "--rho", "1", "--data", records, "--out", rel,
		"--insecure-seed", "1", "--quiet")
	require.Equal(t, 0, code, stderr)
	answers, err := os.ReadFile(filepath.Join(rel, "answers.csv"))
	require.NoError(t, err)
	assert.Equal(t, 1+1+30*2+435*4+4060*8, strings.Count(string(answers), "\n"), "header and one row per cell")
}
