package functional_test

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/mechanism/functional"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// Release f(x, y) = x² + y² on [−1, 1]² through the functional Laplace mechanism
// with 6 coefficients (total degree ≤ 2). The seeded source is for this example
// only; real releases use noise.NewSecure().
func Example() {
	box, _ := basis.Cube(2, -1, 1)
	b, _ := basis.New(box, 2)
	coef, _ := b.Coefficients(func(x []float64) float64 { return x[0]*x[0] + x[1]*x[1] }, 3)
	eps, _ := calibrate.PureDP(1)
	p := functional.Params{Budget: eps, Gamma: 0.1, Q: 2, P: 1}
	m, _ := functional.New(p, b.Len(), noise.NewSeededInsecure(1))
	for k, s := range m.Scales() {
		fmt.Printf("b_%d = %.4f\n", k+1, s)
	}
	y, _ := m.Release(coef)
	// The worst-case adjacent function shifts the privacy loss by exactly ε.
	d, _ := functional.WorstCaseDirection(p, b.Len())
	fmt.Printf("‖δ‖_q = %.3f, Σ|δ_k|/b_k = %.3f\n", functional.WeightedNorm(d, p.Q), sumRatio(d, m.Scales()))
	fmt.Println("released", len(y), "coefficients")
	// Output:
	// b_1 = 0.1221
	// b_2 = 0.0611
	// b_3 = 0.0407
	// b_4 = 0.0305
	// b_5 = 0.0244
	// b_6 = 0.0204
	// ‖δ‖_q = 0.100, Σ|δ_k|/b_k = 1.000
	// released 6 coefficients
}

func sumRatio(d, b []float64) float64 {
	s := 0.0
	for k := range d {
		s += math.Abs(d[k]) / b[k]
	}
	return s
}
