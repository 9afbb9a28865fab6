package main

// Guards around the one irreversible step of dpsolve answer and run: drawing
// the noise spends the privacy budget. Everything that can refuse must
// refuse before it; after it, the answers must reach the disk.

import (
	"context"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/noise"
	"github.com/dpsolve/dpsolve/mechanism/release"
)

// critical is held while a released result is being written: the second-
// signal exit (signals.go) waits for it, so Ctrl-C twice never loses
// answers whose budget is already spent.
var critical sync.Mutex

// enterCritical marks the start of post-release writing; call the returned
// function when the outputs are on disk.
func enterCritical() func() {
	critical.Lock()
	return critical.Unlock
}

// beforeSampling is the last check before noise is drawn: the command has
// not been cancelled, and the measurements A·x are representable on the
// noise grid (a very large ε makes the noise, and so its grid, finer than
// the data's magnitude allows). Either failure leaves the budget unspent.
func beforeSampling(ctx context.Context, m *release.Mechanism, a mat.Matrix, x []float64, b calibrate.Budget) error {
	if err := ctx.Err(); err != nil {
		return errCancelled(ctx)
	}
	p, n := a.Dims()
	y := mat.NewVecDense(p, nil)
	y.MulVec(a, mat.NewVecDense(n, append([]float64(nil), x...)))
	peak := 0.0
	for i := 0; i < p; i++ {
		peak = math.Max(peak, math.Abs(y.AtVec(i)))
	}
	if peak/m.Grid() < noise.MaxGridUnits {
		return nil
	}
	// The grid is the noise scale times 2^-41 … 2^-40 (noise.Grid), so a
	// scale of peak·2^41/MaxGridUnits fits; one binary order of margin.
	need := peak * 0x1p42 / noise.MaxGridUnits
	switch b.Kind {
	case calibrate.Pure:
		return fmt.Errorf("--eps %g is too large for this data: the noise scale %.3g is finer than measurements as large as %.6g allow (it must be at least %.3g); use --eps at most about %.3g",
			b.Epsilon, m.Scale(), peak, need, m.Sensitivity()/need)
	case calibrate.Concentrated:
		return fmt.Errorf("--rho %g is too large for this data: σ = %.3g is finer than measurements as large as %.6g allow (σ must be at least %.3g); use --rho at most about %.3g",
			b.Rho, m.Sigma(), peak, need, m.Sensitivity()*m.Sensitivity()/(2*need*need))
	default:
		return fmt.Errorf("--eps %g is too large for this data: σ = %.3g is finer than measurements as large as %.6g allow (σ must be at least %.3g); use --eps at most about %.3g",
			b.Epsilon, m.Sigma(), peak, need, largestGaussianEps(need, b.Delta, m.Sensitivity(), b.Epsilon))
	}
}

// largestGaussianEps bisects (in log ε) for the largest ε ≤ hi whose
// analytic Gaussian σ at sensitivity sens is still ≥ need (σ decreases in ε).
func largestGaussianEps(need, delta, sens, hi float64) float64 {
	lo := epsMin
	if s, err := calibrate.GaussianSigma(lo, delta, sens); err != nil || s < need {
		return lo
	}
	for i := 0; i < 60 && hi/lo > 1+1e-6; i++ {
		mid := math.Sqrt(lo * hi)
		if s, err := calibrate.GaussianSigma(mid, delta, sens); err == nil && s >= need {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
