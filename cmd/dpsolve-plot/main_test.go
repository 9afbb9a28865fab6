package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runPlot(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func magic(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 5, path)
	return string(b[:5])
}

// The recorded reports of bench/results, written by earlier dpsolve bench
// --json runs, draw in every format, from a file and from stdin.
func TestBenchFromRecordedReports(t *testing.T) {
	dir := t.TempDir()
	compare := filepath.Join("..", "..", "bench", "results", "compare-2026-11-29.json")
	scaling := filepath.Join("..", "..", "bench", "results", "scaling-kernels-2026-11-29-session2.json")
	tp, cp := filepath.Join(dir, "t.png"), filepath.Join(dir, "c.svg")
	code, _, errOut := runPlot(t, "", "bench", "--from", compare, "--plot", tp, "--convergence-plot", cp, "--convergence", "prefix:1024")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "\x89PNG\r", magic(t, tp))
	assert.Equal(t, "<?xml", magic(t, cp))

	js, err := os.ReadFile(scaling)
	require.NoError(t, err)
	pdf := filepath.Join(dir, "s.pdf")
	code, _, errOut = runPlot(t, string(js), "bench", "--from", "-", "--plot", pdf)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "%PDF-", magic(t, pdf))

	// the default convergence problem: the first workload, its largest n
	code, _, errOut = runPlot(t, "", "bench", "--from", compare, "--convergence-plot", filepath.Join(dir, "d.png"))
	require.Equal(t, 0, code, errOut)

	// a scaling-only report has no comparison to draw convergence from
	code, _, errOut = runPlot(t, "", "bench", "--from", scaling, "--convergence-plot", filepath.Join(dir, "e.png"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no comparison")
}

func TestMarginalsFromRecordedSweep(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.png")
	code, _, errOut := runPlot(t, "", "marginals", "--from", filepath.Join("..", "..", "bench", "results", "marginals-scaling.json"), "--plot", p)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "\x89PNG\r", magic(t, p))
}

// A result in dpsolve funcpert --json's format (written out here, so a
// change of that format breaks this test, not the figure silently).
func TestFuncpert(t *testing.T) {
	const result = `{"rows": 12, "x_star": [0.1, 0.2], "series": [
	 {"method": "functional", "coeffs": 15, "eps": [0.01, 3.16, 1000], "mean": [1, 0.1, 0.001],
	  "min": [0.5, 0.05, 0.0005], "max": [2, 0.2, 0.002], "bound": [3, 0.3, 0.003]},
	 {"method": "message", "coeffs": 0, "eps": [0.01, 3.16, 1000], "mean": [10, 1, 0.01],
	  "min": [5, 0.5, 0.005], "max": [20, 2, 0.02]}]}`
	p := filepath.Join(t.TempDir(), "fig.png")
	code, _, errOut := runPlot(t, result, "funcpert", "--from", "-", "--plot", p)
	require.Equal(t, 0, code, errOut)
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 400)

	bad := strings.Replace(result, `"max": [2, 0.2, 0.002]`, `"max": [2, 0.2]`, 1)
	code, _, errOut = runPlot(t, bad, "funcpert", "--from", "-", "--plot", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "different lengths")
	code, _, errOut = runPlot(t, `{"series": []}`, "funcpert", "--from", "-", "--plot", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no series")
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	rep := filepath.Join(dir, "r.json")
	require.NoError(t, os.WriteFile(rep, []byte(`{"machine": {}}`), 0o644))
	notJSON := filepath.Join(dir, "x.json")
	require.NoError(t, os.WriteFile(notJSON, []byte("| a | b |"), 0o644))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: dpsolve-plot"},
		{[]string{"draw"}, 2, `unknown command "draw"`},
		{[]string{"bench", "--plot", "t.png"}, 2, "--from is required"},
		{[]string{"bench", "--from", rep}, 2, "nothing to draw"},
		{[]string{"bench", "--from", rep, "--plot", "t.gif"}, 2, "want a .png, .svg, .pdf file"},
		{[]string{"bench", "--from", rep, "--plot", filepath.Join(dir, "no", "t.png")}, 2, "does not exist"},
		{[]string{"bench", "--from", rep, "--plot", "t.png", "--convergence-plot", "t.png"}, 2, "same file"},
		{[]string{"bench", "--from", rep, "--convergence-plot", "c.png", "--convergence", "prefix"}, 2, "want WORKLOAD:N"},
		{[]string{"bench", "--from", notJSON, "--plot", filepath.Join(dir, "t.png")}, 1, "is not a dpsolve bench --json report"},
		{[]string{"bench", "--from", filepath.Join(dir, "missing.json"), "--plot", filepath.Join(dir, "t.png")}, 1, "missing.json"},
		{[]string{"bench", "--from", rep, "--plot", filepath.Join(dir, "t.png")}, 1, "no successful runs"},
		{[]string{"funcpert", "--from", rep, "--plot", filepath.Join(dir, "f.svg")}, 2, "want a .png file"},
		{[]string{"marginals", "--from", rep, "--plot", filepath.Join(dir, "m.png")}, 1, "no rows"},
	} {
		code, _, errOut := runPlot(t, "", c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	_, err := os.Stat(filepath.Join(dir, "t.png"))
	assert.True(t, os.IsNotExist(err), "no figure written on an error")
}
