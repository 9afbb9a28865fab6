package calibrate_test

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
)

func Example() {
	// Noise for a query with L2 sensitivity 1 under (ε,δ) = (0.5, 1e-6).
	analytic, _ := calibrate.GaussianSigma(0.5, 1e-6, 1)
	classic, _ := calibrate.ClassicGaussianSigma(0.5, 1e-6, 1)
	zcdp, _ := calibrate.ZCDPSigma(0.125, 1)
	lap, _ := calibrate.LaplaceScale(0.5, 1)
	fmt.Printf("analytic %.4f classic %.4f zCDP %.4f Laplace %.1f\n", analytic, classic, zcdp, lap)
	// Output: analytic 8.0576 classic 10.5976 zCDP 2.0000 Laplace 2.0
}

func ExampleCalibrate() {
	// Everything a sampler needs to release 16 values of L2 sensitivity 1
	// under (1, 1e-6)-DP; c.Add(noise.NewSecure(), y) then draws the noise.
	c, err := calibrate.Calibrate(calibrate.ApproxDP(1, 1e-6), 1, 16)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s noise, sigma %.4f on a grid of 2^%d\n", c.Budget, c.Noise, c.Scale, int(math.Log2(c.Grid)))
	// Output: eps=1, delta=1e-06: gaussian noise, sigma 4.2247 on a grid of 2^-38
}

func ExampleBudget_ApproxEpsilon() {
	// A ρ-zCDP release is (ρ + 2√(ρ·ln(1/δ)), δ)-DP.
	eps, _ := calibrate.ZCDP(0.125).ApproxEpsilon(1e-6)
	fmt.Printf("%.4f\n", eps)
	// Output: 2.7533
}
