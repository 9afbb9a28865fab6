package marginals_test

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/status"
)

// Pure ε-DP: measure two overlapping 2-way tables and the total with
// Laplace noise, each table's share of ε chosen in closed form, and
// reconstruct consistent answers by generalized least squares; then make
// the tables non-negative without breaking their agreement.
func ExamplePurePlan() {
	sizes := []int{2, 3, 4}
	sets := []marginals.Set{{Attrs: []int{0, 1}, Weight: 1}, {Attrs: []int{1, 2}, Weight: 1}, {Attrs: nil, Weight: 1}}
	pp, err := marginals.NewPurePlan(sizes, sets, marginals.Sum)
	if err != nil {
		panic(err)
	}
	// Shares ∝ cells^(1/3): 1, 6^(1/3), 12^(1/3) over their sum.
	for _, tb := range pp.Tables {
		fmt.Printf("table %v: %2.0f cells, spends %.3f of ε\n", tb.Attrs, tb.Cells, 1/tb.Scale)
	}
	eps, err := calibrate.PureDP(1)
	if err != nil {
		panic(err)
	}
	cals, err := pp.Calibrate(eps)
	if err != nil {
		panic(err)
	}
	// A sparse histogram: one record in each of four cells.
	full := marginals.Table{Attrs: []int{0, 1, 2}, Values: make([]float64, 24)}
	for _, c := range []int{0, 5, 13, 22} {
		full.Values[c] = 1
	}
	// A simulation: seeded, insecure noise. Releases use noise.NewSecure().
	m, err := pp.Measure([]marginals.Table{full}, noise.NewSeededInsecure(2), cals)
	if err != nil {
		panic(err)
	}
	est, err := pp.Reconstruct(m)
	if err != nil {
		panic(err)
	}
	fmt.Printf("marginal %v: cell standard deviation %.3f\n", est[0].Attrs, math.Sqrt(est[0].CellVariance))
	out, c, err := pp.Base().MakeConsistent(est, marginals.ConsistencyOptions{NonNegative: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("converged %v, max negativity %g, consistent to 1e-9: %v\n", c.Status == status.Converged, c.MaxNegativity, c.MaxInconsistency < 1e-9)
	fmt.Println(len(out) == len(est))
	// Output:
	// table []:  1 cells, spends 0.196 of ε
	// table [0 1]:  6 cells, spends 0.356 of ε
	// table [1 2]: 12 cells, spends 0.448 of ε
	// marginal [0 1]: cell standard deviation 3.400
	// converged true, max negativity 0, consistent to 1e-9: true
	// true
}
