package lrm

import (
	"context"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// PIdentityGramResult is the p-Identity strategy PIdentityGram found.
type PIdentityGramResult struct {
	// L = [I; Θ]·D⁻¹ ((n+p)×n): every column has norm 1 in the noise
	// model's ball (up to rounding), and L has full column rank.
	L *mat.Dense
	// Theta is Θ (p×n, ≥ 0): pass it as Options.PIdentityWarm to continue
	// from it.
	Theta *mat.Dense
	// Objective is tr(V (LᵀL)⁻¹) for the V given, evaluated through the
	// Woodbury identity as the descent does.
	Objective float64
	// Iterations counts the L-BFGS iterations of all starts.
	Iterations int
	// WarmKept is true when Options.PIdentityWarm was given and its
	// descent was kept: no random restart reached a lower Φ.
	WarmKept bool
}

// PIdentityGram optimizes HDMM's p-Identity strategy (see StartPIdentity)
// for a workload known by its Gram V = WᵀW (n×n, positive semidefinite):
// the start Solve computes with Start StartPIdentity and without Refine,
// on the same scale (V/tr V, the Gram of W/‖W‖_F) and from the same random
// starts, without the rest of Solve — no factor of V, no eigendecomposition
// of its Gram, no B and no SVD fallback, which were a fifth of the time of
// the pure-ε kron plan of HDMM's SF1 (a few hundred block solves at
// n ≤ 115). A caller that needs more than the strategy and its error uses
// Solve.
//
// It reads Noise, PIdentityRows, PIdentityIters, PIdentityRestarts,
// PIdentityWarm, PIdentityPolish and Seed of opt (nil: defaults), and
// refuses a V that is empty, has a non-finite or negative-diagonal entry,
// or is zero. A cancelled ctx returns its error and no result.
func PIdentityGram(ctx context.Context, v *mat.SymDense, opt *Options) (*PIdentityGramResult, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if v == nil || v.IsEmpty() {
		return nil, inputerr.Errorf("lrm", "empty Gram matrix")
	}
	n := v.SymmetricDim()
	tr := 0.0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if x := v.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, inputerr.Errorf("lrm", "Gram entry [%d][%d] = %v is not finite", i, j, x)
			}
		}
		if v.At(i, i) < 0 {
			return nil, inputerr.Errorf("lrm", "Gram diagonal entry [%d][%d] = %v is negative: not a Gram matrix", i, i, v.At(i, i))
		}
		tr += v.At(i, i)
	}
	if !(tr > 0) || math.IsInf(tr, 0) {
		return nil, inputerr.Errorf("lrm", "the Gram matrix has trace %v: no query to answer", tr)
	}
	p := o.PIdentityRows
	if p == 0 {
		p = (n + 15) / 16
	}
	if w := o.PIdentityWarm; w != nil {
		if err := checkWarm(w, p, n); err != nil {
			return nil, err
		}
	}
	var g mat.SymDense
	g.ScaleSym(1/tr, v)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed1)) // Solve's stream (startPoint)
	theta, its, warmKept, err := pIdentityBest(ctx, &g, p, o.ball, o.PIdentityIters, o.PIdentityRestarts, o.PIdentityWarm, o.PIdentityPolish, rng, nil)
	if err != nil {
		return nil, err
	}
	e := newPIdentity(&g, p, o.ball)
	phi := e.eval(theta.RawMatrix().Data, nil)
	return &PIdentityGramResult{L: explicitL(theta, e.d), Theta: theta, Objective: phi * tr, Iterations: its, WarmKept: warmKept}, nil
}

// explicitL forms L = [I; Θ]·D⁻¹ ((n+p)×n) from Θ and its column scales d.
func explicitL(theta *mat.Dense, d []float64) *mat.Dense {
	p, n := theta.Dims()
	l := mat.NewDense(n+p, n, nil)
	for j := 0; j < n; j++ {
		l.Set(j, j, 1/d[j])
	}
	for i := 0; i < p; i++ {
		src, dst := theta.RawRowView(i), l.RawRowView(n+i)
		for j, t := range src {
			dst[j] = t / d[j]
		}
	}
	return l
}

// checkWarm refuses a warm Θ that is not p×n or has an entry that is not
// finite and ≥ 0.
func checkWarm(w *mat.Dense, p, n int) error {
	if r, c := w.Dims(); r != p || c != n {
		return inputerr.Errorf("lrm", "the warm p-Identity start is %d×%d, want %d×%d", r, c, p, n)
	}
	for _, x := range w.RawMatrix().Data {
		if !(x >= 0) || math.IsInf(x, 1) {
			return inputerr.Errorf("lrm", "the warm p-Identity start has an entry %v (want finite and ≥ 0)", x)
		}
	}
	return nil
}
