package benchplot

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/bench"
	"github.com/dpsolve/dpsolve/bench/funcpert"
	"github.com/dpsolve/dpsolve/blas"
)

// report is a hand-made comparison of two methods at n = 4 and 8 (the peer
// ten times slower at n = 8), each run with a two-point trace, and a
// two-point scaling sweep.
func report() *bench.Report {
	rep := &bench.Report{Machine: bench.DescribeMachine(), Tol: 1e-8, Repeat: 1}
	rep.Comparison = &bench.Comparison{DGEMM: []bench.DGEMMTiming{{N: 4, Seconds: 0.01}, {N: 8, Seconds: 0.08}}}
	nan := bench.Num(math.NaN())
	for _, n := range []int{4, 8} {
		for _, m := range []string{"newton", "peer"} {
			s := 0.1 * float64(n)
			if m == "peer" && n == 8 {
				s *= 10
			}
			rep.Comparison.Runs = append(rep.Comparison.Runs, bench.RunRecord{
				Workload: "prefix", N: n, Method: m, Rep: 1, Seconds: bench.Num(s),
				Objective: 10, LowerBound: 10 - 1e-9, Gap: 1e-10, Status: "converged", GapSource: bench.GapSource,
				DGEMMEquivalents: nan, GapBest: nan,
				Trace: []bench.TracePoint{{Seconds: s / 2, Objective: 11, GapBest: nan}, {Seconds: s, Objective: 10, GapBest: nan}},
			})
		}
	}
	rep.Comparison.Summarize()
	rep.Scaling = []bench.ScalingRow{{Backend: "purego", Workload: "prefix", N: 4, Seconds: 0.5, Gap: 1e-9, Matrices: 3},
		{Backend: "purego", Workload: "prefix", N: 8, Seconds: 4, Gap: 1e-9, Matrices: 3}}
	return rep
}

func isPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 4)
	assert.Equal(t, "\x89PNG", string(b[:4]), path)
}

func TestTimeAndConvergence(t *testing.T) {
	rep := report()
	dir := t.TempDir()
	tp, cp, sp := filepath.Join(dir, "t.png"), filepath.Join(dir, "c.png"), filepath.Join(dir, "t.svg")
	require.NoError(t, Time(rep, tp))
	require.NoError(t, Convergence(rep, cp, "prefix", 8))
	isPNG(t, tp)
	isPNG(t, cp)
	require.NoError(t, Time(rep, sp))
	b, err := os.ReadFile(sp)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")
	assert.Error(t, Convergence(rep, cp, "prefix", 99), "no runs at that n")
	assert.Error(t, Convergence(&bench.Report{}, cp, "prefix", 8), "no comparison")
	assert.Error(t, Time(&bench.Report{}, tp), "nothing to draw")
	// A report that went through --json draws the same way.
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	var back bench.Report
	require.NoError(t, json.Unmarshal(js, &back))
	require.NoError(t, Convergence(&back, cp, "prefix", 4))
}

func TestMarginals(t *testing.T) {
	rows, err := bench.MarginalsScaling(bench.MarginalsConfig{Attributes: []int{4, 8}, Repeat: 1, MaxAttributes: 4})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "m.png")
	require.NoError(t, Marginals(p, rows))
	isPNG(t, p)
	assert.Error(t, Marginals(p, []bench.MarginalsRow{{Attributes: 4, SumSeconds: bench.Num(math.NaN())}}), "no sum-plan timings")
}

// Two hand-made curves, the functional one with its bound, decode as a PNG
// of the stated width (25 cm at vgimg's 96 dpi is 945 pixels).
func TestFuncpert(t *testing.T) {
	eps := []float64{0.1, 1, 10}
	series := []funcpert.Series{
		{Method: "functional", Coeffs: 15, Eps: eps, Mean: []float64{1, 0.1, 0.01}, Min: []float64{0.5, 0.05, 0.005},
			Max: []float64{2, 0.2, 0.02}, Bound: []float64{3, 0.3, 0.03}},
		{Method: "message", Eps: eps, Mean: []float64{10, 1, 0.1}, Min: []float64{5, 0.5, 0.05}, Max: []float64{20, 2, 0.2}},
	}
	p := filepath.Join(t.TempDir(), "fig.png")
	require.NoError(t, Funcpert(series, p))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 400)
	assert.Error(t, Funcpert(series, filepath.Join(t.TempDir(), "missing", "fig.png")), "unwritable path")
}

// TestMarginalsScalingRecord records the sweep of docs/marginals.md (10…100 binary
// attributes, all 0…3-way marginals) into $DPSOLVE_MARGINALS_SWEEP (a
// directory): marginals-scaling.{json,md,png}, medians of 5 sum plans and
// one max plan per point. Opt-in: it plans for about a minute.
func TestMarginalsScalingRecord(t *testing.T) {
	dir := os.Getenv("DPSOLVE_MARGINALS_SWEEP")
	if dir == "" {
		t.Skip("set DPSOLVE_MARGINALS_SWEEP=DIR to record the sweep")
	}
	var log bytes.Buffer
	rows, err := bench.MarginalsScaling(bench.MarginalsConfig{Attributes: []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, Repeat: 5, MaxRepeat: 1, Log: &log})
	t.Log(log.String())
	require.NoError(t, err)
	js, _ := json.MarshalIndent(struct {
		Backend string               `json:"backend"`
		Rows    []bench.MarginalsRow `json:"rows"`
	}{blas.Describe(), rows}, "", " ")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "marginals-scaling.json"), js, 0o644))
	var md bytes.Buffer
	require.NoError(t, bench.WriteMarginalsTable(&md, rows))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "marginals-scaling.md"), md.Bytes(), 0o644))
	require.NoError(t, Marginals(filepath.Join(dir, "marginals-scaling.png"), rows))
}
