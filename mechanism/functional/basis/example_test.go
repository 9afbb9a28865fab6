package basis_test

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
)

// Expand f(x, y) = x² + xy on [−5, 5]² in the degree-2 basis and evaluate the
// expansion, its gradient and its Hessian: a polynomial is reproduced exactly.
func Example() {
	box, _ := basis.Cube(2, -5, 5)
	b, _ := basis.New(box, 2)
	coef, _ := b.Coefficients(func(x []float64) float64 { return x[0]*x[0] + x[0]*x[1] }, 3)
	h, _ := basis.NewExpansion(b, coef)
	x := []float64{1, 2}
	v, _ := h.Value(x)
	g, _ := h.Gradient(x)
	H, _ := h.Hessian(x)
	r := func(v float64) float64 { return math.Round(v*1e9)/1e9 + 0 } // print −1e-17 as 0
	fmt.Printf("%d functions\n", b.Len())
	fmt.Printf("h = %.6f, ∇h = [%.6f %.6f], ∇²h = [%.6f %.6f; %.6f %.6f]\n", r(v), r(g[0]), r(g[1]), r(H[0]), r(H[1]), r(H[2]), r(H[3]))
	// Output:
	// 6 functions
	// h = 3.000000, ∇h = [4.000000 1.000000], ∇²h = [2.000000 1.000000; 1.000000 0.000000]
}
