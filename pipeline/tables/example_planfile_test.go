package tables_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func ExamplePlanStrategy() {
	// Plan the Kronecker strategy for a two-attribute spec, write it as
	// `dpsolve plan --out` does, and read it back for a release.
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 4}],
	          "workload": [{"name": "p", "product": {"sex": "identity", "age": "prefix"}}]}`
	k, _ := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	res, err := tables.PlanStrategy(context.Background(), tables.PlanRequest{Workload: k, Template: "kron", Writable: true})
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "plan")
	defer os.RemoveAll(dir)
	if err := tables.WriteStrategy(dir, k, res); err != nil {
		panic(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	s, _ := tables.ReadStrategyDir(dir, k)
	fmt.Println("read back:", s.Template())
	// Output:
	// A_age.npy
	// A_sex.npy
	// strategy.json
	// read back: kron
}

func ExamplePrepareParts() {
	// Divide ρ = 1 over a spec's two terms, 1:3, each term planned with the
	// Kronecker template and measured on its own.
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 4}],
	          "workload": [{"name": "total", "marginals": {"upto": 0}},
	                       {"name": "ages", "product": {"age": "prefix"}}]}`
	k, _ := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	rho, _ := calibrate.ZCDP(1)
	ps, err := tables.PrepareParts(context.Background(), tables.PartsRequest{
		Workload: k, Budget: rho, Template: "kron",
		SplitTerms: true, TermShares: []float64{1, 3},
	})
	if err != nil {
		panic(err)
	}
	for _, p := range ps.Parts() {
		fmt.Printf("term %s: %v, share %.2f\n", k.Terms()[p.Terms[0]].Name, p.Budget, p.Share)
	}
	// The data, then one Run for all parts (seeded noise: not private).
	x := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	res, _ := ps.Run(context.Background(), tables.Data{Histogram: x}, noise.NewSeededInsecure(1), nil, tables.Publishable{})
	fmt.Println(len(res.Answers[0]), "total,", len(res.Answers[1]), "prefix sums")
	// Output:
	// term total: rho=0.25 (zCDP), share 0.25
	// term ages: rho=0.75 (zCDP), share 0.75
	// 1 total, 4 prefix sums
}
