package noise_test

import (
	"fmt"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func Example() {
	// Release three counts (one person changes one count by 1: Δ₂ = 1)
	// under (ε,δ) = (1, 1e-6). Calibrate, account for snapping, then add
	// noise from the operating system's CSPRNG.
	counts := []float64{120, 45, 3}
	sigma0, _ := calibrate.GaussianSigma(1, 1e-6, 1)
	grid, _ := noise.Grid(sigma0)
	sigma, _ := calibrate.GaussianSigma(1, 1e-6, noise.SnappedL2Sensitivity(1, grid, len(counts)))
	used, err := noise.NewSecure().AddGaussian(counts, sigma, grid)
	fmt.Println(err, used >= sigma, fmt.Sprintf("%.4f", used))
	// Output: <nil> true 4.2247
}
