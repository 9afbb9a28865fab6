package newton_test

import (
	"context"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/newton"
)

// Solve 8 different problems at once from 8 goroutines, each with its own
// Solver and default options, and check that they give the results of
// solving them one after another. Nothing needs setting: the kernel layer
// runs a kernel call that overlaps another on one thread of its own
// (package blas, Reserve), so the goroutines neither oversubscribe the
// cores nor spin on OpenBLAS's thread pool.
func ExampleSolver_concurrent() {
	const k, n = 8, 128
	grams := make([]*mat.SymDense, k)
	for i := range grams {
		grams[i] = weightedPrefix(n, i) // prefix queries with weights depending on i
	}
	solve := func(v *mat.SymDense) float64 {
		var res newton.Result
		if err := newton.NewSolver(nil).Solve(context.Background(), v, &res); err != nil {
			panic(err)
		}
		return res.Objective
	}
	concurrent := make([]float64, k)
	var wg sync.WaitGroup
	for i := range grams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			concurrent[i] = solve(grams[i])
		}()
	}
	wg.Wait()
	same := true
	for i, v := range grams {
		sequential := solve(v)
		same = same && math.Abs(concurrent[i]-sequential) <= 1e-12*sequential
	}
	fmt.Printf("%d concurrent solves match the sequential ones to 1e-12: %v\n", k, same)
	// Output:
	// 8 concurrent solves match the sequential ones to 1e-12: true
}
