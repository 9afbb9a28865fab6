package sdp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/dpsolve/dpsolve/mechanism/sdp"
	"gonum.org/v1/gonum/mat"
)

// Export Eq. (2) for the single query W = [1 2] in SDPA format.
func Example() {
	fm, err := sdp.Build(sdp.Approx, mat.NewDense(1, 2, []float64{1, 2}))
	if err != nil {
		log.Fatal(err)
	}
	fm.Problem.Comment = "W = [1 2]"
	if err := sdp.WriteSDPA(os.Stdout, fm.Problem); err != nil {
		log.Fatal(err)
	}

	// Output:
	// "W = [1 2]
	// 4 =mdim
	// 2 =nblocks
	// 3 -2
	// 0 0 0 1
	// 0 1 1 3 -1
	// 0 1 2 3 -2
	// 0 2 1 1 -1
	// 0 2 2 2 -1
	// 1 1 1 1 1
	// 1 2 1 1 -1
	// 2 1 1 2 1
	// 3 1 2 2 1
	// 3 2 2 2 -1
	// 4 1 3 3 1
}

// Solve Eq. (2) for a Prefix workload with CSDP and recover the strategy
// Gram X. (Not run as a test: it needs csdp on PATH.)
func ExampleSolve() {
	v := mat.NewSymDense(3, []float64{3, 2, 1, 2, 2, 1, 1, 1, 1}) // Prefix, n = 3
	fm, err := sdp.FromGram(sdp.Approx, v)
	if err != nil {
		log.Fatal(err)
	}
	res, err := sdp.Solve(context.Background(), fm.Problem, nil)
	if errors.Is(err, sdp.ErrSolverNotFound) {
		log.Fatal(err) // the message says how to install CSDP
	} else if err != nil {
		log.Fatal(err)
	}
	pt, err := fm.Recover(res.Solution.Y)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("min tr(V X⁻¹) = %.6f, X₁₂ = %.4f\n", pt.Objective, pt.X.At(0, 1))
}
