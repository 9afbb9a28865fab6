package calibrate_test

import (
	"fmt"

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
