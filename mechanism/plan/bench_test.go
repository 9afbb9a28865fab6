package plan

import (
	"context"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/testkit"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// The census-style person table of examples/census: 5 attributes, 500,480
// cells, 30 terms (55 Kronecker products).
func BenchmarkCensus(b *testing.B) {
	w, err := domain.LoadSpec("../../examples/census/census.json", workload.Blocks)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range []Template{Kron{}, Union{}, Best{}} {
		b.Run(t.Name(), func(b *testing.B) {
			var res *Result
			c0 := testkit.ProcessCPU()
			for i := 0; i < b.N; i++ {
				if res, err = t.Plan(context.Background(), w, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((testkit.ProcessCPU()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(res.Objective, "objective")
			b.ReportMetric(float64(res.Sweeps), "sweeps")
		})
	}
	// The plain descent (every block from newton's own start at blockTol),
	// for the speed-up of warm starts and loose early sweeps within one run.
	b.Run("kron-plain", func(b *testing.B) {
		o, _ := Options{}.withDefaults()
		var res *Result
		c0 := testkit.ProcessCPU()
		for i := 0; i < b.N; i++ {
			s := newSolver(w, o)
			s.exactSweeps = true
			if res, err = planKron(context.Background(), s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((testkit.ProcessCPU()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
		b.ReportMetric(res.Objective, "objective")
		b.ReportMetric(float64(res.Sweeps), "sweeps")
	})
}

// A single product of five 1-D blocks of sizes 64–256: 64·128·256·256·192 ≈
// 1.03e11 cells, exact (product of the per-attribute optima) and certified
// (product of the per-attribute certificates).
func BenchmarkFiveBlocks(b *testing.B) {
	w, err := domain.ParseSpec(stringsReader(fiveBlockSpec), "", workload.Blocks)
	if err != nil {
		b.Fatal(err)
	}
	var res *Result
	c0 := testkit.ProcessCPU()
	for i := 0; i < b.N; i++ {
		if res, err = (Kron{}).Plan(context.Background(), w, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((testkit.ProcessCPU()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(w.Cells()), "cells")
	b.ReportMetric((res.Objective-res.LowerBound)/res.Objective*1e12, "gap·1e12")
}

const fiveBlockSpec = `{"domain": [{"name": "a", "size": 64}, {"name": "b", "size": 128}, {"name": "c", "size": 256}, {"name": "d", "size": 256}, {"name": "e", "size": 192}],
  "workload": [{"name": "p", "product": {"a": "prefix", "b": "allrange", "c": "prefix", "d": "allrange", "e": "identitytotal"}}]}`

// HDMM's SF1_Persons (examples/hdmm/sf1.json: 5 attributes, 500,480 cells,
// 33 products) under pure ε: the kron template's p-Identity descent, the
// planning time issue 37 compares with HDMM's OPT_kron.
func BenchmarkPlanSF1Pure(b *testing.B) {
	w, err := domain.LoadSpec("../../examples/hdmm/sf1.json", workload.Blocks)
	if err != nil {
		b.Fatal(err)
	}
	// The kernels dpsolve plan --threads 1 (its default) runs on: the
	// build's backend for gonum/mat too, as the command's main installs it
	// (benchmarks run after the package's tests).
	blas.Use(blas.Default())
	blas.Current().SetThreads(1)
	var res *Result
	c0 := testkit.ProcessCPU()
	for i := 0; i < b.N; i++ {
		if res, err = (Kron{}).Plan(context.Background(), w, Options{Noise: calibrate.Laplace}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((testkit.ProcessCPU()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(res.Objective, "objective")
	b.ReportMetric(float64(res.Sweeps), "sweeps")
}
