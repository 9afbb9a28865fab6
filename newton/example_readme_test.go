package newton_test

import (
	"context"
	"fmt"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// The README's "Library" snippet: solve a workload, then check the
// strategy with the independent certificate, as any other program's
// strategy would be checked. (The README shows the lines from ctx to the
// certificate; internal/readme keeps the two identical.)
func Example_readmeLibrary() {
	ctx := context.Background()
	w, _ := workload.NewPrefix(256)              // or workload.Parse("wrange:m=5000,seed=1", 256)
	res, err := newton.Solve(ctx, w.Gram(), nil) // certified gap ≤ 1e-8
	if err != nil {
		panic(err)
	}
	// res.A: upper-triangular strategy (AᵀA = res.X); res.Objective, res.LowerBound, res.Gap
	obj, bound, err := newton.Certificate(w.Gram(), res.X) // check any strategy, from any program
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %s, objective %.2f, certified gap ≤ 1e-8: %v\n", w.Name(), res.Status, res.Objective, res.Gap <= 1e-8)
	fmt.Printf("certificate agrees: %v\n", (obj-bound)/obj <= 1e-8 && bound <= obj)
	// Output:
	// prefix(n=256): converged, objective 1631.40, certified gap ≤ 1e-8: true
	// certificate agrees: true
}
