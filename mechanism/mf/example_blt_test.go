package mf_test

import (
	"context"
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/mechanism/mf"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// A BLT strategy for 2052 steps of SGD, each record used at most 6 times
// at least 342 steps apart: its loss, a bound no mechanism beats, the
// noise multiplier for (ε, δ) = (8, 1e-6), and the first step's noise for
// a 10-parameter model from d running buffers.
func ExampleOptimizeBLT() {
	prefix := mf.ToeplitzWorkload{Name: "prefix"}
	schema := mf.Schema{Kind: mf.MinSep, MinSep: 342, Epochs: 6}
	res, err := mf.OptimizeBLT(context.Background(), prefix, 2052, schema, nil)
	if err != nil {
		panic(err)
	}
	ev, err := res.BLT.Evaluate(prefix, 2052, schema, false)
	if err != nil {
		panic(err)
	}
	bound, err := mf.ToeplitzLowerBound(prefix, 2052, schema, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d buffers, loss %.1f, bound %.1f\n", res.BLT.Buffers(), ev.MeanLoss, bound.Mean)

	// σ is the noise multiplier of the clipped gradients at this
	// strategy's sensitivity: the noise is σ·clip·(C⁻¹Z)ₜ.
	sens := math.Sqrt(ev.Sensitivity.Squared)
	sigma, err := calibrate.GaussianSigma(8, 1e-6, sens)
	if err != nil {
		panic(err)
	}
	// Simulation only: a real run uses noise.NewSecure().
	gen, err := mf.NewBLTGenerator(res.BLT, 10, sigma, noise.NewSeededInsecure(1))
	if err != nil {
		panic(err)
	}
	z, err := gen.Next()
	if err != nil {
		panic(err)
	}
	fmt.Println("step 0 noise has", len(z), "coordinates; private:", gen.Private())
	// Output:
	// 2 buffers, loss 84.3, bound 24.6
	// step 0 noise has 10 coordinates; private: false
}
