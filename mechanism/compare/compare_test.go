package compare_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/mechanism/compare"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/accounting"
)

func lookup(t *testing.T, names ...string) []compare.Candidate {
	t.Helper()
	var rows []compare.Candidate
	for _, n := range names {
		s, ok := compare.Lookup(n)
		require.True(t, ok, n)
		rows = append(rows, s)
	}
	return rows
}

// Identity on Prefix(n) has the closed form total error σ²·tr(WᵀW) =
// σ²·n(n+1)/2 (column j of W has n − j ones, unit L2 sensitivity), and the
// certified optimum is the Gaussian reference, so its ratio is exactly 1 and
// every row is at least the SVD bound.
func TestRunGaussianClosedForm(t *testing.T) {
	const n = 8
	w, err := workload.Parse("prefix", n)
	require.NoError(t, err)
	nz, err := accounting.GaussianNoise(1, 1e-6, accounting.Analytic)
	require.NoError(t, err)
	env := &compare.Env{Ctx: context.Background(), Workload: w, Noise: nz, Tol: 1e-10, Log: io.Discard}
	res, err := compare.Run(env, lookup(t, "identity", "optimized", "lrm"))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Len(t, res.Rows, 2, "lrm is skipped under Gaussian noise")
	id, opt := res.Rows[0], res.Rows[1]
	want := nz.Scale * nz.Scale * n * (n + 1) / 2
	assert.InDelta(t, want, id.Report.TotalError, 1e-12*want)
	assert.InDelta(t, math.Sqrt(want/n), id.Report.RMSE, 1e-12*want)
	assert.Equal(t, 1.0, opt.RatioReference)
	assert.InDelta(t, id.Report.RMSE/opt.Report.RMSE, id.RatioReference, 1e-15)
	for _, r := range res.Rows {
		assert.GreaterOrEqual(t, r.RatioSVD, 1-1e-9, r.Strategy)
	}
}

// Under Laplace noise the reference is the best ε-DP row, never the
// Gaussian-optimized one, so the best row's ratio is 1 and no ratio is
// below it.
func TestRunLaplaceReference(t *testing.T) {
	w, err := workload.Parse("allrange", 8)
	require.NoError(t, err)
	nz, err := accounting.LaplaceNoise(1)
	require.NoError(t, err)
	env := &compare.Env{Ctx: context.Background(), Workload: w, Noise: nz, Tol: 1e-8, Log: io.Discard}
	res, err := compare.Run(env, lookup(t, "identity", "h2", "optimized"))
	require.NoError(t, err)
	best := math.Inf(1)
	for _, r := range res.Rows[:2] {
		best = math.Min(best, r.Report.RMSE)
	}
	for _, r := range res.Rows {
		assert.InDelta(t, r.Report.RMSE/best, r.RatioReference, 1e-15, r.Strategy)
	}
}

// A failing builder keeps its row with the error and makes Result.Err
// name it; a builder returning neither a strategy nor a report fails too.
func TestRunFailedRows(t *testing.T) {
	w, err := workload.Parse("total", 4)
	require.NoError(t, err)
	nz, err := accounting.LaplaceNoise(1)
	require.NoError(t, err)
	rows := append(lookup(t, "identity"),
		compare.Candidate{Name: "boom", Build: func(*compare.Env) (*compare.Outcome, error) { return nil, errors.New("boom") }},
		compare.Candidate{Name: "empty", Build: func(*compare.Env) (*compare.Outcome, error) { return &compare.Outcome{}, nil }},
		compare.Candidate{Name: "skip", Build: func(*compare.Env) (*compare.Outcome, error) { return nil, compare.ErrSkip }})
	res, err := compare.Run(&compare.Env{Ctx: context.Background(), Workload: w, Noise: nz, Log: io.Discard}, rows)
	require.NoError(t, err)
	require.Len(t, res.Rows, 3)
	assert.EqualError(t, res.Rows[1].Err, "boom")
	assert.Nil(t, res.Rows[1].Report)
	assert.True(t, math.IsNaN(res.Rows[1].RatioSVD))
	assert.ErrorContains(t, res.Err(), "2 row(s) failed: boom: boom; empty: builder returned neither")
}

// A cancelled context stops the comparison with its error, not a row.
func TestRunCancelled(t *testing.T) {
	w, err := workload.Parse("prefix", 4)
	require.NoError(t, err)
	nz, err := accounting.LaplaceNoise(1)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = compare.Run(&compare.Env{Ctx: ctx, Workload: w, Noise: nz, Log: io.Discard}, lookup(t, "identity"))
	assert.ErrorIs(t, err, context.Canceled)
}

func ExampleRun() {
	w, _ := workload.Parse("prefix", 16)
	nz, _ := accounting.LaplaceNoise(1)
	rows := []compare.Candidate{}
	for _, name := range []string{"identity", "h2"} {
		s, _ := compare.Lookup(name)
		rows = append(rows, s)
	}
	res, err := compare.Run(&compare.Env{Ctx: context.Background(), Workload: w, Noise: nz, Log: io.Discard}, rows)
	if err != nil {
		panic(err)
	}
	for _, r := range res.Rows {
		fmt.Printf("%-8s RMSE %.4f, %.3f× the best ε-DP row\n", r.Strategy, r.Report.RMSE, r.RatioReference)
	}
	// Output:
	// identity RMSE 4.1231, 1.000× the best ε-DP row
	// h2       RMSE 6.1291, 1.487× the best ε-DP row
}
