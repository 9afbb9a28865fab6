package tables_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/tables"
	"github.com/dpsolve/dpsolve/mechanism/workload"
)

func ExamplePlanStrategy() {
	// Plan the Kronecker strategy for a two-attribute spec, write it as
	// `dpsolve plan --out` does, and read it back for a release.
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 4}],
	          "workload": [{"name": "p", "product": {"sex": "identity", "age": "prefix"}}]}`
	k, _ := workload.ParseSpec(strings.NewReader(spec), ".")
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
	w, _ := tables.FromSpec(k)
	s, _ := tables.ReadStrategyDir(dir, w)
	fmt.Println("read back:", s.Template())
	// Output:
	// A_age.npy
	// A_sex.npy
	// strategy.json
	// read back: kron
}
