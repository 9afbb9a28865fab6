package newton_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/newton"
)

// sameResult requires two results to agree bit for bit: the same kernels on
// the same input in the same order give the same floating-point results.
func sameResult(t *testing.T, a, b *newton.Result, msg string) {
	t.Helper()
	require.Equal(t, a.Objective, b.Objective, msg)
	require.Equal(t, a.LowerBound, b.LowerBound, msg)
	require.Equal(t, a.Iterations, b.Iterations, msg)
	require.Equal(t, a.Rank, b.Rank, msg)
	require.Equal(t, a.X.RawSymmetric().Data, b.X.RawSymmetric().Data, msg)
	require.Equal(t, a.A.RawTriangular().Data, b.A.RawTriangular().Data, msg)
}

// TestSolverReusesWorkspaces: a second solve of the same n allocates less
// than one n×n matrix in all (measured from the runtime's allocation
// counter: only O(n) vectors and the r×n kernel workspaces remain), fills
// the caller's Result in place, and gives the same result bit for bit as
// the one-shot Solve — for a definite and a singular V.
func TestSolverReusesWorkspaces(t *testing.T) {
	// The O(n)·iterations vectors (and gonum's goroutines) that remain
	// grow linearly in n, the bound quadratically: at n = 256 the singular
	// path's measured 555 kB in the pure-Go build exceeded one n×n matrix
	// (524 kB) through those vectors alone, so both builds use n = 384
	// (where prefix measured 0.3 and width 0.5 of the bound in cgo).
	n := 384
	for _, spec := range []string{"prefix", "width:k=16"} {
		v := parsed(t, spec, n)
		want, err := newton.Solve(context.Background(), v, nil)
		require.NoError(t, err)
		s := newton.NewSolver(nil)
		var res newton.Result
		require.NoError(t, s.Solve(context.Background(), v, &res))
		sameResult(t, want, &res, spec+" first")
		x, a := res.X, res.A
		// The collector stays off while measuring: a collection in the
		// middle would empty the kernels' sync.Pool work arrays (O(n) each,
		// reallocated at once) and make the count depend on GC timing.
		var before, after runtime.MemStats
		runtime.GC()
		gc := debug.SetGCPercent(-1)
		runtime.ReadMemStats(&before)
		require.NoError(t, s.Solve(context.Background(), v, &res))
		runtime.ReadMemStats(&after)
		debug.SetGCPercent(gc)
		bytes := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s n=%d: second solve allocated %d bytes (one n×n matrix: %d)", spec, n, bytes, 8*n*n)
		require.Less(t, bytes, uint64(8*n*n), spec)
		require.Same(t, x, res.X, "X reused")
		require.Same(t, a, res.A, "A reused")
		sameResult(t, want, &res, spec+" second")
	}
}

// TestSolverAnySymmetric: a mat.Symmetric that is not a *mat.SymDense gives
// the same result as its dense copy.
func TestSolverAnySymmetric(t *testing.T) {
	n := 40
	band := mat.NewSymBandDense(n, 1, nil) // a tridiagonal Gram (the 1-D Laplacian plus 2I)
	for i := 0; i < n; i++ {
		band.SetSymBand(i, i, 4)
		if i+1 < n {
			band.SetSymBand(i, i+1, -1)
		}
	}
	dense := mat.NewSymDense(n, nil)
	dense.CopySym(band)
	want, err := newton.Solve(context.Background(), dense, nil)
	require.NoError(t, err)
	var got newton.Result
	require.NoError(t, newton.NewSolver(nil).Solve(context.Background(), band, &got))
	sameResult(t, want, &got, "band")
	require.ErrorIs(t, newton.NewSolver(nil).Solve(context.Background(), dense, nil), newton.ErrInput)
	require.ErrorIs(t, newton.NewSolver(&newton.Options{Threads: -1}).Solve(context.Background(), dense, &got), newton.ErrInput)
}

// TestSolversConcurrent: separate Solvers used from separate goroutines
// (run with -race) give the same results, bit for bit, as one Solver used
// sequentially; Threads = 1 caps the solver's own passes without changing
// any result (each row is computed the same way whatever the split).
func TestSolversConcurrent(t *testing.T) {
	var vs []*mat.SymDense
	for i := 0; i < 12; i++ {
		spec := []string{"width:k=%d", "wrelated:m=200,s=40,seed=%d", "wrelated:m=160,s=10,seed=%d"}[i%3]
		vs = append(vs, parsed(t, fmt.Sprintf(spec, 2+i), 80+8*(i%2)))
	}
	seq := make([]newton.Result, len(vs))
	one := newton.NewSolver(nil)
	for i, v := range vs {
		require.NoError(t, one.Solve(context.Background(), v, &seq[i]))
	}
	par := make([]newton.Result, len(vs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	errs := make([]error, len(vs))
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newton.NewSolver(&newton.Options{Threads: 1})
			for i := range jobs {
				errs[i] = s.Solve(context.Background(), vs[i], &par[i])
			}
		}()
	}
	for i := range vs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i := range vs {
		require.NoError(t, errs[i])
		sameResult(t, &seq[i], &par[i], fmt.Sprintf("problem %d", i))
	}
}
