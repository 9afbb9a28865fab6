package newton_test

import (
	"context"
	"fmt"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// Optimize the strategy for all 64·65/2 range queries over a 64-cell
// histogram and read off its certificate.
func ExampleSolve() {
	w, err := workload.NewAllRange(64)
	if err != nil {
		panic(err)
	}
	res, err := newton.Solve(context.Background(), w.Gram(), nil) // default: certified gap ≤ 1e-8
	if err != nil {
		panic(err)
	}
	fmt.Printf("status: %s\n", res.Status)
	fmt.Printf("objective tr(V X⁻¹): %.4f\n", res.Objective)
	fmt.Printf("certified gap ≤ 1e-8: %v\n", res.Gap <= 1e-8)
	fmt.Printf("better than the SVD bound's %.1f%% slack: %v\n", 100*(res.Objective/res.SVDBound-1), res.LowerBound >= res.SVDBound)
	// Output:
	// status: converged
	// objective tr(V X⁻¹): 11024.3815
	// certified gap ≤ 1e-8: true
	// better than the SVD bound's 2.2% slack: true
}

// Check any strategy, including one computed by another program: the
// certificate needs only V and X = AᵀA.
func ExampleCertificate() {
	w, _ := workload.NewPrefix(32)
	v := w.Gram()
	identity, _ := workload.NewIdentity(32)
	obj, bound, err := newton.Certificate(v, identity.Gram()) // the identity strategy, X = I
	if err != nil {
		panic(err)
	}
	fmt.Printf("identity strategy: objective %.1f; no strategy beats %.1f\n", obj, bound)
	// Output:
	// identity strategy: objective 528.0; no strategy beats 112.8
}

// Reuse one Solver for a batch of problems of the same size: after the
// first solve it allocates no n×n matrix, and it fills the caller's Result.
// Singular Grams (here: all 4-wide ranges, and the total) are solved
// exactly, with a strategy of rank r = rank(V).
func ExampleSolver() {
	s := newton.NewSolver(nil)
	var res newton.Result
	for _, spec := range []string{"prefix", "width:k=4", "total"} {
		w, err := workload.Parse(spec, 32)
		if err != nil {
			panic(err)
		}
		if err := s.Solve(context.Background(), w.Gram(), &res); err != nil {
			panic(err)
		}
		fmt.Printf("%-9s %s, objective %.6f, rank %d, certified gap ≤ 1e-8: %v\n", spec, res.Status, res.Objective, res.Rank, res.Gap <= 1e-8)
	}
	// Output:
	// prefix    converged, objective 114.559703, rank 32, certified gap ≤ 1e-8: true
	// width:k=4 converged, objective 67.796081, rank 29, certified gap ≤ 1e-8: true
	// total     converged, objective 1.000000, rank 1, certified gap ≤ 1e-8: true
}

// A method named on a command line or in a configuration file: ParseMethod
// takes the names String prints and JSON carries.
func ExampleParseMethod() {
	m, err := newton.ParseMethod("yuan2016")
	if err != nil {
		panic(err)
	}
	w, _ := workload.NewPrefix(32)
	res, err := newton.Solve(context.Background(), w.Gram(), &newton.Options{Method: m})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s, certificate valid: %v\n", res.Method, res.LowerBound <= res.Objective)
	_, err = newton.ParseMethod("bfgs")
	fmt.Println(err)
	// Output:
	// yuan2016, certificate valid: true
	// newton: invalid input: unknown method "bfgs" (want "newton" or "yuan2016")
}
