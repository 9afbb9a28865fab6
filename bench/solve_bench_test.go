package bench

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// BenchmarkSolve times newton.Solve (default method, gap 1e-8) on Prefix and
// AllRange and reports, per solve: iterations, CG steps, the certified gap
// (newton.Certificate on the returned X), DGEMM-equivalents (seconds over
// one n×n DGEMM timed here) and peak memory in n×n float64 matrices
// (building V included). Run with e.g.
//
//	go test ./bench -run '^$' -bench 'Solve/prefix/n=1024' -benchtime 3x
func BenchmarkSolve(b *testing.B) {
	for _, w := range []string{"prefix", "allrange"} {
		for _, n := range []int{256, 512, 1024, 2048} {
			b.Run(fmt.Sprintf("%s/n=%d", w, n), func(b *testing.B) {
				dg := dgemmSeconds(n, 3)
				var secs, matrices float64
				var res *newton.Result
				for b.Loop() {
					probe, err := startMemoryProbe()
					if err != nil {
						b.Fatal(err)
					}
					wl, _ := workload.Builtin(w, n)
					V := wl.Gram()
					start := time.Now()
					res, err = newton.Solve(context.Background(), V, nil)
					secs += time.Since(start).Seconds()
					if err != nil {
						b.Fatal(err)
					}
					peak, err := probe.Peak()
					if err != nil {
						b.Fatal(err)
					}
					matrices = max(matrices, float64(peak-probe.Baseline)/(8*float64(n)*float64(n)))
					_, _, gap, err := certify(V, res.X)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(math.Log10(gap), "log10-gap")
				}
				b.ReportMetric(float64(res.Iterations), "iters")
				b.ReportMetric(float64(res.CGSteps), "cg-steps")
				b.ReportMetric(secs/float64(b.N)/dg, "dgemm-eq")
				b.ReportMetric(matrices, "peak-matrices")
			})
		}
	}
}

// BenchmarkKernels reports the GFLOP/s of every kernel of the kernel table
// and its rate relative to DGEMM's (the H[S] target is ≥ 0.85).
func BenchmarkKernels(b *testing.B) {
	for _, n := range []int{1024, 2048} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var rows []KernelResult
			for b.Loop() {
				var err error
				if rows, err = Kernels([]int{n}, 1); err != nil {
					b.Fatal(err)
				}
			}
			for _, r := range rows {
				b.ReportMetric(float64(r.GFlops), r.Kernel+"-GFLOP/s")
				b.ReportMetric(float64(r.RateVsDGEMM), r.Kernel+"-vs-dgemm")
			}
		})
	}
}
