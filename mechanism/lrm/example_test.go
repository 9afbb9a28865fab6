package lrm_test

import (
	"context"
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// Plan the Low-Rank Mechanism for all 32 prefix sums of a 32-cell histogram
// under ε-DP, compare its expected error with answering every cell, and run
// it once (with seeded, non-private noise, as in a simulation).
func Example() {
	pf, _ := workload.NewPrefix(32)
	w := pf.Matrix()
	res, err := lrm.Solve(context.Background(), w, nil) // ℓ1 ball: ε-DP
	if err != nil {
		fmt.Println(err)
		return
	}
	bud, err := calibrate.PureDP(1)
	if err != nil {
		fmt.Println(err)
		return
	}
	lrmErr, _ := res.ExpectedNoiseError(bud)
	identityErr := 2 * res.FrobeniusW2 / (bud.Epsilon() * bud.Epsilon())
	fmt.Printf("rank(W) = %d, r = %d rows of L, %v start\n", res.WorkloadRank, res.Rank, res.Start)
	fmt.Printf("exact decomposition: %v, columns of L in the ℓ1 ball: %v\n", res.Residual < 1e-12, res.Sensitivity <= 1+1e-12)
	fmt.Printf("within the seed's bounds: %v\n", res.Bounds.Lower <= res.Objective && res.Objective <= res.Bounds.SVDUpper)
	fmt.Printf("expected error below Identity's (%.0f): %v\n", identityErr, lrmErr < identityErr)

	x := make([]float64, 32)
	for i := range x {
		x[i] = 100
	}
	rel, _ := res.Answer(x, bud, noise.NewSeededInsecure(1)) // noise.NewSecure() for a real release
	fmt.Println(rel.Mechanism, len(rel.Measurements), "measurements,", len(rel.Answers), "answers")
	// Output:
	// rank(W) = 32, r = 34 rows of L, pidentity start
	// exact decomposition: true, columns of L in the ℓ1 ball: true
	// within the seed's bounds: true
	// expected error below Identity's (1056): true
	// laplace 34 measurements, 32 answers
}
