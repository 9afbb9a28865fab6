package kron_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
)

func Example() {
	// A 2×3 domain measured by the strategy identity ⊗ [identity; total].
	id2 := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	a3 := mat.NewDense(4, 3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})
	a, _ := kron.New(id2, a3)
	x := []float64{5, 1, 0, 2, 2, 2}
	y, _ := a.MulVec(x) // per row of the first attribute: the 3 cells and their sum
	fmt.Println(y)

	// Least squares through the pseudo-inverse, factor by factor.
	pi, _ := a.PseudoInverse()
	xhat, _ := pi.MulVec(y)
	for i, v := range xhat {
		xhat[i] = math.Round(v*1e3)/1e3 + 0 // a rounding-level −1e-16 would print as "-0.000"
	}
	fmt.Printf("%.3f\n", xhat)

	// Per-query variance (per unit noise variance) of the totals per row.
	w, _ := kron.New(id2, mat.NewDense(1, 3, []float64{1, 1, 1}))
	v, _ := kron.FactorVariances(w, pi)
	fmt.Printf("%.4f\n", kron.KronVec(v))
	// Output:
	// [5 1 0 6 2 2 2 6]
	// [5.000 1.000 0.000 2.000 2.000 2.000]
	// [0.7500 0.7500]
}
