package lrm

import (
	"context"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// pIdentityBest runs the p-Identity L-BFGS from restarts random starts
// (Θᵢⱼ uniform in [0,1), drawn one after another from rng, so the first
// start is exactly the single start of pIdentityStart) and keeps the Θ of
// lowest Φ. Φ(Θ) is not convex: HDMM restarts its templates for that
// reason, and on AllRange n = 50 (p = 4) four starts ended between
// Φ = 17020 and 22100 (numpy, bench/peers/hdmm_templates.py). its is the
// sum of the runs' iterations. A warm Θ (nil: none) is one more start,
// descended first; warmKept reports that its descent was kept. With more
// than one start, or with polish, the kept Θ is polished by a further run
// from it at relative tolerance 1e-9. A cancelled run returns ctx's error.
func pIdentityBest(ctx context.Context, g *mat.SymDense, p int, ball ball, iters, restarts int, warm *mat.Dense, polish bool, rng *rand.Rand, progress func(int, float64)) (theta *mat.Dense, its int, warmKept bool, err error) {
	if restarts < 1 && warm == nil {
		restarts = 1
	}
	var best float64
	if warm != nil {
		th, n, phi, err := pIdentityFrom(ctx, g, p, ball, iters, 1e-5, slices.Clone(warm.RawMatrix().Data), progress)
		if err != nil {
			return nil, 0, false, err
		}
		theta, best, its, warmKept = th, phi, n, true
	}
	for r := 0; r < restarts; r++ {
		th, n, phi, err := pIdentityRun(ctx, g, p, ball, iters, rng, progress)
		if err != nil {
			return nil, 0, false, err
		}
		its += n
		if theta == nil || phi < best {
			theta, best, warmKept = th, phi, false
		}
	}
	if polish || restarts+btoi(warm != nil) > 1 {
		// Polish the kept start at a tighter tolerance: the restarts
		// choose the basin, this finishes its descent.
		x := slices.Clone(theta.RawMatrix().Data)
		th, n, phi, err := pIdentityFrom(ctx, g, p, ball, iters, 1e-9, x, progress)
		if err != nil {
			return nil, 0, false, err
		}
		its += n
		if phi < best {
			theta = th
		}
	}
	return theta, its, warmKept, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
