package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/model/workload"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestSolveJSON: the JSON output has the documented keys, reproduces the
// certified reference optimum Prefix n = 32 (internal/reference)
// and writes A and X files consistent with each other.
func TestSolveJSON(t *testing.T) {
	dir := t.TempDir()
	fa, fx := filepath.Join(dir, "A.npy"), filepath.Join(dir, "X.csv")
	code, out, errOut := runCLI(t, "solve", "--workload", "prefix", "--n", "32", "--json", "--out-a", fa, "--out-x", fx)
	require.Equal(t, 0, code, errOut)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	for _, k := range []string{"objective", "lower_bound", "gap", "svd_bound", "iterations", "cg_steps", "seconds", "status", "backend", "n"} {
		require.Contains(t, got, k)
	}
	assert.InEpsilon(t, reference.PrefixN32, got["objective"].(float64), 1e-8) // the certified gap
	assert.LessOrEqual(t, got["gap"].(float64), 1e-8)
	assert.Equal(t, "converged", got["status"])
	assert.Contains(t, errOut, "dpsolve solve: newton  done", "progress on stderr, ending with the final event")

	a, err := matio.ReadMatrix(fa)
	require.NoError(t, err)
	x, err := matio.ReadMatrix(fx)
	require.NoError(t, err)
	var ata mat.Dense
	ata.Mul(a.T(), a)
	require.True(t, mat.EqualApprox(&ata, x, 1e-12))
}

// TestSolveFromFiles: --gram and --w give the same optimum as the built-in
// workload they encode.
func TestSolveFromFiles(t *testing.T) {
	dir := t.TempDir()
	w, _ := workload.NewAllRange(12)
	fw, fg := filepath.Join(dir, "W.npy"), filepath.Join(dir, "V.csv")
	require.NoError(t, matio.WriteMatrix(fw, w.Matrix()))
	require.NoError(t, matio.WriteMatrix(fg, w.Gram()))
	objective := func(args ...string) float64 {
		code, out, errOut := runCLI(t, append([]string{"solve", "--json", "--quiet"}, args...)...)
		require.Equal(t, 0, code, errOut)
		var got struct{ Objective float64 }
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		return got.Objective
	}
	ref := objective("--workload", "allrange", "--n", "12")
	assert.InEpsilon(t, ref, objective("--w", fw), 1e-10)
	assert.InEpsilon(t, ref, objective("--gram", fg), 1e-10)
}

func TestSolveErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"solve"}, 2, "exactly one of"},
		{[]string{"solve", "--workload", "prefix"}, 2, "domain size n must be positive"},
		{[]string{"solve", "--workload", "bogus", "--n", "4"}, 2, "bogus"},
		{[]string{"solve", "--workload", "prefix", "--n", "4", "--tol", "-1"}, 2, "--tol"},
		{[]string{"solve", "--workload", "prefix", "--n", "4", "--method", "x"}, 2, "--method"},
		{[]string{"solve", "--gram", write("nonsq.csv", "1,2,3\n4,5,6\n")}, 1, "square"},
		{[]string{"solve", "--gram", write("asym.csv", "1,2\n3,1\n")}, 1, "not symmetric"},
		{[]string{"solve", "--gram", write("indef.csv", "1,2\n2,1\n")}, 1, "not positive semidefinite"},
		{[]string{"solve", "--gram", write("nan.csv", "1,nan\nnan,1\n")}, 1, "NaN"},
		{[]string{"solve", "--w", write("zerocol.csv", "1,0\n1,0\n")}, 1, "in no query"},
		{[]string{"solve", "--gram", filepath.Join(dir, "missing.npy")}, 1, "missing.npy"},
		{[]string{"solve", "--gram", write("trunc.npy", "\x93NUMPY\x01\x00")}, 1, "trunc.npy"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.msg, "%v", tc.args)
		assert.NotContains(t, errOut, "panic", "%v", tc.args)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version", "--json")
	require.Equal(t, 0, code)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Contains(t, []string{"openblas", "purego"}, got["backend"])
	require.Greater(t, got["threads"].(float64), 0.0)
	require.False(t, math.IsNaN(got["threads"].(float64)))
}
