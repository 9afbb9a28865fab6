package newton_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// Families returns the workload specs of the benchmark families at size n (a
// power of two ≥ 64 for the marginals): prefix, allrange, width-32 ranges,
// 2n random ranges, 2n random predicates, 2n related queries of rank n/8,
// 2- and 3-way marginals over attributes of size 4 (and one of size n/4^k
// to make up n), identity and total.
func families(n int) []string {
	dims := []string{}
	m := n
	for m > 4 && len(dims) < 5 {
		dims = append(dims, "4")
		m /= 4
	}
	if m > 1 {
		dims[0] = strconv.Itoa(4 * m)
	}
	d := strings.Join(dims, "x")
	return []string{
		"prefix", "allrange", "width:k=32",
		fmt.Sprintf("wrange:m=%d", 2*n), fmt.Sprintf("wdiscrete:m=%d", 2*n),
		fmt.Sprintf("wrelated:m=%d,s=%d", 2*n, n/8),
		"marginals:dims=" + d + ",k=2", "marginals:dims=" + d + ",k=3",
		"identity", "total",
	}
}

// BenchmarkFamilies solves every family at n = 256 and 1024 (and the sizes
// in DPSOLVE_BENCH_N, comma-separated, e.g. 2048) and reports iterations
// and the certified gap; the default method's goal is ≤ 10 iterations and
// gap ≤ 1e-8 on every family. bench's families table adds DGEMM-equivalents.
func BenchmarkFamilies(b *testing.B) {
	ns := []int{256, 1024}
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
		for _, spec := range families(n) {
			w, err := workload.Parse(spec, n)
			if err != nil {
				w, err = workload.Parse(spec, 0)
			}
			if err != nil {
				b.Fatal(err)
			}
			v := w.Gram()
			b.Run(fmt.Sprintf("n=%d/%s", n, spec), func(b *testing.B) {
				var r *newton.Result
				for i := 0; i < b.N; i++ {
					if r, err = newton.Solve(context.Background(), v, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(r.Iterations), "iterations")
				b.ReportMetric(r.Gap, "gap")
				b.ReportMetric(float64(r.Rank), "rank")
			})
		}
	}
}
