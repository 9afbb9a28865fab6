package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/model/workload"
)

// TestCompareLRMRowLaplace: in ε-DP mode the default rows include lrm, whose
// total error lies between the SVD lower bound (printed by compare itself)
// and the SVD upper bound of Yuan et al. (VLDB 2012) 2/ε²·k·Σσᵢ² (computed here from W's
// singular values), and below Identity's 2‖W‖²_F/ε² on a rank-4 workload.
func TestCompareLRMRowLaplace(t *testing.T) {
	const n, m, s, eps = 64, 48, 4, 0.5
	args := []string{"--workload", "wrelated:m=48,s=4,seed=3", "--n", "64", "--mechanism", "laplace", "--eps", "0.5", "--quiet"}
	o := compareJSONRun(t, args...)
	var names []string
	idx := map[string]int{}
	for i, r := range o.Rows {
		names = append(names, r.Strategy)
		idx[r.Strategy] = i
	}
	assert.Equal(t, []string{"identity", "h2", "wavelet", "optimized", "lrm"}, names)
	row := o.Rows[idx["lrm"]]
	require.Empty(t, row.Error)
	require.NotNil(t, row.TotalError)
	total := *row.TotalError
	assert.InDelta(t, math.Sqrt(total/m), *row.RMSE, 1e-12*(*row.RMSE))
	assert.Contains(t, row.Note, "r = 5 rows for rank 4")

	wl, err := workload.NewWRelated(n, m, s, 3)
	require.NoError(t, err)
	var svd mat.SVD
	require.True(t, svd.Factorize(wl.Matrix(), mat.SVDNone))
	var s1, s2 float64
	for _, v := range svd.Values(nil)[:s] {
		s1 += v
		s2 += v * v
	}
	unit := 2 / (eps * eps)
	assert.GreaterOrEqual(t, total, (1-1e-9)*unit*s1*s1/n)
	assert.LessOrEqual(t, total, unit*float64(s)*s2)
	identity := *o.Rows[idx["identity"]].TotalError
	assert.InDelta(t, unit*s2, identity, 1e-9*identity) // 2‖W‖²_F/ε²
	assert.Less(t, total, identity/2, "rank 4 on 64 cells: LRM well below Identity (measured 3.0×)")
	assert.Less(t, total, *o.Rows[idx["h2"]].TotalError)
	assert.Less(t, total, *o.Rows[idx["wavelet"]].TotalError)

	// Extra fields: measurements r and the L1 sensitivity of L.
	code, out, errOut := compareCLI(t, append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var raw struct {
		Rows []map[string]any `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	lr := raw.Rows[idx["lrm"]]
	assert.Equal(t, 5.0, lr["measurements"])
	assert.LessOrEqual(t, lr["l1_sensitivity"].(float64), 1+1e-12)
	_, hasL2 := lr["l2_sensitivity"]
	assert.False(t, hasL2)
}

// TestCompareLRMRowSkippedForGaussian: under Gaussian noise the row is
// skipped (the optimized row is the certified optimum there), even when
// asked for, with a note on stderr.
func TestCompareLRMRowSkippedForGaussian(t *testing.T) {
	o := compareJSONRun(t, "--workload", "prefix", "--n", "8", "--quiet")
	for _, r := range o.Rows {
		assert.NotEqual(t, "lrm", r.Strategy)
	}
	code, out, errOut := compareCLI(t, "--workload", "prefix", "--n", "8", "--strategies", "identity,lrm", "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "lrm: skipped")
	assert.NotContains(t, out, `"lrm"`)
}

// TestCompareLRMFromGram: a workload given only by its Gram works too (LRM
// depends on W only through WᵀW).
func TestCompareLRMFromGram(t *testing.T) {
	dir := t.TempDir()
	pf, err := workload.NewPrefix(12)
	require.NoError(t, err)
	g := filepath.Join(dir, "v.npy")
	require.NoError(t, matio.WriteMatrix(g, pf.Gram()))
	o := compareJSONRun(t, "--gram", g, "--m", "12", "--mechanism", "laplace", "--strategies", "identity,lrm", "--quiet")
	require.Len(t, o.Rows, 2)
	require.Empty(t, o.Rows[1].Error)
	assert.Less(t, *o.Rows[1].TotalError, *o.Rows[0].TotalError)
}
