package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/sdp"
	"github.com/dpsolve/dpsolve/model/workload"
)

func requireCSDPOnPath(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("csdp"); err != nil {
		t.Skip("csdp not on PATH: install coinor-csdp (scripts/install-deps.sh) to run the CSDP cross-checks")
	}
}

// Export only (no solver needed): the file parses back into the program the
// library builds, with the documented sizes: Prefix n = 4 has W given as a
// 4×4 matrix, so 10 + 10 variables, a 8×8 LMI block and 4 inequalities.
func TestSDPExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "P.dat-s")
	code, out, errOut := runCLI(t, "sdp", "--workload", "prefix", "--n", "4", "--form", "approx", "--export", path, "--json")
	require.Equal(t, 0, code, errOut)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "matrix", got["w_source"])
	assert.Equal(t, 20.0, got["variables"])
	assert.NotContains(t, got, "sdp_objective", "no solve requested")
	assert.Contains(t, errOut, "wrote "+path)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	p, err := sdp.ReadSDPA(f)
	require.NoError(t, err)
	assert.Equal(t, []int{8, -4}, p.Blocks)
	w, _ := workload.NewPrefix(4)
	fm, err := sdp.Build(sdp.Approx, w.Matrix())
	require.NoError(t, err)
	assert.Equal(t, fm.Problem.C, p.C)
	assert.Len(t, p.Entries, len(fm.Problem.Entries))

	// AllRange has m = n(n+1)/2 > n queries: the program uses the n×n Gram
	// factor instead, keeping the block at 2n.
	code, out, errOut = runCLI(t, "sdp", "--workload", "allrange", "--n", "4", "--form", "exact", "--export", path, "--json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "gram-factor", got["w_source"])
	assert.Equal(t, []any{8.0, 8.0, -36.0}, got["blocks"])
}

func TestSDPUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"sdp", "--workload", "prefix", "--n", "4"}, "nothing to do"},
		{[]string{"sdp", "--workload", "prefix", "--n", "4", "--solve", "--form", "p1"}, "unknown form"},
		{[]string{"sdp", "--export", "x.dat-s"}, "exactly one of"},
		{[]string{"sdp", "--workload", "prefix", "--n", "4", "--export", "x.dat-s", "--out-x", "x.npy"}, "need --solve"},
		{[]string{"sdp", "--workload", "prefix", "--n", "4", "--solve", "--tol", "-1"}, "--tol"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Contains(t, errOut, tc.msg, "%v", tc.args)
	}
	// A missing output directory is found before any work (preflight.go).
	code, _, errOut := runCLI(t, "sdp", "--workload", "prefix", "--n", "4", "--export", filepath.Join(t.TempDir(), "no", "such", "dir.dat-s"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "does not exist")
}

func TestSDPMissingSolver(t *testing.T) {
	code, _, errOut := runCLI(t, "sdp", "--workload", "prefix", "--n", "4", "--solve", "--csdp", filepath.Join(t.TempDir(), "csdp"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "apt-get install coinor-csdp")

	t.Setenv("PATH", t.TempDir())
	code, _, errOut = runCLI(t, "sdp", "--workload", "prefix", "--n", "4", "--solve")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "not found on PATH")
}

func TestSDPNonOptimalSolver(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no /bin/sh for the fake solver")
	}
	fake := filepath.Join(t.TempDir(), "csdp")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho 'Stuck at edge of dual feasibility.'\necho 'Failure: return code is 6'\nexit 6\n"), 0o755))
	code, _, errOut := runCLI(t, "sdp", "--workload", "prefix", "--n", "4", "--solve", "--csdp", fake, "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "exit status 6: stuck at the edge of dual feasibility")

	fake2 := filepath.Join(t.TempDir(), "csdp")
	require.NoError(t, os.WriteFile(fake2, []byte("#!/bin/sh\necho 'Success: SDP solved'\necho '1 2 oops' > \"$2\"\nexit 0\n"), 0o755))
	code, _, errOut = runCLI(t, "sdp", "--workload", "prefix", "--n", "4", "--solve", "--csdp", fake2, "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "malformed CSDP solution")
}

// --solve --json on Prefix n = 16: the documented keys, agreement with the
// certified Newton optimum to 1e-6 relative (the tolerance), and
// X/A files with AᵀA = X.
func TestSDPSolveApproxJSON(t *testing.T) {
	requireCSDPOnPath(t)
	dir := t.TempDir()
	fx, fa := filepath.Join(dir, "X.npy"), filepath.Join(dir, "A.csv")
	code, out, errOut := runCLI(t, "sdp", "--workload", "prefix", "--n", "16", "--form", "approx", "--solve", "--json", "--out-x", fx, "--out-a", fa)
	require.Equal(t, 0, code, errOut)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	for _, k := range []string{"sdp_objective", "newton_objective", "relative_difference", "solver", "seconds"} {
		require.Contains(t, got, k)
	}
	assert.LessOrEqual(t, got["relative_difference"].(float64), 1e-6)
	assert.InEpsilon(t, got["newton_objective"].(float64), got["sdp_objective"].(float64), 1e-6)
	assert.Contains(t, got["solver"], "CSDP")
	// CSDP's feasibility tolerance is 1e-8 (relative); the slack check is absolute
	// on entries of size ≤ n, so allow 1e-6.
	assert.LessOrEqual(t, got["max_infeasibility"].(float64), 1e-6)
	assert.Contains(t, errOut, "Success: SDP solved", "CSDP progress on stderr")

	x, err := matio.ReadMatrix(fx)
	require.NoError(t, err)
	a, err := matio.ReadMatrix(fa)
	require.NoError(t, err)
	var ata mat.Dense
	ata.Mul(a.T(), a)
	assert.True(t, mat.EqualApprox(&ata, x, 1e-10))

	// Human-readable form prints the same comparison.
	code, out, _ = runCLI(t, "sdp", "--workload", "prefix", "--n", "8", "--solve", "--quiet")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "newton objective")
	assert.Contains(t, out, "relative diff")
}

// --form exact-bounded on AllRange n = 8: the relaxation value is a lower
// bound on J₁ of every baseline (identity, H2, wavelet) and of the strategy
// chol(X); the SDP's A satisfies ‖A‖₁,∞ ≤ 1 + 1e-6. --form exact reproduces
// the documented defect (value ≈ 0).
func TestSDPSolveExactJSON(t *testing.T) {
	requireCSDPOnPath(t)
	for _, form := range []string{"exact-bounded", "exact"} {
		code, out, errOut := runCLI(t, "sdp", "--workload", "allrange", "--n", "8", "--form", form, "--solve", "--json", "--quiet")
		require.Equal(t, 0, code, errOut)
		var got struct {
			SDPObjective    float64 `json:"sdp_objective"`
			NewtonObjective float64 `json:"newton_objective"`
			Exact           struct {
				RelaxationValue float64            `json:"relaxation_value"`
				AL1             float64            `json:"a_l1_sensitivity"`
				SDPStrategy     *float64           `json:"sdp_strategy_objective"`
				SDPNote         string             `json:"sdp_strategy_note"`
				CholX           *float64           `json:"chol_x_strategy_objective"`
				Baselines       map[string]float64 `json:"baselines"`
			} `json:"exact"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		e := got.Exact
		require.Len(t, e.Baselines, 4, form) // identity, h2, wavelet, lrm
		require.Contains(t, e.Baselines, "lrm", form)
		for name, j := range e.Baselines {
			assert.LessOrEqual(t, e.RelaxationValue, j*(1+1e-8), "%s: %s", form, name)
		}
		require.NotNil(t, e.CholX, form)
		assert.LessOrEqual(t, e.RelaxationValue, *e.CholX*(1+1e-8), form)
		assert.LessOrEqual(t, e.AL1, 1+1e-6, form)
		if e.SDPStrategy != nil {
			assert.LessOrEqual(t, e.RelaxationValue, *e.SDPStrategy*(1+1e-8), form)
		} else {
			assert.NotEmpty(t, e.SDPNote, form)
		}
		switch form {
		case "exact-bounded":
			assert.InEpsilon(t, got.NewtonObjective, e.RelaxationValue, 1e-6)
		case "exact":
			assert.Less(t, e.RelaxationValue, 1e-6, fmt.Sprint(e.RelaxationValue))
		}
	}
}

// The text output renders the exact report's baselines from the same struct
// as --json: every baseline the JSON carries gets its line, in registry order
// with the Low-Rank Mechanism's L after them (the list was once hard-coded,
// so the lrm row the JSON reported never reached the text).
func TestSDPHumanPrintsEveryBaseline(t *testing.T) {
	x := 1.0
	o := &sdpJSON{Workload: "allrange", N: 8, Form: "exact-bounded", SDPObjective: &x, SDPLowerBound: &x,
		NewtonObjective: &x, RelativeDifference: &x, Seconds: &x, NewtonSeconds: &x, MaxInfeasibility: &x,
		Exact: &sdp.ExactReport{Baselines: map[string]float64{"lrm": 4.5, "wavelet": 3.25, "identity": 1.5, "h2": 2.75}}}
	var b strings.Builder
	printSDPHuman(&b, o)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "J₁ of ") && !strings.Contains(l, "SDP A") && !strings.Contains(l, "chol(X)") {
			lines = append(lines, l)
		}
	}
	assert.Equal(t, []string{
		"J₁ of identity    1.5",
		"J₁ of h2          2.75",
		"J₁ of wavelet     3.25",
		"J₁ of lrm         4.5",
	}, lines)
}
