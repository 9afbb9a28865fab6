package release

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// sharedData returns the path of a file under the shared data directory,
// which sits beside the repository root (the directory holding go.mod) as
// ../shared. It skips the test, saying so, when the file is absent.
func sharedData(t *testing.T, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test directory")
		}
		dir = parent
	}
	path := filepath.Join(dir, "..", "shared", rel)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") == "true" { // CI has the data: a missing file is a broken checkout, not a skip
			t.Fatalf("real data %s is absent under CI=true (expected ../shared beside the repository root)", path)
		}
		t.Skipf("real data %s is absent (expected ../shared beside the repository root); skipping", path)
	}
	return path
}

// nettrace256 loads the DPBench NETTRACE histogram (n = 4096) and coarsens
// it to n = 256 by summing each run of 16 adjacent cells.
func nettrace256(t *testing.T) []float64 {
	raw, err := matio.ReadVector(sharedData(t, "data/dpbench/1D/NETTRACE.n4096.npy"))
	require.NoError(t, err)
	require.Len(t, raw, 4096)
	x := make([]float64, 256)
	for i, v := range raw {
		x[i/16] += v
	}
	return x
}

// TestEmpiricalErrorMatchesExpectedOnNETTRACE is the end-to-end check of the
// mechanism against its error formula on real data: 200 independent
// releases per configuration, the per-release mean squared error of the
// workload answers, and a 99% confidence interval for its mean (normal
// approximation, justified by the CLT over 200 i.i.d. trials) that must
// contain v·tr(V X⁻¹)/m. The noise is the exact discrete sampler on a
// seeded (insecure, reproducible) stream — the same code path as the secure
// source, only the bits differ.
func TestEmpiricalErrorMatchesExpectedOnNETTRACE(t *testing.T) {
	const (
		n      = 256
		trials = 200
	)
	x := nettrace256(t)
	prefix, _ := workload.NewPrefix(n)
	allrange, _ := workload.NewAllRange(n)
	workloads := []workload.Workload{prefix, allrange}
	truth := map[workload.Workload][]float64{}
	for _, w := range workloads {
		a, err := Answer(w, x)
		require.NoError(t, err)
		truth[w] = a
	}

	id, err := strategy.NewIdentity(n)
	require.NoError(t, err)
	h2, err := strategy.NewH2(n)
	require.NoError(t, err)
	optP, err := strategy.Optimize(context.Background(), prefix.Gram(), nil)
	require.NoError(t, err)
	optR, err := strategy.Optimize(context.Background(), allrange.Gram(), nil)
	require.NoError(t, err)
	type config struct {
		name      string
		a         mat.Matrix
		workloads []workload.Workload
	}
	configs := []config{
		{"identity", id.Matrix(), workloads},
		{"h2", h2.Matrix(), workloads},
		{"optimized-prefix", optP.A, workloads[:1]},
		{"optimized-allrange", optR.A, workloads[1:]},
	}
	z := distuv.UnitNormal.Quantile(0.995)
	budgets := []calibrate.Budget{budgettest.ApproxDP(1, 1e-6), budgettest.PureDP(1)}
	seed := uint64(2024)
	for _, b := range budgets {
		for _, c := range configs {
			m, err := New(c.a, b)
			require.NoError(t, err)
			seed++
			s := noise.NewSeededInsecure(seed)
			mse := map[workload.Workload][]float64{}
			for trial := 0; trial < trials; trial++ {
				y, err := m.Measure(x, s)
				require.NoError(t, err)
				xhat, err := m.Reconstruct(y)
				require.NoError(t, err)
				for _, w := range c.workloads {
					ans, err := Answer(w, xhat)
					require.NoError(t, err)
					var sq float64
					tw := truth[w]
					for i, v := range ans {
						d := v - tw[i]
						sq += d * d
					}
					mse[w] = append(mse[w], sq/float64(len(ans)))
				}
			}
			for _, w := range c.workloads {
				exp, err := m.ExpectedError(w)
				require.NoError(t, err)
				mean, sd := stat.MeanStdDev(mse[w], nil)
				half := z * sd / math.Sqrt(trials)
				label := fmt.Sprintf("%s %s %s", b.Kind(), c.name, w.Name())
				t.Logf("%-40s expected MSE %12.4f  empirical %12.4f ± %9.4f (99%%, ±%.1f%%)", label, exp.PerQuery, mean, half, 100*half/mean)
				assert.InDelta(t, exp.PerQuery, mean, half, "%s: expected MSE outside the 99%% CI", label)
				// Power: the interval is narrow enough to reject a noise
				// variance off by a factor 1.5 either way (σ off by 22%).
				assert.Less(t, half, exp.PerQuery*(1-1/1.5), "%s: CI too wide to be a real test", label)
			}
		}
	}
}
