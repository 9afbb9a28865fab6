package bench

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkWorkerPool: 1000 solves at n = 64 and 100 at n = 256,
// one at a time with one newton.Solver and all kernel threads, against a
// pool of one-thread workers (one per kernel thread), each with its own
// Solver. Reports solves per second of both, the speedup, and how many
// results are bit-identical (the others' largest relative objective
// difference is reported too). Run with
//
//	go test ./bench -run '^$' -bench WorkerPool -benchtime 1x
func BenchmarkWorkerPool(b *testing.B) {
	for _, c := range []struct{ n, count int }{{64, 1000}, {256, 100}} {
		gs, err := poolGrams(c.n, c.count)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d/solves=%d", c.n, c.count), func(b *testing.B) {
			var r poolResult
			for b.Loop() {
				if r, err = workerPool(context.Background(), gs, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.SequentialRate, "loop-solves/s")
			b.ReportMetric(r.PoolRate, "pool-solves/s")
			b.ReportMetric(r.Speedup, "speedup")
			b.ReportMetric(float64(r.Identical), "identical")
			b.ReportMetric(r.MaxRelDiff, "max-rel-diff")
			b.ReportMetric(float64(r.Workers), "workers")
		})
	}
}
