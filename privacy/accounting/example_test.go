package accounting_test

import (
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/accounting"
)

// Compare the identity and H2 strategies on all range queries over 64 cells
// under (1, 1e-6)-DP Gaussian noise.
func Example() {
	w, _ := workload.NewAllRange(64)
	v := w.Gram()
	noise, _ := accounting.GaussianNoise(1, 1e-6, accounting.Analytic)
	bound, _ := accounting.LowerBound(v, w.Queries(), noise)
	id, _ := strategy.NewIdentity(64)
	h2, _ := strategy.NewH2(64)
	for _, s := range []strategy.Matrix{id, h2} {
		r, _ := accounting.Evaluate(v, w.Queries(), s, noise)
		fmt.Printf("%-14s unit RMSE %6.3f  RMSE %6.2f  %.2f× the SVD bound\n", s.Name(), r.UnitRMSE, r.RMSE, r.RMSE/bound.RMSE)
	}
	// Output:
	// identity(n=64) unit RMSE  4.690  RMSE  19.82  2.06× the SVD bound
	// h2(n=64)       unit RMSE  3.015  RMSE  12.74  1.32× the SVD bound
}
