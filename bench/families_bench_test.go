package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// BenchmarkFamilies solves the workload families of docs/performance.md
// (families) at n = 1024 and
// 2048 (or the sizes in DPSOLVE_BENCH_N, comma-separated) and reports
// iterations, the certified gap re-checked by newton.Certificate, the
// rank, and the time in DGEMM-equivalents (seconds over one n×n DGEMM
// timed in the same process), in all and per phase (newton.Result.Phases).
// Run with e.g.
//
//	DPSOLVE_BENCH_N=1024 go test ./bench -run '^$' -bench families -benchtime 1x
func BenchmarkFamilies(b *testing.B) {
	ns := []int{1024, 2048}
	if s := os.Getenv("DPSOLVE_BENCH_N"); s != "" {
		ns = ns[:0]
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			ns = append(ns, n)
		}
	}
	for _, n := range ns {
		dg := dgemmSeconds(n, 3)
		for _, f := range families {
			w, err := workload.Parse(f, n)
			if err != nil {
				b.Fatal(err)
			}
			V := w.Gram()
			b.Run(fmt.Sprintf("n=%d/%s", n, f), func(b *testing.B) {
				var res *newton.Result
				var secs float64
				for b.Loop() {
					start := time.Now()
					res, err = newton.Solve(context.Background(), V, nil)
					secs += time.Since(start).Seconds()
					if err != nil {
						b.Fatal(err)
					}
				}
				_, _, gap, err := certify(V, res.X)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Iterations), "iters")
				b.ReportMetric(math.Log10(math.Max(gap, 1e-300)), "log10-gap")
				b.ReportMetric(float64(res.Rank), "rank")
				b.ReportMetric(secs/float64(b.N)/dg, "dgemm-eq")
				for phase, s := range res.Phases {
					b.ReportMetric(s/dg, phase+"-dgemm-eq")
				}
			})
		}
	}
}
