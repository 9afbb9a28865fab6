package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The publishable tables on the Adult records, from the CLI: kron plans
// (examples/adult/mixed.json: marginals and cumulative age by income) and
// the marginals template (all 91 two-way marginals), under ρ = 0.5 and pure
// ε = 1, with --nonnegative --integer: every answer a non-negative
// integer, every marginal's grand total (from answers.csv, summed by this
// test) equal to the released total in release.json and within 2% of the
// 48,842 records (the least-squares total's stddev is at most a few
// hundred here; 2% is 977). Seeded noise (simulation only). With
// DPSOLVE_LONG_TESTS=1 the kron cases use examples/adult/cumulative.json
// (six attributes, 342,720 cells: minutes on a loaded machine).
func TestReleaseAdultPublishableTotals(t *testing.T) {
	if testing.Short() {
		t.Skip("four Adult releases")
	}
	// The Adult records the repository ships (byte-identical to
	// shared/data/adult/adult.csv): never skipped in a fresh clone.
	data := filepath.Join("..", "..", "examples", "adult", "data", "coded", "adult.csv")
	dir := t.TempDir()
	kronSpec := filepath.Join("..", "..", "examples", "adult", "mixed.json")
	twoWay := filepath.Join(dir, "two-way-4.json")
	require.NoError(t, os.WriteFile(twoWay, []byte(`{"domain": [{"name": "age", "size": 85}, {"name": "race", "size": 5},
	  {"name": "sex", "size": 2}, {"name": "income>50K", "size": 2}], "workload": [{"name": "pairs", "marginals": {"k": 2}}]}`), 0o644))
	if os.Getenv("DPSOLVE_LONG_TESTS") == "1" {
		kronSpec = filepath.Join("..", "..", "examples", "adult", "cumulative.json")
		twoWay = filepath.Join("..", "..", "examples", "adult", "two-way.json")
	}
	for _, pv := range []string{"gaussian", "pure"} {
		code, _, stderr := releaseCLI(t, "plan", "--spec", kronSpec, "--template", "kron", "--privacy", pv, "--quiet", "--out", filepath.Join(dir, "plan-"+pv))
		require.Equal(t, 0, code, stderr)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"kron-rho", []string{"--spec", kronSpec, "--plan", filepath.Join(dir, "plan-gaussian"), "--rho", "0.5"}},
		{"kron-eps", []string{"--spec", kronSpec, "--plan", filepath.Join(dir, "plan-pure"), "--eps", "1"}},
		{"marginals-rho", []string{"--spec", twoWay, "--template", "marginals", "--rho", "0.5"}},
		{"marginals-eps", []string{"--spec", twoWay, "--template", "marginals", "--eps", "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			args := append([]string{"release", "--data", data, "--out", out, "--insecure-seed", "5", "--nonnegative", "--integer"}, c.args...)
			code, _, stderr := releaseCLI(t, args...)
			require.Equal(t, 0, code, stderr)
			b, err := os.ReadFile(filepath.Join(out, "release.json"))
			require.NoError(t, err)
			var rep struct {
				Estimator struct {
					LeastSquaresTotal    float64 `json:"least_squares_total"`
					LeastSquaresTotalStd float64 `json:"least_squares_total_stddev"`
					ReleasedTotal        float64 `json:"released_total"`
					Tables               []struct {
						Term       string   `json:"term"`
						Table      string   `json:"table"`
						GrandTotal *float64 `json:"grand_total"`
					} `json:"tables"`
				} `json:"estimator"`
			}
			require.NoError(t, json.Unmarshal(b, &rep))
			e := rep.Estimator
			require.NotEmpty(t, e.Tables)
			t.Logf("released total %v (least squares %.1f ± %.1f), %d tables", e.ReleasedTotal, e.LeastSquaresTotal, e.LeastSquaresTotalStd, len(e.Tables))
			assert.InDelta(t, 48842, e.ReleasedTotal, 0.02*48842)
			// Sum every marginal of the pairs term from answers.csv, table by
			// table (a new table starts where the set of labelled columns
			// changes).
			rows := readAnswers(t, filepath.Join(out, "answers.csv"))
			sums := map[string]float64{}
			var order []string
			for _, r := range rows[1:] {
				v, err := strconv.ParseFloat(r[2], 64)
				require.NoError(t, err)
				require.GreaterOrEqual(t, v, 0.0)
				require.Equal(t, math.Round(v), v)
				if r[0] == "age-cumulative" {
					continue // prefix rows overlap: not a partition of the records
				}
				key := r[0] + ":"
				for i, l := range r[4:] {
					if l != "" && rows[0][4+i] != "private" {
						key += rows[0][4+i] + ","
					}
				}
				if _, ok := sums[key]; !ok {
					order = append(order, key)
				}
				sums[key] += v
			}
			require.NotEmpty(t, order)
			for _, k := range order {
				assert.Equal(t, e.ReleasedTotal, sums[k], "table %s", k)
			}
			for _, tb := range e.Tables {
				if tb.GrandTotal != nil {
					assert.Equal(t, e.ReleasedTotal, *tb.GrandTotal, "%s %s", tb.Term, tb.Table)
				}
			}
		})
	}
}
