package marginals_test

import (
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// Plan all 3-way marginals over five attributes of four values (1024
// cells), then measure and reconstruct them from their tables.
func Example() {
	sizes := []int{4, 4, 4, 4, 4}
	sets, err := marginals.KWay(len(sizes), 3)
	if err != nil {
		panic(err)
	}
	plan, err := marginals.NewPlan(sizes, marginals.Weighted(sets, 1), marginals.Sum, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d marginals, %d residual subsets\n", len(plan.Sets), len(plan.Residuals))
	fmt.Printf("expected total squared error %.8f (lower bound %.8f)\n", plan.TotalSquaredError, plan.LowerBound)
	fmt.Printf("per-cell variance of marginal %v: %.6f\n", plan.Marginals[0].Attrs, plan.Marginals[0].CellVariance)

	// Tables of the sets the plan needs: here a histogram with one record
	// in every cell, so every 3-way table holds 4² = 16 per cell.
	var tables []marginals.Table
	for _, s := range plan.Needs() {
		vals := make([]float64, 64)
		for i := range vals {
			vals[i] = 16
		}
		tables = append(tables, marginals.Table{Attrs: s, Values: vals})
	}
	// A simulation: seeded, insecure noise. Releases use noise.NewSecure().
	m, err := plan.Measure(tables, noise.NewSeededInsecure(1), 0.001)
	if err != nil {
		panic(err)
	}
	est, err := plan.Reconstruct(m)
	if err != nil {
		panic(err)
	}
	fmt.Printf("estimate of %v, first cell: %.2f\n", est[0].Attrs, est[0].Values[0])
	// Output:
	// 10 marginals, 26 residual subsets
	// expected total squared error 3389.99336813 (lower bound 3389.99336813)
	// per-cell variance of marginal [0 1 2]: 5.296865
	// estimate of [0 1 2], first cell: 16.00
}
