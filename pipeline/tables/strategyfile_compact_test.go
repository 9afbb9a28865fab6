package tables

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/model/domain"
)

// compactSpec is all ≤3-way marginals of 25 attributes of the given sizes
// (cycled): 2,626 marginals and as many residuals, above compactAbove;
// with mixed sizes, a term of weight 2 on two listed sets is added.
func compactSpec(t *testing.T, sizes ...int) *domain.Kron {
	var dom []string
	for i := 0; i < 25; i++ {
		dom = append(dom, fmt.Sprintf(`{"name": "x%d", "size": %d}`, i, sizes[i%len(sizes)]))
	}
	extra := ""
	if len(sizes) > 1 {
		extra = `, {"name": "p", "weight": 2, "marginals": {"sets": [["x3", "x1"], ["x7"]]}}`
	}
	src := `{"domain": [` + strings.Join(dom, ", ") + `], "workload": [{"name": "m", "marginals": {"upto": 3}}` + extra + `]}`
	k, err := domain.ParseSpec(strings.NewReader(src), "", nil)
	require.NoError(t, err)
	return k
}

// A large marginals plan is written as runs, and the runs are lossless:
// expanded in order they are exactly the plan's residual and marginal
// lists as marginals.StrategyFile writes them (the independent, one
// object per entry form). Uniform sizes give one "all" run per set size;
// mixed sizes give listed runs. The file reads back (ReadStrategyDir
// checks every residual against a re-plan) into the strategy that was
// planned: its expected error at ρ = 1/2 is the plan's objective (1e-9 as
// in TestWriteStrategyRoundTrip).
func TestCompactMarginalsFile(t *testing.T) {
	for _, sizes := range [][]int{{2}, {2, 3}, {3, 2, 4}} {
		k := compactSpec(t, sizes...)
		res, err := PlanStrategy(context.Background(), PlanRequest{Workload: k, Template: marginals.TemplateName, Writable: true})
		require.NoError(t, err)
		p := res.Strategy.Other.(*marginals.Plan)
		require.Greater(t, len(p.Residuals)+len(p.Marginals), compactAbove)
		dir := t.TempDir()
		require.NoError(t, WriteStrategy(dir, k, res))
		data, err := os.ReadFile(filepath.Join(dir, "strategy.json"))
		require.NoError(t, err)
		var f compactMarginalsFile
		require.NoError(t, json.Unmarshal(data, &f))
		assert.NotContains(t, string(data), `"residuals"`)
		full := p.StrategyFile(attributeNames(k))
		assert.Equal(t, full.Domain, f.Domain)
		assert.Equal(t, full.TotalSquaredError, f.TotalSquaredError)
		assert.InEpsilon(t, full.Sensitivity2, f.Sensitivity2, 1e-15)
		pos := map[string]int{}
		for i, a := range full.Domain {
			pos[a.Name] = i
		}
		positions := func(names []string) []int {
			out := []int{}
			for _, n := range names {
				out = append(out, pos[n])
			}
			return out
		}
		i := 0
		for _, r := range f.ResidualRuns {
			require.NoError(t, expandRun(r, len(f.Domain), len(f.ResidualValues), func(attrs []int, row int) error {
				require.Less(t, i, len(full.Residuals))
				want := full.Residuals[i]
				assert.Equal(t, positions(want.Attributes), append([]int{}, attrs...))
				assert.Equal(t, want.Variance, f.ResidualValues[row].Variance)
				assert.Equal(t, want.Coords, f.ResidualValues[row].Coords)
				i++
				return nil
			}))
		}
		assert.Equal(t, len(full.Residuals), i)
		assert.Equal(t, len(full.Residuals), f.ResidualCount)
		i = 0
		for _, r := range f.MarginalRuns {
			require.NoError(t, expandRun(r, len(f.Domain), len(f.MarginalValues), func(attrs []int, row int) error {
				require.Less(t, i, len(full.Marginals))
				want, got := full.Marginals[i], f.MarginalValues[row]
				assert.Equal(t, positions(want.Attributes), append([]int{}, attrs...))
				assert.Equal(t, want.Weight, got.Weight)
				assert.Equal(t, want.Cells, got.Cells)
				assert.Equal(t, want.CellVariance, got.CellVariance)
				assert.Equal(t, want.TotalSquaredError, got.TotalSquaredError)
				i++
				return nil
			}))
		}
		assert.Equal(t, len(full.Marginals), i)
		assert.Equal(t, len(full.Marginals), f.MarginalCount)
		// ∅, 25 singletons, 300 pairs, 2,300 triples: one "all" run each,
		// for the residuals (whatever the sizes) and the upto-3 term's
		// marginals; mixed sizes add the weighted term's listed sets.
		require.GreaterOrEqual(t, len(f.MarginalRuns), 4)
		require.Len(t, f.ResidualRuns, 4)
		for s := range 4 {
			for _, r := range []setRun{f.ResidualRuns[s], f.MarginalRuns[s]} {
				assert.Equal(t, []any{s, binomialCount(25, s), true}, []any{r.Size, r.Count, r.All})
			}
		}
		t.Logf("sizes %v: %d bytes, %d and %d value rows", sizes, len(data), len(f.ResidualValues), len(f.MarginalValues))
		if len(sizes) == 1 {
			assert.Len(t, f.MarginalRuns, 4)
			assert.Len(t, f.ResidualValues, 4, "one variance per set size")
			assert.Less(t, len(data), 8000)
		} else {
			assert.Equal(t, [][]int{{1, 3}}, f.MarginalRuns[4].Sets)
			assert.Equal(t, [][]int{{7}}, f.MarginalRuns[5].Sets)
			assert.Less(t, len(data), 40000)
		}

		s, err := ReadStrategyDir(dir, k)
		require.NoError(t, err)
		r, err := Prepare(k, s, zcdp(0.5))
		require.NoError(t, err)
		assert.InEpsilon(t, res.Objective, r.ExpectedWeightedError(), 1e-9)
	}
}

// A compact file that does not match the spec's re-plan, or is malformed,
// is refused with an input error; nothing panics.
func TestCompactMarginalsFileRefused(t *testing.T) {
	k := compactSpec(t, 2, 3)
	res, err := PlanStrategy(context.Background(), PlanRequest{Workload: k, Template: marginals.TemplateName, Writable: true})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WriteStrategy(dir, k, res))
	data, err := os.ReadFile(filepath.Join(dir, "strategy.json"))
	require.NoError(t, err)
	for name, edit := range map[string]func(f map[string]any){
		"variance": func(f map[string]any) {
			r := f["residual_values"].([]any)[1].(map[string]any)
			r["variance"] = r["variance"].(float64) * 1.001
		},
		"run dropped": func(f map[string]any) {
			rs := f["residual_runs"].([]any)
			f["residual_runs"] = rs[:len(rs)-1]
		},
		"count": func(f map[string]any) { f["residual_count"] = 7 },
		"all count": func(f map[string]any) {
			f["residual_runs"] = append(f["residual_runs"].([]any), map[string]any{"size": 2, "count": 5, "all": true, "value": 0})
		},
		"position": func(f map[string]any) {
			f["residual_runs"] = append(f["residual_runs"].([]any), map[string]any{"size": 1, "count": 1, "sets": [][]int{{25}}, "value": 0})
		},
		"row": func(f map[string]any) {
			f["residual_runs"].([]any)[0].(map[string]any)["value"] = 99
		},
		"no row": func(f map[string]any) {
			delete(f["residual_runs"].([]any)[0].(map[string]any), "value")
		},
		"rows short": func(f map[string]any) {
			r := f["residual_runs"].([]any)[2].(map[string]any)
			r["values"] = r["values"].([]any)[1:]
		},
		"not increasing": func(f map[string]any) {
			f["residual_runs"] = append(f["residual_runs"].([]any), map[string]any{"size": 2, "count": 1, "sets": [][]int{{3, 1}}, "value": 0})
		},
	} {
		var f map[string]any
		require.NoError(t, json.Unmarshal(data, &f))
		edit(f)
		b, err := json.Marshal(f)
		require.NoError(t, err)
		bad := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(bad, "strategy.json"), b, 0o644))
		_, err = ReadStrategyDir(bad, k)
		assert.ErrorIs(t, err, ErrInput, name)
		t.Logf("%s: %v", name, err)
	}
}
