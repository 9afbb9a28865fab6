package bench

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/dpsolve/dpsolve/newton"
)

// fakeSolver returns a fixed feasible X (the identity, or the equal-
// correlation matrix (1−ρ)I + ρ11ᵀ) and claims objective and gap that are
// lies, so a test can tell the harness's certified numbers from the claims.
type fakeSolver struct {
	id    string
	rho   float64
	fail  bool
	calls *[]string // "name rep lowerBound" per call
}

func (f fakeSolver) name() string { return f.id }

func (f fakeSolver) solve(_ context.Context, p problem, lower float64) (*outcome, error) {
	*f.calls = append(*f.calls, fmt.Sprintf("%s %g", f.id, lower))
	if f.fail {
		return nil, errors.New("deliberate failure")
	}
	n := p.n()
	X := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := f.rho
			if i == j {
				v = 1
			}
			X.SetSym(i, j, v)
		}
	}
	return &outcome{X: X, Objective: 1, Gap: 0, Iterations: 7, Status: "converged", Seconds: 0.25,
		Trace: []TracePoint{{Seconds: 0.25, Objective: 1}}}, nil
}

// trVXinv is tr(V X⁻¹) computed independently of newton, by a dense solve.
func trVXinv(t *testing.T, V, X *mat.SymDense) float64 {
	var Y mat.Dense
	require.NoError(t, Y.Solve(X, V))
	return mat.Trace(&Y)
}

func TestCompareRecertifiesInterleavesAndSaves(t *testing.T) {
	var calls []string
	ref := fakeSolver{id: "newton", rho: 0.3, calls: &calls}
	other := fakeSolver{id: "other", rho: 0, calls: &calls}
	broken := fakeSolver{id: "broken", fail: true, calls: &calls}
	dir := t.TempDir()
	c, err := Compare(context.Background(), Config{
		Workloads: []string{"prefix"}, Ns: []int{16}, Repeat: 2, DGEMMSamples: 1, SaveX: dir,
		Methods: []Solver{other, broken, ref}, // the reference runs first anyway
	})
	require.NoError(t, err)
	require.Len(t, c.Runs, 6)

	V := (&workload.Prefix{N: 16}).Gram()
	// the reference's certified lower bound is what the others were given
	var refBound float64
	for i, r := range c.Runs {
		assert.Equal(t, i/3+1, r.Rep)
		assert.Equal(t, []string{"newton", "other", "broken"}[i%3], r.Method, "interleaved order")
		if r.Method == "broken" {
			assert.Contains(t, r.Error, "deliberate failure")
			assert.False(t, r.Objective.Valid())
			continue
		}
		require.Empty(t, r.Error)
		assert.Equal(t, GapSource, r.GapSource)
		// the claims are kept apart from the certified numbers
		assert.Equal(t, Num(1), r.ReportedObjective)
		assert.Equal(t, Num(0), r.ReportedGap)
		X, err := readSym(r.XFile)
		require.NoError(t, err)
		f := trVXinv(t, V, X)
		assert.InDelta(t, 1, float64(r.Objective)/f, 1e-10, "objective is tr(V X⁻¹) of the returned X")
		assert.Less(t, float64(r.LowerBound), float64(r.Objective))
		assert.InDelta(t, (float64(r.Objective)-float64(r.LowerBound))/float64(r.Objective), float64(r.Gap), 1e-15)
		if r.Method == "newton" {
			refBound = float64(r.LowerBound)
		}
	}
	require.Len(t, calls, 6)
	assert.Equal(t, "newton NaN", calls[0])
	assert.Equal(t, fmt.Sprintf("other %g", refBound), calls[1])
	assert.Equal(t, fmt.Sprintf("broken %g", refBound), calls[2])

	// X files are named by method, workload, n and repetition
	_, err = os.Stat(filepath.Join(dir, "other-prefix-16-2.npy"))
	assert.NoError(t, err)
	require.Len(t, c.DGEMM, 1)
	assert.Equal(t, 3, c.DGEMM[0].Samples) // 1 before + 1 per repetition
	assert.Greater(t, float64(c.DGEMM[0].Seconds), 0.0)
	require.Len(t, c.Summary, 3)
}

func TestCompareConfigErrors(t *testing.T) {
	var calls []string
	s := fakeSolver{id: "newton", calls: &calls}
	for name, cfg := range map[string]Config{
		"no methods":   {Workloads: []string{"prefix"}, Ns: []int{8}},
		"no sizes":     {Workloads: []string{"prefix"}, Methods: []Solver{s}},
		"tiny n":       {Workloads: []string{"prefix"}, Ns: []int{1}, Methods: []Solver{s}},
		"bad tol":      {Workloads: []string{"prefix"}, Ns: []int{8}, Methods: []Solver{s}, Tol: 2},
		"bad repeat":   {Workloads: []string{"prefix"}, Ns: []int{8}, Methods: []Solver{s}, Repeat: -1},
		"duplicate":    {Workloads: []string{"prefix"}, Ns: []int{8}, Methods: []Solver{s, s}},
		"bad workload": {Workloads: []string{"nosuch"}, Ns: []int{8}, Methods: []Solver{s}},
	} {
		_, err := Compare(context.Background(), cfg)
		assert.Error(t, err, name)
	}
	assert.Empty(t, calls)
}

func TestCompareCancelled(t *testing.T) {
	var calls []string
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := Compare(ctx, Config{Workloads: []string{"prefix"}, Ns: []int{8}, Repeat: 1, DGEMMSamples: 1,
		Methods: []Solver{fakeSolver{id: "newton", calls: &calls}}})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, c)
	assert.Empty(t, c.Runs)
}

// dpsolve's own methods through the harness: the certified gap of the
// default method meets the tolerance on a reference problem (Prefix n = 32,
// certified optimum internal/reference.PrefixN32).
func TestCompareNewtonReference(t *testing.T) {
	c, err := Compare(context.Background(), Config{Workloads: []string{"prefix"}, Ns: []int{32}, Repeat: 1,
		DGEMMSamples: 1, Methods: []Solver{Newton{Method: newton.MethodNewton}}})
	require.NoError(t, err)
	require.Len(t, c.Runs, 1)
	r := c.Runs[0]
	require.Empty(t, r.Error)
	assert.LessOrEqual(t, float64(r.Gap), 1e-8)
	// |F − ref| ≤ gap·F + the reference's rounding (5e-13 relative)
	assert.InDelta(t, reference.PrefixN32, float64(r.Objective), reference.PrefixN32*(1e-8+5e-13))
	assert.NotEmpty(t, r.Trace)
	assert.True(t, r.DGEMMEquivalents.Valid())
	assert.False(t, math.IsNaN(float64(r.Trace[len(r.Trace)-1].GapBest)))
}

func TestReadSymRejectsAsymmetric(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npy")
	require.NoError(t, matio.WriteMatrix(path, mat.NewDense(2, 2, []float64{1, 0.5, 0.25, 1})))
	_, err := readSym(path)
	assert.ErrorContains(t, err, "not symmetric")
	require.NoError(t, matio.WriteMatrix(path, mat.NewDense(2, 3, nil)))
	_, err = readSym(path)
	assert.ErrorContains(t, err, "not square")
}
