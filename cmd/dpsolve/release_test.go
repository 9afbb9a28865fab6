package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
)

// relFixture writes a small spec (a 3×4×2 domain: two marginals and a
// product term), a records CSV, and a kron plan directory whose factors are
// [I; 1ᵀ]/√2.
func relFixture(t *testing.T) (dir, spec, data, planDir string) {
	t.Helper()
	dir = t.TempDir()
	spec = filepath.Join(dir, "spec.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
	 "workload": [{"name": "m", "marginals": {"sets": [["a", "c"], ["b"]]}},
	              {"name": "p", "weight": 2, "product": {"b": "prefix", "c": "identity"}}]}`), 0o644))
	var sb strings.Builder
	sb.WriteString("id,c,b,a\n")
	for i := 0; i < 200; i++ {
		sb.WriteString(strconv.Itoa(i) + "," + strconv.Itoa(i%2) + "," + strconv.Itoa((i/2)%4) + "," + strconv.Itoa((i*7)%3) + "\n")
	}
	data = filepath.Join(dir, "records.csv")
	require.NoError(t, os.WriteFile(data, []byte(sb.String()), 0o644))
	planDir = filepath.Join(dir, "plan")
	require.NoError(t, os.Mkdir(planDir, 0o755))
	var factors []string
	for _, a := range []struct {
		name string
		d    int
	}{{"a", 3}, {"b", 4}, {"c", 2}} {
		m := mat.NewDense(a.d+1, a.d, nil)
		for i := 0; i < a.d; i++ {
			m.Set(i, i, 1/math.Sqrt2)
			m.Set(a.d, i, 1/math.Sqrt2)
		}
		require.NoError(t, matio.WriteMatrix(filepath.Join(planDir, "A_"+a.name+".npy"), m))
		factors = append(factors, `{"attribute": "`+a.name+`", "file": "A_`+a.name+`.npy"}`)
	}
	require.NoError(t, os.WriteFile(filepath.Join(planDir, "strategy.json"),
		[]byte(`{"template": "kron", "factors": [`+strings.Join(factors, ",")+`]}`), 0o644))
	return dir, spec, data, planDir
}

func TestReleaseDryRunTouchesNoData(t *testing.T) {
	dir, spec, _, planDir := relFixture(t)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := releaseCLI(t, "release", "--spec", spec, "--data", filepath.Join(dir, "missing.csv"),
		"--plan", planDir, "--rho", "0.5", "--out", out, "--dry-run", "--json")
	require.Equal(t, 0, code, stderr)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	for _, k := range []string{"expected_total_squared_error", "rho", "sigma", "queries", "mechanism", "terms"} {
		assert.Contains(t, j, k)
	}
	assert.Equal(t, true, j["dry_run"])
	assert.Equal(t, 0.5, j["rho"])
	// Δ = 1, σ = Δ/√(2ρ) = 1, raised by snapping (g√p/Δ ≈ 2^-41·√60 ≈ 4e-12)
	// and the grid step (≤ 2^-40): within 1e-10.
	assert.InDelta(t, 1.0, j["sigma"], 1e-10)
	assert.Equal(t, float64(3*2+4+4*2), j["queries"])
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "a dry run writes nothing")
	// The table form prints the per-term 95% half-widths.
	code, stdout, _ = releaseCLI(t, "release", "--spec", spec, "--plan", planDir, "--rho", "0.5", "--dry-run")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "dry run: no data read")
	assert.Contains(t, stdout, "95% ±")
}

func readAnswers(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

func TestReleaseWritesAnswersAndRecord(t *testing.T) {
	dir, spec, data, planDir := relFixture(t)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := releaseCLI(t, "release", "--spec", spec, "--data", data, "--plan", planDir,
		"--eps", "1", "--delta", "1e-6", "--out", out, "--insecure-seed", "3", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "NOT differentially private")
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	assert.Equal(t, false, j["private"])
	assert.Equal(t, "3", j["seed"])
	assert.Equal(t, 1.0, j["epsilon"])
	rows := readAnswers(t, filepath.Join(out, "answers.csv"))
	// Seeded noise: a last column says every row is not private.
	assert.Equal(t, []string{"term", "query", "answer", "stddev", "a", "b", "c", "table", "private"}, rows[0])
	assert.Equal(t, "false", rows[5][8])
	require.Len(t, rows, 1+18)
	// Marginal {a,c}: attribute columns a and c hold the query's values.
	assert.Equal(t, []string{"m", "0", "0", ""}, []string{rows[1][0], rows[1][1], rows[1][4], rows[1][5]})
	assert.Equal(t, []string{"m", "5", "2", "", "1"}, []string{rows[6][0], rows[6][1], rows[6][4], rows[6][5], rows[6][6]})
	// Marginal {b} continues the term's query index.
	assert.Equal(t, []string{"m", "6", "", "0", ""}, []string{rows[7][0], rows[7][1], rows[7][4], rows[7][5], rows[7][6]})
	// Product term {b: prefix, c: identity}: b's prefix row i is 0..i, c
	// the value, c fastest; a (summed over) stays empty.
	assert.Equal(t, []string{"p", "0", "", "0..0", "0"}, []string{rows[11][0], rows[11][1], rows[11][4], rows[11][5], rows[11][6]})
	assert.Equal(t, []string{"p", "1", "", "0..0", "1"}, []string{rows[12][0], rows[12][1], rows[12][4], rows[12][5], rows[12][6]})
	assert.Equal(t, []string{"p", "7", "", "0..3", "1"}, []string{rows[18][0], rows[18][1], rows[18][4], rows[18][5], rows[18][6]})
	// Answers are near the truth (200 records; σ ≈ 5): the {b} marginal
	// sums to 200 within 6 standard deviations of the sum (≤ 4 sd each).
	sum, sd := 0.0, 0.0
	for _, r := range rows[7:11] {
		v, _ := strconv.ParseFloat(r[2], 64)
		s, _ := strconv.ParseFloat(r[3], 64)
		sum += v
		sd = math.Max(sd, s)
	}
	assert.InDelta(t, 200, sum, 6*4*sd)
	var rec map[string]any
	b, err := os.ReadFile(filepath.Join(out, "release.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rec))
	assert.Equal(t, "kron", rec["template"])
	assert.Equal(t, float64(200), rec["records"])
	assert.Len(t, rec["spec_sha256"], 64)
	// The same seed gives the same release (simulation is reproducible).
	out2 := filepath.Join(dir, "out2")
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", data, "--plan", planDir,
		"--eps", "1", "--delta", "1e-6", "--out", out2, "--insecure-seed", "3")
	require.Equal(t, 0, code, stderr)
	a1, _ := os.ReadFile(filepath.Join(out, "answers.csv"))
	a2, _ := os.ReadFile(filepath.Join(out2, "answers.csv"))
	assert.Equal(t, a1, a2)
	// An existing, non-empty --out is refused.
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", data, "--plan", planDir, "--rho", "1", "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "not empty")
}

func TestReleaseBadInput(t *testing.T) {
	dir, spec, data, planDir := relFixture(t)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	wrongLen := filepath.Join(dir, "h.npy")
	require.NoError(t, matio.WriteVector(wrongLen, make([]float64, 23)))
	ledgerFull := write("ledger.json", `{"limit": {"rho": 0.1}}`)
	cases := []struct {
		name string
		code int
		args []string
		want string
	}{
		{"header without attribute", 1, []string{"--data", write("h1.csv", "a,b\n0,0\n"), "--rho", "1"}, `lacks the attribute(s) "c"`},
		{"out of range", 1, []string{"--data", write("h2.csv", "a,b,c\n0,0,0\n3,0,0\n"), "--rho", "1"}, `record 2 (line 3), column "a": value "3"`},
		{"non-integer", 1, []string{"--data", write("h3.csv", "a,b,c\n0,1.5,0\n"), "--rho", "1"}, `value "1.5"`},
		{"empty csv", 1, []string{"--data", write("h4.csv", ""), "--rho", "1"}, "empty"},
		{"rho zero", 2, []string{"--data", data, "--rho", "0"}, "--rho must be positive, got 0"},
		{"no budget", 2, []string{"--data", data}, "give a budget"},
		{"rho negative", 2, []string{"--data", data, "--rho", "-1"}, "rho must be positive"},
		{"rho and eps", 2, []string{"--data", data, "--rho", "1", "--eps", "1"}, "not both"},
		{"delta alone", 2, []string{"--data", data, "--delta", "1e-6"}, "--delta needs --eps"},
		{"overspent ledger", 1, []string{"--data", data, "--rho", "0.5", "--budget-file", ledgerFull}, "budget exceeded"},
		{"wrong histogram length", 1, []string{"--data", wrongLen, "--rho", "1"}, "has 23 cells but the domain (a,b,c) has 24"},
		{"bad split", 2, []string{"--data", data, "--rho", "1", "--split", "0"}, "--split"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			args := append([]string{"release", "--spec", spec, "--plan", planDir, "--out", out}, c.args...)
			code, _, stderr := releaseCLI(t, args...)
			assert.Equal(t, c.code, code, stderr)
			assert.Contains(t, stderr, c.want)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "nothing written")
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tmp-"), "no temporary output left: %s", e.Name())
	}
	b, _ := os.ReadFile(ledgerFull)
	assert.NotContains(t, string(b), "charged", "the refused release was not recorded")
}

func TestReleaseLedgerAndSplit(t *testing.T) {
	dir, spec, data, planDir := relFixture(t)
	led := filepath.Join(dir, "budget.json")
	require.NoError(t, os.WriteFile(led, []byte(`{"limit": {"rho": 1}}`), 0o644))
	rel := func(name string, extra ...string) (int, string, string) {
		args := append([]string{"release", "--spec", spec, "--data", data, "--plan", planDir, "--out", filepath.Join(dir, name),
			"--budget-file", led, "--json"}, extra...)
		return releaseCLI(t, args...)
	}
	// --split 2 spends ρ/2 = 0.4 of the given 0.8.
	code, stdout, stderr := rel("r1", "--rho", "0.8", "--split", "2")
	require.Equal(t, 0, code, stderr)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	assert.Equal(t, 0.4, j["rho"])
	code, _, stderr = rel("r2", "--rho", "0.8", "--split", "2")
	require.Equal(t, 0, code, stderr)
	// 0.8 spent: a dry run says a third would not fit, and the release is refused.
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--plan", planDir, "--rho", "0.4", "--budget-file", led, "--dry-run")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "budget exceeded")
	code, _, stderr = rel("r3", "--rho", "0.4")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "rho=0.8 of the limit rho=1 is already spent over 2 release(s)")
	_, err := os.Stat(filepath.Join(dir, "r3"))
	assert.True(t, os.IsNotExist(err))
	code, _, stderr = rel("r4", "--rho", "0.2")
	require.Equal(t, 0, code, stderr)
	b, _ := os.ReadFile(led)
	assert.Equal(t, 3, strings.Count(string(b), `"charged_rho"`))
}

func TestReleaseMarginalsOnHistogram(t *testing.T) {
	// A marginals-only spec released from a histogram .npy: the tables are
	// summed from the histogram; pure ε measures the marginal tables with
	// Laplace noise; a Gaussian marginals plan refuses a pure budget.
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}], "workload": [{"name": "m", "marginals": {"upto": 1}}]}`), 0o644))
	x := make([]float64, 12)
	for i := range x {
		x[i] = float64(10 * i)
	}
	h := filepath.Join(dir, "h.npy")
	require.NoError(t, matio.WriteVector(h, x))
	out := filepath.Join(dir, "out")
	code, _, stderr := releaseCLI(t, "release", "--spec", spec, "--data", h, "--template", "marginals", "--rho", "1000", "--out", out, "--insecure-seed", "1")
	require.Equal(t, 0, code, stderr)
	rows := readAnswers(t, filepath.Join(out, "answers.csv"))
	require.Len(t, rows, 1+1+3+4)
	total, _ := strconv.ParseFloat(rows[1][2], 64)
	sd, _ := strconv.ParseFloat(rows[1][3], 64)
	assert.InDelta(t, 660, total, 6*sd, "the 0-way marginal is the total")
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", h, "--template", "marginals", "--eps", "1000", "--out", filepath.Join(dir, "o2"), "--insecure-seed", "1")
	require.Equal(t, 0, code, stderr)
	rows = readAnswers(t, filepath.Join(dir, "o2", "answers.csv"))
	total, _ = strconv.ParseFloat(rows[1][2], 64)
	sd, _ = strconv.ParseFloat(rows[1][3], 64)
	assert.InDelta(t, 660, total, 6*sd, "the 0-way marginal is the total")
	gplan := filepath.Join(dir, "gplan")
	code, _, stderr = releaseCLI(t, "plan", "--spec", spec, "--template", "marginals", "--out", gplan)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", h, "--plan", gplan, "--eps", "1", "--out", filepath.Join(dir, "o3"))
	assert.Equal(t, 1, code)
	// Refused before planning, naming both models and the right command
	// (before: pipeline/tables' own refusal, "this marginals plan adds
	// Gaussian noise", after the plan was read).
	assert.Contains(t, stderr, "was planned for --privacy gaussian, but a pure ε-DP budget")
	assert.Contains(t, stderr, "--template marginals --privacy pure --out NEWPLAN")
	assert.NoDirExists(t, filepath.Join(dir, "o3"))
}

func TestReleasePureMarginals(t *testing.T) {
	// dpsolve plan --template marginals --privacy pure writes the Laplace
	// plan; release --plan reads it under --eps alone (the same answers as
	// --template marginals with the same seed), records every table's share
	// of ε in release.json, refuses a zCDP budget, and --nonnegative
	// --integer report the consistency step.
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
	 "workload": [{"name": "m", "marginals": {"sets": [["a", "b"], ["b", "c"]]}}, {"name": "t", "weight": 2, "marginals": {"sets": [["c"]]}}]}`), 0o644))
	x := make([]float64, 24)
	for i := range x {
		x[i] = float64(i % 5)
	}
	h := filepath.Join(dir, "h.npy")
	require.NoError(t, matio.WriteVector(h, x))
	planDir := filepath.Join(dir, "pplan")
	code, stdout, stderr := releaseCLI(t, "plan", "--spec", spec, "--template", "marginals", "--privacy", "pure", "--out", planDir, "--json")
	require.Equal(t, 0, code, stderr)
	var pj map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &pj))
	assert.Equal(t, "pure", pj["privacy"])
	require.Contains(t, pj, "marginals_pure")
	sf, err := os.ReadFile(filepath.Join(planDir, "strategy.json"))
	require.NoError(t, err)
	assert.Contains(t, string(sf), `"privacy": "pure"`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr = releaseCLI(t, "release", "--spec", spec, "--data", h, "--plan", planDir, "--eps", "0.5", "--out", out, "--insecure-seed", "4", "--json")
	require.Equal(t, 0, code, stderr)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	assert.Equal(t, "pure", j["privacy"])
	assert.Equal(t, "L1", j["sensitivity_norm"])
	tabs := j["marginal_tables"].([]any)
	require.Len(t, tabs, 3)
	spent := 0.0
	for _, tb := range tabs {
		spent += tb.(map[string]any)["epsilon"].(float64)
	}
	assert.InDelta(t, 0.5, spent, 1e-12)
	assert.LessOrEqual(t, spent, 0.5)
	out2 := filepath.Join(dir, "out2")
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", h, "--template", "marginals", "--eps", "0.5", "--out", out2, "--insecure-seed", "4")
	require.Equal(t, 0, code, stderr)
	a1, _ := os.ReadFile(filepath.Join(out, "answers.csv"))
	a2, _ := os.ReadFile(filepath.Join(out2, "answers.csv"))
	assert.Equal(t, string(a1), string(a2), "the plan file and the in-process plan release the same answers")
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", h, "--plan", planDir, "--rho", "1", "--out", filepath.Join(dir, "o3"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "was planned for --privacy pure, but a ρ-zCDP budget (--rho) needs a plan for --privacy gaussian")
	out4 := filepath.Join(dir, "out4")
	code, stdout, stderr = releaseCLI(t, "release", "--spec", spec, "--data", h, "--plan", planDir, "--eps", "0.05", "--out", out4, "--insecure-seed", "4", "--nonnegative", "--integer", "--json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	c := j["consistency"].(map[string]any)
	assert.Equal(t, true, c["converged"])
	assert.Equal(t, 0.0, c["max_negativity"])
	assert.Contains(t, j["note"], "no longer have the planned variance")
	rel, err := os.ReadFile(filepath.Join(out4, "release.json"))
	require.NoError(t, err)
	assert.Contains(t, string(rel), `"max_inconsistency"`)
	for _, row := range readAnswers(t, filepath.Join(out4, "answers.csv"))[1:] {
		v, _ := strconv.ParseFloat(row[2], 64)
		assert.GreaterOrEqual(t, v, 0.0)
		assert.Equal(t, math.Round(v), v)
	}
}

func TestReleaseAdultWalkthrough(t *testing.T) {
	// The docs/releasing.md walkthrough: all two-way marginals of Adult from the CSV.
	// The Adult records the repository ships (byte-identical to
	// shared/data/adult/adult.csv): never skipped in a fresh clone.
	data := filepath.Join("..", "..", "examples", "adult", "data", "coded", "adult.csv")
	dir := t.TempDir()
	led := filepath.Join(dir, "budget.json")
	require.NoError(t, os.WriteFile(led, []byte(`{"limit": {"rho": 1}}`), 0o644))
	spec := filepath.Join("..", "..", "examples", "adult", "two-way.json")
	out := filepath.Join(dir, "adult-2way")
	code, stdout, stderr := releaseCLI(t, "release", "--spec", spec, "--data", data, "--template", "marginals",
		"--rho", "0.5", "--budget-file", led, "--out", out, "--insecure-seed", "11", "--json")
	require.Equal(t, 0, code, stderr)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	assert.Equal(t, float64(148137), j["queries"])
	assert.Equal(t, float64(48842), j["records"])
	rows := readAnswers(t, filepath.Join(out, "answers.csv"))
	require.Len(t, rows, 148138)
	// The sex × income marginal against the true counts (docs/releasing.md), each
	// within 4 of its standard deviations.
	truth := map[[2]string]float64{{"0", "0"}: 14423, {"0", "1"}: 1769, {"1", "0"}: 22732, {"1", "1"}: 9918}
	found := 0
	for _, r := range rows[1:] {
		n := 0
		for _, c := range r[4:18] { // the 14 attribute columns
			if c != "" {
				n++
			}
		}
		if n == 2 && r[12] != "" && r[17] != "" {
			v, _ := strconv.ParseFloat(r[2], 64)
			sd, _ := strconv.ParseFloat(r[3], 64)
			assert.InDelta(t, truth[[2]string{r[12], r[17]}], v, 4*sd)
			found++
		}
	}
	assert.Equal(t, 4, found)
	// The ledger now holds 0.5 of 1: a release of 0.6 is refused.
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", data, "--template", "marginals",
		"--rho", "0.6", "--budget-file", led, "--out", filepath.Join(dir, "again"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "budget exceeded")
	// The mixed example spec parses (its release needs a kron or union plan).
	code, _, stderr = releaseCLI(t, "release", "--spec", filepath.Join("..", "..", "examples", "adult", "mixed.json"),
		"--template", "marginals", "--rho", "1", "--dry-run")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `term "age-cumulative" has a block other than identity or total`)
}

func TestReleaseRefusesHistogramBeyondMemory(t *testing.T) {
	// Three attributes of 4096 values (6.9·10¹⁰ cells, 550 GB as a
	// histogram, twice as much again for the products and least squares)
	// under a Kronecker plan:
	// refused with both figures before the data is read. (1.1 TB exceeds
	// any test machine's memory.)
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 4096}, {"name": "b", "size": 4096}, {"name": "c", "size": 4096}],
	  "workload": [{"name": "t", "marginals": {"sets": [[]]}}]}`), 0o644))
	planDir := filepath.Join(dir, "plan")
	require.NoError(t, os.Mkdir(planDir, 0o755))
	ones := mat.NewDense(1, 4096, nil)
	for i := 0; i < 4096; i++ {
		ones.Set(0, i, 1)
	}
	require.NoError(t, matio.WriteMatrix(filepath.Join(planDir, "ones.npy"), ones))
	require.NoError(t, os.WriteFile(filepath.Join(planDir, "strategy.json"), []byte(`{"template": "kron", "factors": [
	  {"attribute": "a", "file": "ones.npy"}, {"attribute": "b", "file": "ones.npy"}, {"attribute": "c", "file": "ones.npy"}]}`), 0o644))
	data := filepath.Join(dir, "r.csv")
	require.NoError(t, os.WriteFile(data, []byte("a,b,c\n1,2,3\n"), 0o644))
	out := filepath.Join(dir, "out")
	code, _, stderr := releaseCLI(t, "release", "--spec", spec, "--data", data, "--plan", planDir, "--rho", "1", "--out", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "needs at least 1.5 TiB") // from the spec, before the plan is read
	assert.Contains(t, stderr, "is available")
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err))
	// The same workload as a marginals plan needs no histogram.
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--data", data, "--template", "marginals", "--rho", "1", "--out", out, "--insecure-seed", "1")
	assert.Equal(t, 0, code, stderr)
}

func TestReleaseFromDpsolvePlan(t *testing.T) {
	// dpsolve plan --out DIR, then release --plan DIR: the release's
	// weighted expected error is the plan's objective times σ², and per
	// term the plan's term error times σ²/w² (answers are unweighted).
	dir, spec, data, _ := relFixture(t)
	for _, tmpl := range []string{"kron", "union", "dense"} {
		planDir := filepath.Join(dir, "plan-"+tmpl)
		code, stdout, stderr := releaseCLI(t, "plan", "--spec", spec, "--template", tmpl, "--out", planDir, "--json")
		require.Equal(t, 0, code, stderr)
		var pj struct {
			Objective float64 `json:"objective"`
			Terms     []struct {
				Term  string  `json:"term"`
				Error float64 `json:"error"`
			} `json:"terms"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &pj))
		code, stdout, stderr = releaseCLI(t, "release", "--spec", spec, "--plan", planDir, "--rho", "0.5", "--dry-run", "--json")
		require.Equal(t, 0, code, stderr)
		var rj struct {
			Template string  `json:"template"`
			Sigma    float64 `json:"sigma"`
			Weighted float64 `json:"expected_weighted_error"`
			Terms    []struct {
				Name   string  `json:"name"`
				Weight float64 `json:"weight"`
				Err    float64 `json:"expected_squared_error"`
			} `json:"terms"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &rj))
		assert.Equal(t, tmpl, rj.Template)
		v := rj.Sigma * rj.Sigma
		// The plan's objective (its own trace formula) and the release's
		// per-query variance sums (factor-wise pseudo-inverses) are two
		// computations of one number: 1e-8 relative.
		assert.InDelta(t, pj.Objective*v, rj.Weighted, 1e-8*rj.Weighted, tmpl)
		for i, te := range pj.Terms {
			assert.Equal(t, te.Term, rj.Terms[i].Name)
			w2 := rj.Terms[i].Weight * rj.Terms[i].Weight
			assert.InDelta(t, te.Error*v/w2, rj.Terms[i].Err, 1e-8*rj.Terms[i].Err, "%s term %s", tmpl, te.Term)
		}
		out := filepath.Join(dir, "out-"+tmpl)
		code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--plan", planDir, "--rho", "0.5", "--data", data, "--out", out, "--insecure-seed", "5")
		require.Equal(t, 0, code, stderr)
		assert.Len(t, readAnswers(t, filepath.Join(out, "answers.csv")), 19)
	}
}

func TestReleasePureEpsilon(t *testing.T) {
	// --eps alone is pure ε-DP: Laplace noise on a plan normalised to L1
	// sensitivity 1 (dpsolve plan --privacy pure), per-value variance 2b².
	dir, spec, data, _ := relFixture(t)
	planDir := filepath.Join(dir, "plan-pure")
	code, _, stderr := releaseCLI(t, "plan", "--spec", spec, "--template", "kron", "--privacy", "pure", "--out", planDir)
	require.Equal(t, 0, code, stderr)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := releaseCLI(t, "release", "--spec", spec, "--plan", planDir, "--eps", "0.5", "--data", data, "--out", out, "--insecure-seed", "2", "--json")
	require.Equal(t, 0, code, stderr)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	assert.Equal(t, "pure", j["privacy"])
	assert.Equal(t, "L1", j["sensitivity_norm"])
	assert.Contains(t, j["mechanism"], "Laplace")
	sens := j["sensitivity"].(float64)
	assert.InDelta(t, 1, sens, 1e-9, "the pure plan has L1 sensitivity 1")
	b := j["noise_scale"].(float64)
	// b = Δ₁'/ε with Δ₁' = Δ₁ + g·p, g ≈ b·2^-40: within 1e-9 of 2.
	assert.InDelta(t, 2, b, 1e-9)
	assert.InDelta(t, math.Sqrt2*b, j["sigma"].(float64), 1e-12)
	_, ok := j["delta"]
	assert.False(t, ok, "no delta under pure DP")
}

func TestReleaseOutParentMissingRefusedFirst(t *testing.T) {
	dir, spec, data, planDir := relFixture(t)
	led := filepath.Join(dir, "budget.json")
	require.NoError(t, os.WriteFile(led, []byte(`{"limit": {"rho": 1}}`), 0o644))
	before, _ := os.ReadFile(led)
	code, _, stderr := releaseCLI(t, "release", "--spec", spec, "--data", data, "--plan", planDir, "--rho", "0.5",
		"--budget-file", led, "--out", filepath.Join(dir, "no", "such", "out"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "cannot write in")
	after, _ := os.ReadFile(led)
	assert.Equal(t, before, after, "nothing charged")
}

// The budget flags follow run's and answer's rules (checkPrivacyFlags: the
// usable ranges, δ in (0,1), a given 0 is an error) and are checked before
// anything else is read: the spec, plan and data named here do not exist,
// so any other order would report them instead.
func TestReleaseBudgetRangesCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	missing := func(name string) string { return filepath.Join(dir, name) }
	base := []string{"release", "--spec", missing("spec.json"), "--plan", missing("plan"), "--data", missing("r.csv"), "--out", missing("out")}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"eps 1e6", []string{"--eps", "1e6", "--delta", "1e-6"}, "--eps 1e+06 is outside the usable range [1e-06, 10000]"},
		{"eps 1e155 pure", []string{"--eps", "1e155"}, "--eps 1e+155 is outside the usable range"},
		{"eps tiny", []string{"--eps", "1e-9"}, "--eps 1e-09 is outside the usable range"},
		{"eps NaN", []string{"--eps", "NaN", "--delta", "1e-6"}, "--eps must be positive, got NaN"},
		{"eps zero with delta", []string{"--eps", "0", "--delta", "1e-6"}, "--eps must be positive, got 0"},
		{"rho huge", []string{"--rho", "1e8"}, "--rho 1e+08 is outside the usable range [1e-12, 5e+07]"},
		{"rho zero", []string{"--rho", "0"}, "--rho must be positive, got 0"},
		{"delta zero", []string{"--eps", "1", "--delta", "0"}, "--delta must lie in (0,1), got 0"},
		{"delta one", []string{"--eps", "1", "--delta", "1"}, "--delta must lie in (0,1), got 1"},
		{"missing eps", []string{"--delta", "1e-6"}, "--delta needs --eps"},
		{"missing budget", nil, "give a budget"},
		{"both", []string{"--rho", "0", "--eps", "1"}, "not both"},
		{"split below range", []string{"--eps", "1e-5", "--split", "100"}, "--split 100 leaves ε = 1e-07 for a part"},
		{"split rho below range", []string{"--rho", "1e-11", "--split", "100"}, "--split 100 leaves ρ = 1e-13 for a part"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := releaseCLI(t, append(append([]string{}, base...), c.args...)...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, c.want)
		})
	}
	// With a valid budget the same command gets as far as the missing spec.
	code, _, stderr := releaseCLI(t, append(append([]string{}, base...), "--eps", "1e4", "--delta", "1e-6")...)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "spec")
}

// --split terms releases each term on its own under its share of the
// budget: the shares add up to the budget (ρ composes additively over the
// terms' independent measurements), the ledger is charged the whole budget
// once, and each term's planned error equals that of a release of the term
// alone (its own spec) at its share — an independent run of the planner.
func TestReleaseSplitTerms(t *testing.T) {
	dir, spec, data, planDir := relFixture(t)
	led := filepath.Join(dir, "budget.json")
	require.NoError(t, os.WriteFile(led, []byte(`{"limit": {"rho": 1}}`), 0o644))
	out := filepath.Join(dir, "split")
	code, stdout, stderr := releaseCLI(t, "release", "--spec", spec, "--data", data, "--template", "best", "--rho", "0.8",
		"--split", "terms:1,3", "--budget-file", led, "--insecure-seed", "3", "--out", out, "--json")
	require.Equal(t, 0, code, stderr)
	var j struct {
		Rho     float64 `json:"rho"`
		Queries int     `json:"queries"`
		Total   float64 `json:"expected_total_squared_error"`
		Terms   []struct {
			Name string  `json:"name"`
			Err  float64 `json:"expected_squared_error"`
		} `json:"terms"`
		Split []struct {
			Term  string  `json:"term"`
			Share float64 `json:"share"`
			Rho   float64 `json:"rho"`
			Err   float64 `json:"expected_total_squared_error"`
		} `json:"split_terms"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	assert.Equal(t, 0.8, j.Rho)
	require.Len(t, j.Split, 2)
	assert.Equal(t, "m", j.Split[0].Term)
	assert.InDelta(t, 0.25, j.Split[0].Share, 1e-15)
	assert.InDelta(t, 0.2, j.Split[0].Rho, 1e-15)
	assert.InDelta(t, 0.6, j.Split[1].Rho, 1e-15)
	assert.InDelta(t, 0.8, j.Split[0].Rho+j.Split[1].Rho, 1e-15, "the terms' budgets add up to the given one")
	// Each term alone, from its own spec, at its share (dry run).
	specs := map[string]string{
		"m": `{"name": "m", "marginals": {"sets": [["a", "c"], ["b"]]}}`,
		"p": `{"name": "p", "weight": 2, "product": {"b": "prefix", "c": "identity"}}`,
	}
	total := 0.0
	for i, s := range j.Split {
		one := filepath.Join(dir, "one-"+s.Term+".json")
		require.NoError(t, os.WriteFile(one, []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}], "workload": [`+specs[s.Term]+`]}`), 0o644))
		code, so, se := releaseCLI(t, "release", "--spec", one, "--template", "best", "--rho", strconv.FormatFloat(s.Rho, 'g', -1, 64), "--dry-run", "--json")
		require.Equal(t, 0, code, se)
		var alone struct {
			Total float64 `json:"expected_total_squared_error"`
		}
		require.NoError(t, json.Unmarshal([]byte(so), &alone))
		// Same planner, same inputs: equal to rounding (1e-12 relative).
		assert.InEpsilon(t, alone.Total, s.Err, 1e-12, s.Term)
		assert.InEpsilon(t, alone.Total, j.Terms[i].Err, 1e-12, s.Term)
		total += alone.Total
	}
	assert.InEpsilon(t, total, j.Total, 1e-12)
	// One charge of the whole budget; every query answered.
	assertOneCharge(t, led, "0.8")
	assertAnswered(t, out, j.Queries)

	// (ε,δ) splits both; equal shares by default.
	code, stdout, stderr = releaseCLI(t, "release", "--spec", spec, "--template", "best", "--eps", "1", "--delta", "1e-6", "--split", "terms", "--dry-run", "--json")
	require.Equal(t, 0, code, stderr)
	var e struct {
		Split []struct {
			Epsilon, Delta float64
		} `json:"split_terms"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &e))
	require.Len(t, e.Split, 2)
	assert.Equal(t, 0.5, e.Split[0].Epsilon)
	assert.Equal(t, 5e-7, e.Split[1].Delta)

	// A joint plan cannot be split per term; shares must match the terms.
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--plan", planDir, "--rho", "1", "--split", "terms", "--dry-run")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "measures every term jointly")
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--template", "best", "--rho", "1", "--split", "terms:1", "--dry-run")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "1 budget shares for the 2 terms")
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--template", "best", "--rho", "1", "--split", "terms:1,-1", "--dry-run")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "positive shares")
}

// A max-variance marginals plan written by dpsolve plan --out, for a spec
// that lists the marginal {a,c} in two terms of different weights and has
// a product term made only of identity and total blocks, is accepted by
// release --plan (tables plans the same sets as the template: one per term
// and marginal, not merged), and every answer's variance is the cell
// variance the plan file states for its marginal, times σ².
func TestReleaseMaxPlanWithSharedMarginal(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
	 "workload": [{"name": "m1", "marginals": {"sets": [["a", "c"], ["b"]]}},
	              {"name": "m2", "weight": 3, "marginals": {"sets": [["a", "c"]]}},
	              {"name": "p", "weight": 1.5, "product": {"b": "identity", "c": "identity", "a": "total"}}]}`), 0o644))
	planDir := filepath.Join(dir, "plan")
	code, _, stderr := releaseCLI(t, "plan", "--spec", spec, "--template", "marginals", "--objective", "max", "--out", planDir, "--quiet")
	require.Equal(t, 0, code, stderr)
	var pf struct {
		MaxVariance float64 `json:"max_variance"`
		Marginals   []struct {
			Attributes   []string `json:"attributes"`
			Weight       float64  `json:"weight"`
			CellVariance float64  `json:"cell_variance"`
		} `json:"marginals"`
	}
	b, err := os.ReadFile(filepath.Join(planDir, "strategy.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &pf))
	require.Len(t, pf.Marginals, 4, "one per term and marginal, as the template plans them")

	code, stdout, stderr := releaseCLI(t, "release", "--spec", spec, "--plan", planDir, "--rho", "0.5", "--dry-run", "--json")
	require.Equal(t, 0, code, stderr)
	var j struct {
		Sigma float64 `json:"sigma"`
		Terms []struct {
			Name   string  `json:"name"`
			Weight float64 `json:"weight"`
			MinStd float64 `json:"min_stddev"`
			MaxStd float64 `json:"max_stddev"`
		} `json:"terms"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	require.Len(t, j.Terms, 3)
	s2 := j.Sigma * j.Sigma
	// The plan file's marginals in term order: m1 {a,c}, m1 {b}, m2 {a,c}, p {b,c}.
	// Relative 1e-12: the same closed-form sums, scaled by σ².
	v0, v1 := pf.Marginals[0].CellVariance, pf.Marginals[1].CellVariance
	assert.InEpsilon(t, math.Max(v0, v1)*s2, j.Terms[0].MaxStd*j.Terms[0].MaxStd, 1e-12)
	assert.InEpsilon(t, math.Min(v0, v1)*s2, j.Terms[0].MinStd*j.Terms[0].MinStd, 1e-12)
	assert.InEpsilon(t, v0, pf.Marginals[2].CellVariance, 1e-12, "one marginal {a,c}, one variance")
	assert.InEpsilon(t, pf.Marginals[2].CellVariance*s2, j.Terms[1].MaxStd*j.Terms[1].MaxStd, 1e-12)
	assert.InEpsilon(t, pf.Marginals[3].CellVariance*s2, j.Terms[2].MaxStd*j.Terms[2].MaxStd, 1e-12)
	// The max objective: the largest weighted per-query variance is the plan's.
	worst := 0.0
	for _, tm := range j.Terms {
		worst = math.Max(worst, tm.Weight*tm.Weight*tm.MaxStd*tm.MaxStd/s2)
	}
	assert.InEpsilon(t, pf.MaxVariance, worst, 1e-12)

	// In-process --template marginals accepts the identity/total product term too.
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--template", "marginals", "--rho", "0.5", "--dry-run")
	assert.Equal(t, 0, code, stderr)
}

// assertOneCharge checks that the ledger file led records exactly one
// charge, of rho (as the ledger prints it).
func assertOneCharge(t *testing.T, led, rho string) {
	t.Helper()
	b, err := os.ReadFile(led)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), `"charged_rho"`), string(b))
	assert.Contains(t, string(b), `"charged_rho": `+rho)
}

// assertAnswered checks that dir/answers.csv holds a header and one row per
// query.
func assertAnswered(t *testing.T, dir string, queries int) {
	t.Helper()
	fh, err := os.Open(filepath.Join(dir, "answers.csv"))
	require.NoError(t, err)
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, queries+1)
}
