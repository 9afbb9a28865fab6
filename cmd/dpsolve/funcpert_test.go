package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A seeded tiny run end to end: CSV with the documented columns and one row
// per (ε, coefficients, method, repetition), and one JSON object on stdout
// whose series match the CSV (dpsolve-plot draws the figure from it).
func TestFuncpertEndToEnd(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "results.csv")
	var stdout, stderr bytes.Buffer
	code := run([]string{"funcpert", "--quick", "--reps", "2", "--eps-points", "3", "--coeffs", "15",
		"--message-rounds", "100", "--out", csvPath, "--json"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "funcpert")
	var out funcpertJSON
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
	assert.Equal(t, 12, out.Rows) // 3 ε × 2 reps × (functional + message)
	require.Len(t, out.Series, 2)
	assert.Equal(t, "functional", out.Series[0].Method)
	assert.Equal(t, 15, out.Series[0].Coeffs)
	assert.InDeltaSlice(t, []float64{0.01, math.Sqrt(10), 1000}, out.Series[0].Eps, 1e-12)
	assert.Len(t, out.Series[0].Bound, 3)
	assert.Equal(t, "message", out.Series[1].Method)
	assert.Contains(t, out.Smoothing, "15")
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	require.Len(t, recs, 13)
	assert.Equal(t, []string{"eps", "coeffs", "method", "rep", "error"}, recs[0])
	assert.Equal(t, []string{"0.01", "15", "functional", "0"}, recs[1][:4])

	// The human-readable form prints the same table.
	stdout.Reset()
	code = run([]string{"funcpert", "--quick", "--reps", "1", "--eps-points", "1", "--coeffs", "15", "--message-rounds", "0"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	assert.Contains(t, stdout.String(), "functional, 15 coefficients")
}

// --plot moved to dpsolve-plot: refused before the experiment runs, with
// the commands that draw the figure.
func TestFuncpertPlotMoved(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"funcpert", "--quick", "--plot", filepath.Join(t.TempDir(), "fig.png")}, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout.String())
	assert.Contains(t, stderr.String(), "--plot: dpsolve no longer draws plots")
	assert.Contains(t, stderr.String(), "go run ./cmd/dpsolve-plot funcpert --from RESULT.json --plot FIG.png")
	assert.NotContains(t, stderr.String(), "ε values", "the experiment did not start")
}

func TestFuncpertBadInput(t *testing.T) {
	// Each bad command line must exit 2 with the message naming its own
	// problem (not merely the usage text, which names every flag).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--eps-min", "0"}, "need 0 < --eps-min ≤ --eps-max < ∞, got 0 and 1000"},
		{[]string{"--eps-min", "10", "--eps-max", "1"}, "need 0 < --eps-min ≤ --eps-max < ∞, got 10 and 1"},
		{[]string{"--coeffs", "16"}, "--coeffs: 16 is not a 2-D basis size"},
		{[]string{"--coeffs", "3"}, "--coeffs: 3 coefficients (degree 1) cannot carry a Hessian bound"},
		{[]string{"--coeffs", "x"}, `--coeffs: "x" is not an integer`},
		{[]string{"--reps", "0"}, "--reps must be positive, got 0"},
		{[]string{"--eps-points", "0"}, "--eps-points must be at least 1, got 0"},
		{[]string{"--p", "1.5"}, "p must lie in (1/2, q−1/2)"},
		{[]string{"--q", "1"}, "q must be > 1"},
		{[]string{"--alpha", "-1"}, "need 0 ≤ α < β < ∞ and 0 < u < ∞, got α=-1"},
		{[]string{"--u", "0.1"}, "S is empty: u = 0.1"},
		{[]string{"--workers", "-2"}, "--workers must be non-negative, got -2"},
		{[]string{"--message-rounds", "-1"}, "--message-rounds must be non-negative, got -1"},
		{[]string{"--nope"}, "usage error: flag provided but not defined: -nope"},
		{[]string{"extra"}, "usage error: unexpected arguments: [extra]"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"funcpert"}, tc.args...), &stdout, &stderr)
		assert.Equal(t, 2, code, "args %v: %s", tc.args, stderr.String())
		assert.Contains(t, stderr.String(), "dpsolve funcpert: usage error: ", "args %v", tc.args)
		assert.Contains(t, stderr.String(), tc.want, "args %v", tc.args)
	}
}
