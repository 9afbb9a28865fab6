package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/bench"
	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// peersAvailable reports whether the Python peers can run here (CI installs
// numpy/scipy with scripts/install-deps.sh; elsewhere the bench notes their
// absence, which is checked too).
func peersAvailable(t *testing.T) bool {
	p, err := bench.NewPeers(t.Context(), bench.DefaultPython)
	if err != nil {
		return false
	}
	p.Close()
	return true
}

// TestBenchEndToEnd runs `dpsolve bench` at CI size (n ≤ 64, one
// repetition) with every output, and checks the report's structure and that
// every reported gap is the one newton.Certificate gives for the saved X,
// whose objective is checked once more against tr(V X⁻¹) formed here.
func TestBenchEndToEnd(t *testing.T) {
	dir := t.TempDir()
	xdir := filepath.Join(dir, "x")
	files := map[string]string{}
	for _, k := range []string{"csv", "md"} {
		files[k] = filepath.Join(dir, k+"."+k)
	}
	withPeers := peersAvailable(t)
	args := []string{"bench", "--workload", "prefix,allrange", "--n", "32,64", "--repeat", "1", "--json",
		"--save-x", xdir, "--csv", files["csv"], "--md", files["md"],
		"--scaling", "--scaling-n", "32,48", "--kernels", "--kernel-n", "48", "--peers"}
	code, out, errOut := runCLI(t, args...)
	require.Equal(t, 0, code, errOut)

	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	methods := []string{"newton", "yuan2016"}
	if withPeers {
		methods = append(methods, bench.PeerNames...)
		assert.Contains(t, rep.Machine.Python, "numpy")
	} else {
		require.NotEmpty(t, rep.Notes)
		assert.Contains(t, strings.Join(rep.Notes, "\n"), "peers skipped")
	}
	assert.Equal(t, blas.Describe(), rep.Machine.Backend)
	assert.Equal(t, 1e-8, rep.Tol)
	require.NotNil(t, rep.Comparison)
	c := rep.Comparison
	require.Len(t, c.Runs, 2*2*len(methods))
	require.Len(t, c.Summary, 2*2*len(methods))
	require.Len(t, c.DGEMM, 2)
	require.Len(t, c.BestBounds, 4)

	grams := map[string]*mat.SymDense{}
	for i, r := range c.Runs {
		assert.Equal(t, methods[i%len(methods)], r.Method, "interleaved order")
		require.Empty(t, r.Error, "%s %s n=%d", r.Method, r.Workload, r.N)
		assert.Equal(t, bench.GapSource, r.GapSource)
		assert.True(t, r.Seconds.Valid() && r.Seconds > 0)
		assert.True(t, r.DGEMMEquivalents.Valid() && r.DGEMMEquivalents > 0)
		assert.NotEmpty(t, r.Trace)
		// re-certify the saved X ourselves
		require.NotEmpty(t, r.XFile)
		xd, err := matio.ReadMatrix(r.XFile)
		require.NoError(t, err)
		X := symFromDense(xd)
		key := fmt.Sprintf("%s/%d", r.Workload, r.N)
		if grams[key] == nil {
			w, err := workload.Builtin(r.Workload, r.N)
			require.NoError(t, err)
			grams[key] = w.Gram()
		}
		V := grams[key]
		f, g, err := newton.Certificate(V, X)
		require.NoError(t, err)
		// same code on the same X: equal up to threaded BLAS reduction order
		assert.InEpsilon(t, f, float64(r.Objective), 1e-13, "objective is the certificate's")
		assert.InEpsilon(t, g, float64(r.LowerBound), 1e-13, "lower bound is the certificate's")
		assert.InDelta(t, (f-g)/f, float64(r.Gap), 1e-12*float64(r.Gap)+1e-15)
		var Y mat.Dense
		require.NoError(t, Y.Solve(X, V))
		assert.InEpsilon(t, mat.Trace(&Y), f, 1e-10, "certificate objective = tr(V X⁻¹)")
		if r.Method == "newton" {
			assert.LessOrEqual(t, float64(r.Gap), 1e-8, "%s n=%d", r.Workload, r.N)
		}
		if withPeers && r.Method != "yuan2016" {
			assert.LessOrEqual(t, float64(r.GapBest), 1e-8, "%s %s n=%d", r.Method, r.Workload, r.N)
		}
	}
	for _, s := range c.Summary {
		assert.Equal(t, 1, s.Runs)
		if s.Method == "newton" {
			assert.False(t, s.SpeedUp.Valid())
		} else {
			assert.True(t, s.SpeedUp.Valid() && s.SpeedUp > 0, "%s %s n=%d", s.Method, s.Workload, s.N)
		}
	}

	// scaling: every compiled backend (purego capped at 2048, so both sizes run)
	require.Len(t, rep.Scaling, 2*2*len(blas.Backends()))
	for _, s := range rep.Scaling {
		require.Empty(t, s.Error)
		assert.LessOrEqual(t, float64(s.Gap), 1e-8)
		assert.Greater(t, s.PeakRSS, int64(0))
		assert.True(t, s.DGEMMEquivalents.Valid())
	}
	// kernels: six per backend
	require.Len(t, rep.Kernels, 6*len(blas.Backends()))

	// files
	runsCSV := readCSV(t, files["csv"])
	assert.Len(t, runsCSV, 1+len(c.Runs))
	assert.Equal(t, "gap_source", runsCSV[0][14])
	assert.Len(t, readCSV(t, strings.TrimSuffix(files["csv"], ".csv")+"-scaling.csv"), 1+len(rep.Scaling))
	assert.Len(t, readCSV(t, strings.TrimSuffix(files["csv"], ".csv")+"-kernels.csv"), 1+len(rep.Kernels))
	md, err := os.ReadFile(files["md"])
	require.NoError(t, err)
	assert.Contains(t, string(md), "| workload | n | method |")
	assert.Contains(t, string(md), "| prefix | 64 | newton |")
	assert.Contains(t, errOut, "prefix n=64 rep 1/1", "progress on stderr")
}

func symFromDense(d *mat.Dense) *mat.SymDense {
	r, _ := d.Dims()
	s := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			s.SetSym(i, j, d.At(i, j))
		}
	}
	return s
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

// TestBenchMarkdownDefault: without --json the tables go to stdout; --from
// re-renders the same tables from a saved --json report without running.
func TestBenchMarkdownDefault(t *testing.T) {
	args := []string{"bench", "--workload", "allrange", "--n", "16", "--repeat", "1", "--methods", "newton"}
	code, md, errOut := runCLI(t, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, md, "| allrange | 16 | newton |")
	assert.Contains(t, md, "peers not run")

	code, js, errOut := runCLI(t, append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	saved := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, os.WriteFile(saved, []byte(js), 0o644))
	code, again, errOut := runCLI(t, "bench", "--from", saved)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut, "nothing ran")
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	var want strings.Builder
	require.NoError(t, rep.WriteMarkdown(&want))
	assert.Equal(t, want.String(), again)

	code, _, errOut = runCLI(t, "bench", "--from", filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "missing.json")
}

// TestBenchPlotFlagsMoved: the plot flags, now dpsolve-plot's, are refused
// before anything runs or is written, with the command that draws the plot.
func TestBenchPlotFlagsMoved(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "r.md")
	for _, fl := range [][]string{{"--plot", filepath.Join(dir, "t.svg")}, {"--convergence-plot", filepath.Join(dir, "c.png")},
		{"--convergence", "prefix:16"}} {
		code, out, errOut := runCLI(t, append([]string{"bench", "--workload", "prefix", "--n", "16", "--repeat", "1", "--md", md}, fl...)...)
		assert.Equal(t, 2, code, fl[0])
		assert.Empty(t, out, fl[0])
		assert.Contains(t, errOut, fl[0]+": dpsolve no longer draws plots", fl[0])
		assert.Contains(t, errOut, "go run ./cmd/dpsolve-plot bench --from REPORT.json", fl[0])
		assert.NotContains(t, errOut, "rep 1/1", "%s: nothing ran", fl[0])
		_, err := os.Stat(md)
		assert.True(t, os.IsNotExist(err), "%s: nothing written", fl[0])
	}
}

// TestBenchFilesAreReplacedAtomically: --md and --csv replace an existing
// file by renaming a complete new one over it, never by rewriting it in
// place: a hard link to the old file keeps the old content (an in-place
// write would change it through the link too), and no temporary file is
// left behind.
func TestBenchFilesAreReplacedAtomically(t *testing.T) {
	args := []string{"bench", "--workload", "allrange", "--n", "16", "--repeat", "1", "--methods", "newton", "--json"}
	code, js, errOut := runCLI(t, args...)
	require.Equal(t, 0, code, errOut)
	dir := t.TempDir()
	saved := filepath.Join(dir, "report.json")
	require.NoError(t, os.WriteFile(saved, []byte(js), 0o644))
	md, csvPath := filepath.Join(dir, "t.md"), filepath.Join(dir, "t.csv")
	for _, p := range []string{md, csvPath} {
		require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o644))
		require.NoError(t, os.Link(p, p+".old"))
	}
	code, _, errOut = runCLI(t, "bench", "--from", saved, "--md", md, "--csv", csvPath)
	require.Equal(t, 0, code, errOut)
	for _, p := range []string{md, csvPath} {
		old, err := os.ReadFile(p + ".old")
		require.NoError(t, err)
		assert.Equal(t, "old\n", string(old), "%s was rewritten in place", p)
		now, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Contains(t, string(now), "allrange", p)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"report.json", "t.md", "t.md.old", "t.csv", "t.csv.old"}, names, "no temporary file is left")
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--repeat", "0"},
		{"--workload", "nosuch"},
		{"--workload", ""},
		{"--n", "1"},
		{"--n", "abc"},
		{"--tol", "0"},
		{"--tol", "1.5"},
		{"--methods", "simplex"},
		{"--backends", "cuda"},
		{"--convergence", "prefix"},
		{"--convergence", "allrange:64", "--workload", "prefix", "--n", "64"},
		{"--compare=false"},
		{"--threads", "-1"},
		{"--peer-timeout", "0s"},
		{"--scaling-repeat", "0"},
		{"extra-argument"},
	} {
		code, _, errOut := runCLI(t, append([]string{"bench"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
		assert.NotEmpty(t, errOut, "%v", args)
	}
}
