package release_test

import (
	"context"
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func Example() {
	// Private prefix sums of an 8-cell histogram through the H2 tree
	// strategy under (ε,δ) = (1, 1e-6).
	x := []float64{5, 0, 3, 12, 7, 1, 0, 4}
	h2, _ := strategy.NewH2(len(x))
	b, err := calibrate.ApproxDP(1, 1e-6)
	if err != nil {
		panic(err)
	}
	m, err := release.New(h2.Matrix(), b)
	if err != nil {
		panic(err)
	}
	w, _ := workload.NewPrefix(len(x))
	exp, _ := m.ExpectedError(w)
	fmt.Printf("sensitivity %.4f sigma %.4f expected RMSE %.3f\n", m.Sensitivity(), m.Sigma(), exp.RMSE)

	// noise.NewSecure() draws from crypto/rand; the answers are private.
	y, _ := m.Measure(x, noise.NewSecure())
	xhat, _ := m.Reconstruct(y) // post-processing from here on
	answers, _ := release.Answer(w, xhat)
	fmt.Println(len(answers), "private prefix sums")
	// Output:
	// sensitivity 2.0000 sigma 8.4494 expected RMSE 6.997
	// 8 private prefix sums
}

func ExampleRun() {
	// The same release in one call: calibrate, check, draw the noise,
	// reconstruct and answer. An error means no noise was drawn.
	x := []float64{5, 0, 3, 12, 7, 1, 0, 4}
	h2, _ := strategy.NewH2(len(x))
	w, _ := workload.NewPrefix(len(x))
	b, _ := calibrate.ApproxDP(1, 1e-6)
	res, err := release.Run(context.Background(), release.Request{
		Strategy: h2.Matrix(), Budget: b, Data: x, Workload: w,
		Noise: noise.NewSecure(), PostProcess: release.Cleanup{Clamp: true},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d private prefix sums, expected RMSE %.3f\n", len(res.Answers), res.Expected.RMSE)
	// Output:
	// 8 private prefix sums, expected RMSE 6.997
}
