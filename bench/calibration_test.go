package bench

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// The statistic by hand: totals 1, 2, 3 against a promise of 2 have mean
// ratio 1 and sample sd 1, so the ratio's sd is 1/(√3·2); with m = 1000
// answers the chi-square sd √(2/3000) is smaller and not used.
func TestCalibrationOfByHand(t *testing.T) {
	c, err := calibrationOf([]float64{1, 2, 3}, 2, 1000)
	require.NoError(t, err)
	assert.InDelta(t, 1, c.Ratio, 1e-15)
	assert.InDelta(t, 1/(math.Sqrt(3)*2), c.SD, 1e-15)
	assert.InDelta(t, math.Sqrt(2.0/3000), c.ChiSquareSD, 1e-15)
	assert.Empty(t, c.fail())

	// A release that promised half its error: ratio 2 (totals 9.9, 10,
	// 10.1 against 5) whose empirical sd 0.1/(√3·5) = 0.0115 is below the
	// chi-square floor √(2/3000) = 0.0258 fails, 1/0.0258 = 38.7 sd out.
	c, err = calibrationOf([]float64{9.9, 10, 10.1}, 5, 1000)
	require.NoError(t, err)
	assert.InDelta(t, 2, c.Ratio, 1e-12)
	assert.Contains(t, c.fail(), "FAIL: the empirical error is 38.7 sd from the promise")
	// Equal totals: the sd is the chi-square floor √(2/(2·4)), not 0.
	c, err = calibrationOf([]float64{2, 2}, 2, 4)
	require.NoError(t, err)
	assert.InDelta(t, 0.5, c.SD, 1e-15)

	for _, bad := range []struct {
		totals   []float64
		expected float64
		m        int
	}{{[]float64{1}, 1, 1}, {[]float64{1, 2}, 0, 1}, {[]float64{1, 2}, math.Inf(1), 1}, {[]float64{1, 2}, 1, 0}} {
		_, err := calibrationOf(bad.totals, bad.expected, bad.m)
		assert.Error(t, err, "%v", bad)
	}
}

// A case with known error: the identity strategy on the identity workload
// under ρ-zCDP answers every cell with independent N(0, σ²) noise, σ² =
// 1/(2ρ) (sensitivity 1), so the total is σ² times a chi-square with n
// degrees of freedom: the release's promise is nσ² and the ratio's sd is
// exactly √(2/(R·n)). The empirical sd estimates that (its relative error
// is about 1/√(2R) = 7% at R = 100; 25% is 3.5 of those).
func TestCalibrationKnownError(t *testing.T) {
	const n, reps = 200, 100
	w, err := workload.Parse("identity", n)
	require.NoError(t, err)
	b, err := calibrate.ZCDP(0.5)
	require.NoError(t, err)
	x := calibrationHistogram(n)
	totals := make([]float64, reps)
	var expected float64
	for r := range totals {
		res, err := publish.RunHistogram(context.Background(), publish.HistogramRequest{Release: release.Request{
			Strategy: eye(n), Budget: b, Data: x, Workload: w, Noise: noise.NewSeededInsecure(uint64(r + 1))}})
		require.NoError(t, err)
		expected = res.Release.Expected.Total
		for i, a := range res.Release.Answers {
			totals[r] += (a - x[i]) * (a - x[i])
		}
	}
	// σ is snapped up by at most one grid step (~2^-40 relative).
	assert.InDelta(t, 1, expected/n, 1e-9, "σ² = 1/(2ρ) = 1")
	c, err := calibrationOf(totals, expected, n)
	require.NoError(t, err)
	assert.InDelta(t, math.Sqrt(2.0/(reps*n)), c.ChiSquareSD, 1e-15)
	assert.InDelta(t, 1, c.EmpiricalSD/c.ChiSquareSD, 0.25)
	assert.InDelta(t, 1, c.Ratio, calibrationSDs*c.ChiSquareSD)
	assert.Empty(t, c.fail())
}

func eye(n int) *mat.Dense {
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		a.Set(i, i, 1)
	}
	return a
}

// The suite's calibration rows pass on the library's releases (fixed
// seeds, R = 40 to keep the test short): the multi-attribute spec under
// kron (ρ-zCDP) and union (pure ε), its marginals under the marginals
// plan, and the dense prefix answer.
func TestSuiteCalibrationRows(t *testing.T) {
	var rows []SuiteRow
	require.NoError(t, suiteCalibration(context.Background(), 40, func(r SuiteRow) { rows = append(rows, r) }))
	require.Len(t, rows, 4)
	for _, r := range rows {
		t.Logf("%s: %.4g / %.4g ± %.2g", r.Case, r.Ours, r.Peer, r.SD)
		assert.Empty(t, r.Fail, r.Case)
		assert.Greater(t, r.Peer, 0.0)
	}
	assert.Contains(t, rows[0].Case, "template kron")
	assert.Contains(t, rows[2].Case, "template marginals")
}
