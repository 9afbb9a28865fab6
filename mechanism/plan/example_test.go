package plan_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// Plan a two-attribute table: a single product term is solved exactly (the
// product of the per-attribute optima), with a certified global lower bound.
func Example() {
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 16}],
	  "workload": [{"name": "sex_by_age_cumulative", "product": {"sex": "identity", "age": "prefix"}}]}`
	w, err := domain.ParseSpec(strings.NewReader(spec), "", workload.Blocks)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := plan.Run(context.Background(), w, plan.Kron{}, plan.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d cells, %d queries\n", w.Cells(), w.Queries())
	fmt.Printf("objective %.6g, certified lower bound %.6g\n", res.Objective, res.LowerBound)
	fmt.Println("at the dense optimum (to 1e-8):", res.AboveDense < 1e-8)
	for _, f := range res.Strategy.Factors {
		r, c := f.A.Dims()
		fmt.Printf("factor %s: %d×%d\n", f.Attribute, r, c)
	}
	// Output:
	// 32 cells, 32 queries
	// objective 91.3307, certified lower bound 91.3307
	// at the dense optimum (to 1e-8): true
	// factor sex: 2×2
	// factor age: 16×16
}

// A census-style person table (examples/census): 500,480 cells, 30 terms,
// planned by exact block coordinate descent over its five attributes.
func Example_census() {
	w, err := domain.LoadSpec("../../examples/census/census.json", workload.Blocks)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := plan.Kron{}.Plan(context.Background(), w, plan.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d cells, %d terms, %d queries\n", w.Cells(), len(w.Terms()), w.Queries())
	fmt.Printf("template %s, objective %.6g, %s after %d sweeps\n", res.Template, res.Objective, res.Status, res.Sweeps)
	// Output:
	// 500480 cells, 30 terms, 5616 queries
	// template kron, objective 96021.6, converged after 9 sweeps
}
