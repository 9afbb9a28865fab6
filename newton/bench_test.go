package newton_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// BenchmarkSolve times the default method; run with -cpuprofile to see
// where a solve spends its time. The bench package compares against DGEMM
// and the peers.
func BenchmarkSolve(b *testing.B) {
	for _, name := range []string{"prefix", "allrange"} {
		for _, n := range []int{256, 512, 1024} {
			w, _ := workload.Builtin(name, n)
			v := w.Gram()
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				var r *newton.Result
				for i := 0; i < b.N; i++ {
					var err error
					if r, err = newton.Solve(context.Background(), v, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(r.Iterations), "iterations")
				b.ReportMetric(r.Gap, "gap")
			})
		}
	}
}
