package newton_test

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/newton"
)

// octaveTrajectory reads the objective per iteration that the seed's Matlab
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

// TestYuan2016ReproducesSeed: the seed's code in Octave ends its 30
// iterations on Prefix n = 256 at regularized objective 2433.665708 (BRIEF;
// our log). The method amplifies rounding differences about 2× per
// iteration, so the check is in two parts: the first 10 iterations agree
// with Octave's printed values to their printed precision (5e-7, plus
// 5e-7 slack), and the 30th within 0.1% as the issue asks (measured: exact
// on Debian's OpenBLAS Prescott kernels, within 4e-5 relative on the
// Haswell/SkylakeX kernels and pure Go).
func TestYuan2016ReproducesSeed(t *testing.T) {
	want := octaveTrajectory(t)
	var got []float64
	r, err := newton.Solve(context.Background(), gram(t, "prefix", 256), &newton.Options{
		Method:   newton.MethodYuan2016,
		Progress: func(it newton.Iteration) { got = append(got, it.Objective) },
	})
	require.NoError(t, err)
	t.Logf("%v; regularized %.6f, CG steps %d", r, r.RegularizedObjective, r.CGSteps)
	require.Len(t, got, 30)
	for i := 0; i < 10; i++ {
		assert.InDelta(t, want[i], got[i], 1e-6, "iteration %d", i+1)
	}
	assert.Equal(t, newton.IterationLimit, r.Status)
	assert.InEpsilon(t, 2433.665708, r.RegularizedObjective, 1e-3)
	assert.Equal(t, 5*29, r.CGSteps, "5 CG steps in each of iterations 2–30")
	checkFeasible(t, r)
	// The seed stops far from the optimum 1631.403: the certificate says so,
	// and its bound still holds.
	assert.Greater(t, r.Gap, 0.1)
	assert.Less(t, r.LowerBound, 1631.404)
}
