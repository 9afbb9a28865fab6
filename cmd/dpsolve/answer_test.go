package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// releaseCLI runs dpsolve in-process and returns its exit code and output.
func releaseCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// releaseFixture writes an H2 strategy on 16 cells and an int64 .npy
// histogram; it returns their paths and the data.
func releaseFixture(t *testing.T) (dir, aPath, xPath string, x []float64) {
	t.Helper()
	dir = t.TempDir()
	h2, err := strategy.NewH2(16)
	require.NoError(t, err)
	aPath = filepath.Join(dir, "A.npy")
	require.NoError(t, matio.WriteMatrix(aPath, h2.Matrix()))
	counts := []int64{5, 0, 3, 12, 7, 1, 0, 4, 9, 9, 2, 0, 0, 1, 30, 6}
	xPath = filepath.Join(dir, "x.npy")
	f, err := os.Create(xPath)
	require.NoError(t, err)
	require.NoError(t, npyio.Write(f, counts))
	require.NoError(t, f.Close())
	for _, c := range counts {
		x = append(x, float64(c))
	}
	return dir, aPath, xPath, x
}

func TestAnswerJSONMatchesLibrary(t *testing.T) {
	dir, aPath, xPath, x := releaseFixture(t)
	out := filepath.Join(dir, "answers.npy")
	code, stdout, stderr := releaseCLI(t, "answer", "--strategy", aPath, "--data", xPath, "--workload", "prefix",
		"--eps", "1", "--delta", "1e-6", "--out", out, "--insecure-seed", "7", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "NOT differentially private")

	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	for _, k := range []string{"sigma", "sensitivity", "expected_rmse", "mechanism"} {
		assert.Contains(t, got, k)
	}
	assert.Equal(t, "gaussian", got["mechanism"])
	assert.Equal(t, false, got["private"])

	// The CLI is a thin wrapper: the library with the same seed gives the
	// same numbers and the same answers, bit for bit.
	a, err := matio.ReadMatrix(aPath)
	require.NoError(t, err)
	m, err := release.New(a, budgettest.ApproxDP(1, 1e-6))
	require.NoError(t, err)
	w, _ := workload.NewPrefix(16)
	exp, err := m.ExpectedError(w)
	require.NoError(t, err)
	assert.Equal(t, m.Sigma(), got["sigma"])
	assert.Equal(t, m.Sensitivity(), got["sensitivity"])
	assert.InDelta(t, 2.2360679774997896, got["sensitivity"], 1e-12) // H2(16): depth 5, Δ₂ = √5
	assert.Equal(t, exp.RMSE, got["expected_rmse"])
	y, err := m.Measure(x, noise.NewSeededInsecure(7))
	require.NoError(t, err)
	xhat, err := m.Reconstruct(y)
	require.NoError(t, err)
	want, err := release.Answer(w, xhat)
	require.NoError(t, err)
	answers, err := matio.ReadVector(out)
	require.NoError(t, err)
	assert.Equal(t, want, answers)

	// Human output names σ, the sensitivity and the expected RMSE.
	code, stdout, stderr = releaseCLI(t, "answer", "--strategy", aPath, "--data", xPath, "--workload", "allrange",
		"--mechanism", "laplace", "--eps", "0.5", "--out", filepath.Join(dir, "r.csv"), "--insecure-seed", "1")
	require.Equal(t, 0, code, stderr)
	for _, s := range []string{"sensitivity", "sigma", "expected RMSE", "Laplace scale"} {
		assert.Contains(t, stdout, s)
	}
	r, err := matio.ReadVector(filepath.Join(dir, "r.csv"))
	require.NoError(t, err)
	assert.Len(t, r, 16*17/2)
}

func TestAnswerSecureNoiseIsFreshAndMarkedPrivate(t *testing.T) {
	dir, aPath, xPath, _ := releaseFixture(t)
	var outs [2][]float64
	for i := range outs {
		out := filepath.Join(dir, "a"+string(rune('0'+i))+".npy")
		code, stdout, stderr := releaseCLI(t, "answer", "--strategy", aPath, "--data", xPath, "--workload", "identity",
			"--mechanism", "zcdp", "--rho", "0.1", "--out", out, "--json")
		require.Equal(t, 0, code, stderr)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &got))
		assert.Equal(t, true, got["private"])
		assert.Equal(t, "zcdp", got["mechanism"])
		var err error
		outs[i], err = matio.ReadVector(out)
		require.NoError(t, err)
	}
	assert.NotEqual(t, outs[0], outs[1], "two secure releases drew the same noise")
}

func TestAnswerPostProcessingAndCSV(t *testing.T) {
	dir, aPath, _, x := releaseFixture(t)
	csv := filepath.Join(dir, "x.csv")
	var b strings.Builder
	for _, v := range x {
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + "\n")
	}
	require.NoError(t, os.WriteFile(csv, []byte(b.String()), 0o644))
	xhatPath := filepath.Join(dir, "xhat.csv")
	code, stdout, stderr := releaseCLI(t, "answer", "--strategy", aPath, "--data", csv, "--workload", "total",
		"--eps", "0.1", "--delta", "1e-5", "--out", filepath.Join(dir, "t.npy"), "--out-xhat", xhatPath,
		"--clamp", "--round", "--insecure-seed", "3", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"post_processing": "clamp+round"`)
	xhat, err := matio.ReadVector(xhatPath)
	require.NoError(t, err)
	var sum float64
	for _, v := range xhat {
		assert.GreaterOrEqual(t, v, 0.0)
		assert.Equal(t, math.Round(v), v)
		sum += v
	}
	total, err := matio.ReadVector(filepath.Join(dir, "t.npy"))
	require.NoError(t, err)
	assert.Equal(t, []float64{sum}, total)
}

func TestAnswerErrors(t *testing.T) {
	dir, aPath, xPath, _ := releaseFixture(t)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	negative := write("neg.csv", strings.Repeat("1\n", 15)+"-2\n")
	nan := write("nan.csv", strings.Repeat("1\n", 15)+"nan\n")
	short := write("short.csv", "1\n2\n3\n")
	out := filepath.Join(dir, "o.npy")
	base := func(extra ...string) []string {
		return append([]string{"answer", "--strategy", aPath, "--data", xPath, "--workload", "prefix", "--out", out}, extra...)
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"eps zero", base("--eps", "0", "--delta", "1e-6"), 2, "--eps is missing or 0"},
		{"eps negative", base("--eps", "-1", "--delta", "1e-6"), 2, "--eps must be positive"},
		{"delta zero", base("--eps", "1"), 2, "--delta is missing or 0"},
		{"delta one", base("--eps", "1", "--delta", "1"), 2, "delta must lie in (0,1)"},
		{"laplace delta", base("--mechanism", "laplace", "--eps", "1", "--delta", "1e-6"), 2, "delta must be 0"},
		{"zcdp rho", base("--mechanism", "zcdp"), 2, "--rho is missing or 0"},
		{"unknown mechanism", base("--mechanism", "exponential", "--eps", "1"), 2, "unknown mechanism"},
		{"bad seed", base("--eps", "1", "--delta", "1e-6", "--insecure-seed", "x"), 2, "insecure-seed"},
		{"no out", []string{"answer", "--strategy", aPath, "--data", xPath, "--workload", "prefix", "--eps", "1", "--delta", "1e-6"}, 2, "--out is required"},
		{"no strategy", []string{"answer", "--data", xPath, "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", out}, 2, "--strategy is required"},
		{"two workloads", base("--eps", "1", "--delta", "1e-6", "--w", aPath), 2, "exactly one of --workload, --w and --spec"},
		{"negative counts", []string{"answer", "--strategy", aPath, "--data", negative, "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", out}, 1, "negative"},
		{"nan counts", []string{"answer", "--strategy", aPath, "--data", nan, "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", out}, 1, "non-finite"},
		{"length mismatch", []string{"answer", "--strategy", aPath, "--data", short, "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", out}, 1, "16 columns but the data"},
		{"missing data", []string{"answer", "--strategy", aPath, "--data", filepath.Join(dir, "none.npy"), "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", out}, 1, "no such file"},
	}
	for _, c := range cases {
		code, _, stderr := releaseCLI(t, c.args...)
		assert.Equal(t, c.code, code, "%s: %s", c.name, stderr)
		assert.Contains(t, stderr, c.msg, c.name)
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "a failed release must not write answers")
}
