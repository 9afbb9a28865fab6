package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTables(t *testing.T) {
	rep := &Report{Machine: DescribeMachine(), Tol: 1e-8, Repeat: 1}
	rep.Comparison = &Comparison{DGEMM: []DGEMMTiming{{N: 4, Seconds: 0.01}, {N: 8, Seconds: 0.08}}}
	for _, n := range []int{4, 8} {
		for _, m := range []string{"newton", "peer"} {
			s := 0.1 * float64(n)
			if m == "peer" {
				s *= 10
			}
			rep.Comparison.Runs = append(rep.Comparison.Runs,
				run(m, 1, s, 10, 10-1e-9, "converged", trace(s/2, 11, s, 10)))
			rep.Comparison.Runs[len(rep.Comparison.Runs)-1].N = n
		}
	}
	rep.Comparison.Summarize()
	rep.Scaling = []ScalingRow{{Backend: "purego", Workload: "prefix", N: 4, Seconds: 0.5, Gap: 1e-9, Matrices: 3},
		{Backend: "purego", Workload: "prefix", N: 8, Seconds: 4, Gap: 1e-9, Matrices: 3}}
	rep.Kernels = []KernelResult{{Backend: "purego", N: 4, Kernel: kernelDGEMM, Seconds: 1e-6, GFlops: 0.1}}

	var md, runsCSV, scCSV, kCSV strings.Builder
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "| prefix | 8 | peer | 8.000 |")
	assert.Contains(t, md.String(), "10.0× at 1e-08")
	assert.Contains(t, md.String(), "| purego | prefix | 8 |")
	require.NoError(t, rep.WriteRunsCSV(&runsCSV))
	assert.Equal(t, 5, strings.Count(runsCSV.String(), "\n"))
	require.NoError(t, rep.WriteScalingCSV(&scCSV))
	assert.Equal(t, 3, strings.Count(scCSV.String(), "\n"))
	require.NoError(t, rep.WriteKernelsCSV(&kCSV))
	assert.Equal(t, 2, strings.Count(kCSV.String(), "\n"))
}

// TestPhaseTable: per-phase seconds become DGEMM-equivalents over the same
// DGEMM time as the run's total (0.2 s and 0.6 s over a 0.1 s DGEMM: 2 and
// 6), medians over the repetitions, in the solve's phase order; a method
// without phases gets no row.
func TestPhaseTable(t *testing.T) {
	c := &Comparison{DGEMM: []DGEMMTiming{{N: 8, Seconds: 0.1}}}
	for rep, eigen := range []float64{0.6, 0.5, 0.7} {
		r := run("newton", rep+1, 0.8+eigen, 10, 10-1e-9, "converged", trace(0.4, 11, 0.8+eigen, 10))
		r.N = 8
		r.Phases = map[string]float64{"spectrum": 0.2, "eigen": eigen}
		c.Runs = append(c.Runs, r)
	}
	p := run("peer", 1, 2, 10, 10-1e-9, "converged", trace(1, 11, 2, 10))
	p.N = 8
	c.Runs = append(c.Runs, p)
	c.Summarize()
	var md strings.Builder
	require.NoError(t, (&Report{Machine: DescribeMachine(), Tol: 1e-8, Repeat: 3, Comparison: c}).WriteMarkdown(&md))
	assert.Contains(t, md.String(), "| prefix | 8 | newton | 2.0 | — | 6.0 | — |")
	assert.NotContains(t, md.String(), "| prefix | 8 | peer | —")
	assert.Less(t, strings.Index(md.String(), "spectrum"), strings.Index(md.String(), "| eigen |"))
}
