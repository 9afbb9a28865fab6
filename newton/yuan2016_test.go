package newton_test

import (
	"bufio"
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/progress"
)

// octaveTrajectory reads the objective per iteration that ConvexDP's Matlab
// code printed when run in Octave (testdata/ConvexDP.m, Prefix n = 256).
func octaveTrajectory(t *testing.T) []float64 {
	f, err := os.Open("testdata/convexdp_prefix256_octave.log")
	require.NoError(t, err)
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// iter:K, fobj:F, opt:…, cg:…, ls:…
		for _, field := range strings.Split(sc.Text(), ", ") {
			if v, ok := strings.CutPrefix(field, "fobj:"); ok {
				x, err := strconv.ParseFloat(v, 64)
				require.NoError(t, err)
				out = append(out, x)
			}
		}
	}
	require.NoError(t, sc.Err())
	require.Len(t, out, 30)
	return out
}

// TestYuan2016ReproducesSeed: ConvexDP (Yuan et al. 2016) in Octave ends
// its 30 iterations on Prefix n = 256 at regularized objective 2433.665708
// (testdata/convexdp_prefix256_octave.log). The method amplifies rounding differences about 2× per
// iteration, so the check is in two parts: the first 10 iterations agree
// with Octave's printed values to their printed precision (5e-7, plus
// 5e-7 slack), and the 30th within 0.1% (measured: exact
// on Debian's OpenBLAS Prescott kernels, within 4e-5 relative on the
// Haswell/SkylakeX kernels and pure Go).
func TestYuan2016ReproducesSeed(t *testing.T) {
	want := octaveTrajectory(t)
	var got []float64
	r, err := newton.Solve(context.Background(), gram(t, "prefix", 256), &newton.Options{
		Method: newton.MethodYuan2016,
		Progress: func(e progress.Event) {
			if !e.Done {
				got = append(got, e.Objective)
			}
		},
	})
	require.NoError(t, err)
	t.Logf("%v; regularized %.6f, CG steps %d", r, r.RegularizedObjective, r.CGSteps)
	require.Len(t, got, 30)
	// Every logged iteration is compared. The first 10 agree to the log's
	// printed precision (5e-7, plus 5e-7 slack). Later iterations amplify
	// rounding differences (the line search and CG see slightly different
	// numbers; on OpenBLAS's SkylakeX kernels the deviation jumps 35× at
	// iteration 21), so they are held to 1e-4 relative: 2.5× the largest
	// deviation measured on OpenBLAS and pure Go (3.4e-5, iteration 28), and
	// ten times tighter than the 0.1% asked of the final value.
	for i := range want {
		tol := 1e-6
		if i >= 10 {
			tol = 1e-4 * want[i]
		}
		t.Logf("iteration %2d: Octave %.6f, ours %.6f (|Δ| %.2g, allowed %.2g)", i+1, want[i], got[i], math.Abs(got[i]-want[i]), tol)
		assert.InDelta(t, want[i], got[i], tol, "iteration %d", i+1)
	}
	assert.Equal(t, newton.IterationLimit, r.Status)
	assert.InEpsilon(t, 2433.665708, r.RegularizedObjective, 1e-3)
	assert.Equal(t, 5*29, r.CGSteps, "5 CG steps in each of iterations 2–30")
	checkFeasible(t, r)
	// Yuan et al.'s 30 iterations stop far from the optimum
	// reference.PrefixN256: the certificate says so, and its bound still
	// holds.
	assert.Greater(t, r.Gap, 0.1)
	assert.LessOrEqual(t, r.LowerBound, reference.PrefixN256*(1+1e-12)) // weak duality
}
