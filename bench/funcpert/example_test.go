package funcpert_test

import (
	"context"
	"fmt"
	"os"

	"github.com/dpsolve/dpsolve/bench/funcpert"
)

// A small seeded run: 15 coefficients, two privacy levels, two repetitions,
// no baseline. The error at ε = 100 is the saturation level: the smoothing
// error of the noise-free pipeline.
func Example() {
	cfg := funcpert.DefaultConfig()
	cfg.Degrees = []int{4}
	cfg.Eps = []float64{0.1, 100}
	cfg.Reps = 2
	cfg.Message.Rounds = 0
	res, err := funcpert.Run(context.Background(), cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := res.Series[0]
	fmt.Printf("x* = (%.4f, %.4f), smoothing error %.4f\n", res.XStar[0], res.XStar[1], res.Smoothing[4])
	fmt.Printf("mean error: ε=0.1 %.2f, ε=100 %.4f\n", s.Mean[0], s.Mean[1])
	_ = funcpert.WriteCSV(os.Stdout, nil) // the header; one row per repetition follows
	r := res.Rows[0]
	fmt.Printf("%g,%d,%s,%d,%.3g\n", r.Eps, r.Coeffs, r.Method, r.Rep, r.Error)
	// Output:
	// x* = (2.4165, -0.8431), smoothing error 0.0359
	// mean error: ε=0.1 0.23, ε=100 0.0360
	// eps,coeffs,method,rep,error
	// 0.1,15,functional,0,0.241
}
