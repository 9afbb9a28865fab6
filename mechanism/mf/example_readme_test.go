package mf_test

import (
	"context"
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/mechanism/mf"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// From step counts to a noise multiplier: 64 steps of SGD in 4 epochs,
// (ε, δ) = (2, 1e-6), then the noise of the first step for a model with
// d = 10 parameters.
func Example_training() {
	w, err := mf.Prefix(64)
	if err != nil {
		panic(err)
	}
	schema := mf.Schema{Kind: mf.FixedEpoch, Epochs: 4}
	res, err := mf.Solve(context.Background(), w, schema, nil)
	if err != nil {
		panic(err)
	}
	sens := math.Sqrt(res.Sensitivity.Squared)
	sigma, err := calibrate.GaussianSigma(2, 1e-6, sens)
	if err != nil {
		panic(err)
	}
	fmt.Printf("status %s, gap below 1e-8: %v\n", res.Status, res.Gap <= 1e-8)
	fmt.Printf("error per unit σ²: %.4f (bound %.4f)\n", res.Objective*res.Sensitivity.Squared, res.LowerBound*res.Sensitivity.Squared)
	fmt.Printf("sensitivity %.3f, σ = %.4f, ρ = %.5f\n", sens, sigma, res.Sensitivity.Squared/(2*sigma*sigma))

	// Simulation only: NewSeededInsecure is reproducible and NOT private;
	// a real training run uses noise.NewSecure().
	gen, err := mf.NewGenerator(res.C, 0, 10, sigma, noise.NewSeededInsecure(1))
	if err != nil {
		panic(err)
	}
	z, err := gen.Next()
	if err != nil {
		panic(err)
	}
	fmt.Println("step 0 noise has", len(z), "coordinates")
	// Output:
	// status converged, gap below 1e-8: true
	// error per unit σ²: 1243.4670 (bound 1243.4670)
	// sensitivity 1.000, σ = 2.2305, ρ = 0.10050
	// step 0 noise has 10 coordinates
}
