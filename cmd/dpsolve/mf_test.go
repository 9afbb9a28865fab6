package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/mf"
)

func runMFArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runMF(context.Background(), args, &out, &errb)
	return out.String(), err
}

// The JSON report has the documented fields, --out writes C.npy, bands.npy
// and report.json, and --check scores the written C to the same objective.
func TestMFJSONOutAndCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plan")
	out, err := runMFArgs(t, "--n", "32", "--min-sep", "4", "--workload", "momentum:0.9", "--json", "--quiet", "--out", dir,
		"--epsilon", "2", "--delta", "1e-6")
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"n", "epochs", "min_sep", "bands", "workload", "objective", "lower_bound", "gap", "sensitivity", "iterations", "seconds", "sigma", "rho"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("--json lacks %q", k)
		}
	}
	if g := rep["gap"].(float64); g > 1e-8 || rep["sensitivity_squared"].(float64) != 8 {
		t.Errorf("gap %v sens² %v", g, rep["sensitivity_squared"])
	}
	for _, f := range []string{"C.npy", "bands.npy", "report.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	b, err := matio.ReadMatrix(filepath.Join(dir, "bands.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if r, c := b.Dims(); r != 32 || c != 4 {
		t.Errorf("bands.npy is %d×%d", r, c)
	}
	chk, err := runMFArgs(t, "--n", "32", "--min-sep", "4", "--workload", "momentum:0.9", "--json", "--check", filepath.Join(dir, "C.npy"))
	if err != nil {
		t.Fatal(err)
	}
	var crep map[string]any
	json.Unmarshal([]byte(chk), &crep)
	if a, c := rep["objective"].(float64), crep["objective"].(float64); math.Abs(a-c) > 1e-9*a {
		t.Errorf("--check scores %v, solve reported %v", c, a)
	}
}

func TestMFBadInput(t *testing.T) {
	cases := [][]string{
		{"--n", "63", "--epochs", "4", "--workload", "prefix"},
		{"--n", "16", "--min-sep", "17", "--workload", "prefix"},
		{"--n", "16", "--min-sep", "4", "--bands", "5", "--workload", "prefix"},
		{"--n", "16", "--workload", "momentum:1.5"},
		{"--n", "16", "--workload", "bogus"},
		{"--workload", "prefix"},
		{"--n", "16"},
		{"--n", "16", "--workload", "prefix", "--epsilon", "1"},
		{"--n", "16", "--bands", "2", "--workload", "prefix"},
		{"--n", "16", "--workload", "prefix,cooldown:99"},
	}
	for _, c := range cases {
		if _, err := runMFArgs(t, c...); err == nil {
			t.Errorf("%s: want an error", strings.Join(c, " "))
		}
	}
}

// TestMFCertifiedRefusesBoundAboveObjective: the report's own pair, after
// the scaling by sens², is checked before it is printed as certified.
func TestMFCertifiedRefusesBoundAboveObjective(t *testing.T) {
	out := mfJSON{N: 512, Objective: 1000, LowerBound: 1000 * (1 + 1e-9)}
	var be *mf.BoundError
	if err := mfCertified(out); !errors.As(err, &be) {
		t.Fatalf("bound above the objective: got %v, want a *mf.BoundError", err)
	}
	out.LowerBound = 1000 * (1 - 1e-12)
	if err := mfCertified(out); err != nil {
		t.Fatalf("valid pair: %v", err)
	}
}

// A rank-deficient --w (here only the final model's sum) is refused with
// mf's RankError, which names --ridge; with --ridge the plan certifies and
// reports the released quantities' own error, at most the ridged objective.
func TestMFRidge(t *testing.T) {
	w := filepath.Join(t.TempDir(), "final.npy")
	if err := matio.WriteMatrix(w, mat.NewDense(1, 16, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})); err != nil {
		t.Fatal(err)
	}
	_, err := runMFArgs(t, "--w", w, "--epochs", "4", "--quiet")
	var re *mf.RankError
	if !errors.As(err, &re) || re.Rank != 1 || !strings.Contains(err.Error(), "--ridge") {
		t.Fatalf("want a RankError naming --ridge, got %v", err)
	}
	out, err := runMFArgs(t, "--w", w, "--epochs", "4", "--quiet", "--json", "--ridge", "1e-4")
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	obj, rel := rep["objective"].(float64), rep["released_error"].(float64)
	if rep["ridge"].(float64) != 1e-4 || !(rep["gap"].(float64) <= 1e-8) || !(rel > 0 && rel < obj) {
		t.Errorf("ridge %v gap %v released %v objective %v", rep["ridge"], rep["gap"], rel, obj)
	}
}
