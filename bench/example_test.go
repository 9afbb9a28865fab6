package bench_test

import (
	"context"
	"fmt"

	"github.com/dpsolve/dpsolve/bench"
	"github.com/dpsolve/dpsolve/newton"
)

// Compare times dpsolve's default method on the identity workload (whose
// optimum is X = I with objective n) and re-certifies the returned X.
func Example() {
	c, err := bench.Compare(context.Background(), bench.Config{
		Workloads: []string{"identity"},
		Ns:        []int{8},
		Repeat:    1,
		Methods:   []bench.Solver{bench.Newton{Method: newton.MethodNewton}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := c.Runs[0]
	fmt.Printf("%s n=%d %s: objective %.6g, certified gap ≤ 1e-8: %v (by %s)\n",
		r.Workload, r.N, r.Method, float64(r.Objective), r.Gap <= 1e-8, r.GapSource)
	// Output:
	// identity n=8 newton: objective 8, certified gap ≤ 1e-8: true (by newton.Certificate)
}
