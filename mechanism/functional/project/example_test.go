package project_test

import (
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
	"github.com/dpsolve/dpsolve/mechanism/functional/project"
)

// Project the concave function h(x, y) = −x² − y² on [−1, 1]² onto the
// functions with 0.5 I ⪯ ∇²h ⪯ 4 I and |∇h| ≤ 10: the result is convex and
// satisfies the bounds everywhere on the box (Certified mode).
func Example() {
	box, _ := basis.Cube(2, -1, 1)
	b, _ := basis.New(box, 4)
	c, _ := b.Coefficients(func(x []float64) float64 { return -x[0]*x[0] - x[1]*x[1] }, 5)
	p, _ := project.New(b, project.Set{Alpha: 0.5, Beta: 4, U: 10}, nil)
	out, info, err := p.Project(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, _ := basis.NewExpansion(b, out)
	H, _ := h.Hessian([]float64{0.3, -0.2})
	in, _ := p.Contains(out)
	fmt.Printf("moved %v, in set %v, Hessian diagonal ≥ 0.5: %v\n", info.Moved, in, H[0] >= 0.5 && H[3] >= 0.5)
	// Output: moved true, in set true, Hessian diagonal ≥ 0.5: true
}
