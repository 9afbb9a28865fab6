package workload

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// zeroColumns counts the columns of W with no nonzero entry, computed from
// the explicit matrix (independent of the generators' bookkeeping).
func zeroColumns(w *mat.Dense) int {
	r, c := w.Dims()
	zero := 0
	for j := 0; j < c; j++ {
		nz := false
		for i := 0; i < r && !nz; i++ {
			nz = w.At(i, j) != 0
		}
		if !nz {
			zero++
		}
	}
	return zero
}

// TestParseRandomCoversEveryCell: Parse's random workloads never leave a
// cell untouched; when the raw constructor's draw already covers every cell
// Parse returns exactly that draw (same W), and otherwise it says so in the
// name. Small m on n = 64 makes uncovered raw draws common.
func TestParseRandomCoversEveryCell(t *testing.T) {
	const n = 64
	sawRedraw := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		for _, c := range []struct {
			kind string
			raw  func() (Explicit, error)
			spec string
		}{
			{"wrange", func() (Explicit, error) { return NewWRange(n, 30, seed) }, "wrange:m=30,seed="},
			{"wdiscrete", func() (Explicit, error) { return NewWDiscrete(n, 60, 0.01, 0.01, seed) }, "wdiscrete:m=60,seed="},
		} {
			spec := c.spec + itoa(seed)
			w, err := Parse(spec, n)
			require.NoError(t, err, spec)
			got := w.(Explicit).Matrix()
			assert.Zero(t, zeroColumns(got), spec)
			raw, err := c.raw()
			require.NoError(t, err)
			rawW := raw.Matrix()
			redrawn := strings.Contains(w.Name(), "redrawn=")
			if zeroColumns(rawW) == 0 {
				assert.False(t, redrawn, spec)
				assert.True(t, mat.Equal(rawW, got), "%s: a covering draw must be kept as is", spec)
			} else {
				assert.True(t, redrawn, "%s: %s", spec, w.Name())
				sawRedraw[c.kind] = true
			}
		}
	}
	// The test is only meaningful if both redraw paths ran.
	assert.True(t, sawRedraw["wrange"] && sawRedraw["wdiscrete"], "%v", sawRedraw)
}

// TestParseRandomImpossibleCoverage: parameters under which coverage never
// happens are an error naming the fix, not an endless loop.
func TestParseRandomImpossibleCoverage(t *testing.T) {
	_, err := Parse("wrange:m=1", 1000)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger m")
}

// TestParseDimsStrict: empty attribute sizes are errors, not silently
// skipped ("8xx8" is not 8x8, "8x" is not 8).
func TestParseDimsStrict(t *testing.T) {
	for _, s := range []string{"8xx8", "8x", "x8", "", " ", "8x 8x", "8*x8"} {
		_, err := ParseDims(s)
		assert.Error(t, err, "%q", s)
	}
	d, err := ParseDims(" 8 X 4 x2 ")
	require.NoError(t, err)
	assert.Equal(t, []int{8, 4, 2}, d)
	_, err = Parse("marginals:dims=8xx8", 0)
	assert.Error(t, err)
	_, err = Parse("wrange:m=", 8)
	assert.Error(t, err)
	_, err = Parse("wrange:m=4,", 8)
	assert.Error(t, err)
}

// TestParseShapeMatchesParse: ParseShape's sizes agree with the built
// workload's on every family (M exactly; N exactly), and it needs no
// allocation proportional to the sizes it reports.
func TestParseShapeMatchesParse(t *testing.T) {
	for _, spec := range []string{"identity", "total", "prefix", "allrange", "width:k=5", "wrange:m=50",
		"wdiscrete:m=80,pneg=0.05", "wrelated:m=20,s=3", "marginals:dims=4x4x2,k=2", "marginals:dims=3x5"} {
		n := 32
		if strings.HasPrefix(spec, "marginals") {
			n = 0
		}
		sh, err := ParseShape(spec, n)
		require.NoError(t, err, spec)
		w, err := Parse(spec, n)
		require.NoError(t, err, spec)
		assert.Equal(t, float64(w.Domain()), sh.N, spec)
		assert.Equal(t, float64(w.Queries()), sh.M, spec)
	}
	sh, err := ParseShape("wrange:m=100000000000", 1024)
	require.NoError(t, err)
	assert.Equal(t, 1e11, sh.M)
	assert.Greater(t, sh.GenBytes, 1e12)
	sh, err = ParseShape("prefix", 1<<40)
	require.NoError(t, err)
	assert.Equal(t, float64(1<<40), sh.N)
	_, err = Parse("prefix", 1<<40)
	assert.ErrorContains(t, err, "too large")
}

func itoa(u uint64) string { return strconv.FormatUint(u, 10) }
