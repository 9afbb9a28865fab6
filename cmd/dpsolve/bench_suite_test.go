package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/bench"
)

// fakeSuite replaces the suite by fixed rows for the duration of the test.
func fakeSuite(t *testing.T, rows []bench.SuiteRow) {
	prev := suiteRun
	suiteRun = func(context.Context, bench.SuiteConfig) (*bench.SuiteReport, error) {
		return &bench.SuiteReport{Machine: bench.Machine{CPU: "test cpu"}, Seconds: 1, CPUSeconds: 1, Rows: rows}, nil
	}
	t.Cleanup(func() { suiteRun = prev })
}

// The regression gate's plumbing: a --json run saves a report that a later
// run reads with --baseline; equal rows pass (exit 0), a timed ratio grown
// beyond --timed-factor (the default 6 is for a loaded machine), or a calibration row failing its own check, exits
// with status 3 and names the row.
func TestBenchSuiteBaseline(t *testing.T) {
	rows := []bench.SuiteRow{
		{Area: "dense core", Case: "prefix n=512", Versus: "fixedpoint", Metric: "s", Ours: 1, Peer: 4, Ratio: 0.25},
		{Area: "plan", Case: "x", Versus: "p-Identity", Metric: "error", Ours: 2, Ratio: bench.Num(math.NaN()), Err: "peers not run"},
		{Area: "release calibration", Case: "c", Versus: "promise", Metric: "sq error", Ours: 99, Peer: 100, Ratio: 0.99, SD: 0.01},
	}
	fakeSuite(t, rows)
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	code, out, errOut := runCLI(t, "bench", "--suite", "--json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, os.WriteFile(base, []byte(out), 0o644))
	var rep bench.SuiteReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Len(t, rep.Rows, 3)

	code, out, errOut = runCLI(t, "bench", "--suite", "--baseline", base)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "against the baseline "+base+" (test cpu")
	assert.Contains(t, out, "| dense core | prefix n=512 | fixedpoint | 0.25 | 0.25 | ×6 | equal |")

	slower := append([]bench.SuiteRow(nil), rows...)
	slower[0].Ours, slower[0].Ratio = 2.4, 0.6
	fakeSuite(t, slower)
	code, out, errOut = runCLI(t, "bench", "--suite", "--baseline", base, "--timed-factor", "2")
	assert.Equal(t, exitRegression, code, errOut)
	assert.Contains(t, out, "**WORSE (×2.4)**")
	assert.Contains(t, errOut, "dense core prefix n=512 vs fixedpoint: WORSE (×2.4)")
	// Within a wider allowance it passes; with --json the gate table goes
	// to stderr and stdout stays one JSON report.
	code, out, errOut = runCLI(t, "bench", "--suite", "--json", "--baseline", base, "--timed-factor", "3")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "worse within noise")
	require.NoError(t, json.Unmarshal([]byte(out), &rep))

	failing := append([]bench.SuiteRow(nil), rows...)
	failing[2].Ratio, failing[2].Fail = 1.5, "FAIL: 50 sd"
	fakeSuite(t, failing)
	code, out, errOut = runCLI(t, "bench", "--suite")
	assert.Equal(t, exitRegression, code, errOut)
	assert.Contains(t, out, "**1.5 ± 0.01 FAIL: 50 sd**")
	assert.Contains(t, errOut, "c: FAIL: 50 sd")
}

func TestBenchSuiteBaselineErrors(t *testing.T) {
	fakeSuite(t, nil)
	dir := t.TempDir()
	notReport := filepath.Join(dir, "x.json")
	require.NoError(t, os.WriteFile(notReport, []byte(`{"comparison": {}}`), 0o644))
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--baseline", notReport}, 2, "--baseline compares a suite run: it needs --suite"},
		{[]string{"--suite", "--timed-factor", "1"}, 2, "--timed-factor must be a finite number above 1"},
		{[]string{"--suite", "--baseline", notReport}, 1, "is not a dpsolve bench --suite --json report: no rows"},
		{[]string{"--suite", "--baseline", filepath.Join(dir, "missing.json")}, 1, "missing.json"},
	} {
		code, _, errOut := runCLI(t, append([]string{"bench"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.msg, "%v", c.args)
	}
}
