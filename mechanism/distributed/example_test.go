package distributed_test

import (
	"context"
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/mechanism/distributed"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
)

// Ten agents with private logistic-regression objectives minimize their sum
// over [−5, 5]² by distributed projected gradient on a ring, one goroutine per
// agent; every agent ends near the centralized minimizer.
func Example() {
	agents, _ := distributed.NewLogisticAgents(distributed.DefaultLogisticConfig(1))
	objs := make([]distributed.Objective, len(agents))
	for i, a := range agents {
		objs[i] = a
	}
	X, _ := basis.Cube(2, -5, 5)
	xstar, _ := distributed.Minimize(objs, X, nil, 1e-12)
	ring, _ := distributed.Ring(len(agents))
	steps, _ := distributed.Harmonic(1.5, 10, 1)
	res, _ := distributed.Run(context.Background(), objs, distributed.Config{Graph: ring, X: X, Steps: steps, Iterations: 5000})
	worst := 0.0
	for _, x := range res.X {
		worst = math.Max(worst, math.Hypot(x[0]-xstar[0], x[1]-xstar[1]))
	}
	fmt.Printf("x* = (%.3f, %.3f), every agent within 5e-3: %v\n", xstar[0], xstar[1], worst < 5e-3)
	// Output: x* = (2.417, -0.843), every agent within 5e-3: true
}
