package planner_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// The portfolio on a workload of marginals: the closed-form marginals plan
// certifies it, runs first and ends the portfolio.
func ExampleRun() {
	spec := `{"domain": [{"name": "a", "size": 40}, {"name": "b", "size": 30}, {"name": "c", "size": 2}],
	  "workload": [{"name": "pairs", "marginals": {"k": 2}}]}`
	w, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	if err != nil {
		panic(err)
	}
	res, err := planner.Run(context.Background(), w, "best", plan.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("plan:", res.Template, "certified:", res.LowerBound >= res.Objective*(1-1e-8))
	for _, tr := range res.Tried {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-9s %s", tr.Template, tr.Err)))
	}
	// Output:
	// plan: marginals certified: true
	// marginals
	// kron      skipped: the marginals plan is certified optimal
	// union     skipped: the marginals plan is certified optimal
}
