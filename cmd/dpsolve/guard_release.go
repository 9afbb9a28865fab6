package main

// Guards around the one irreversible step of dpsolve answer and run: drawing
// the noise spends the privacy budget. Everything that can refuse must
// refuse before it; after it, the answers must reach the disk.

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// noiseDrawn is set once a drawGuard has drawn noise in this process: it
// is what dpsolve answer and run record for dpsolve batch (recordDraws).
var noiseDrawn atomic.Bool

// recordDraws writes, under dpsolve batch (cmd/dpsolve/internal/batch: OutcomeEnv),
// the outcome record of an answer or run job: refused when no noise was
// drawn, released when it succeeded, charged_not_released otherwise. The
// release command writes its own (runRelease); a crash writes none, and the
// batch then marks the job needs_review.
func recordDraws(name string, err error, stderr io.Writer) {
	path := os.Getenv(batch.OutcomeEnv)
	if path == "" || (name != "answer" && name != "run") {
		return
	}
	rec := batch.OutcomeRecord{Outcome: "refused"}
	switch {
	case !noiseDrawn.Load():
	case err == nil:
		rec.Outcome, rec.NoiseMayBeDrawn = "released", true
	default:
		rec.Outcome, rec.NoiseMayBeDrawn = "charged_not_released", true
	}
	if err != nil {
		rec.Error = err.Error()
	}
	if werr := batch.WriteOutcome(path, rec); werr != nil {
		fmt.Fprintf(stderr, "dpsolve %s: cannot write the outcome record %s: %v\n", name, path, werr)
	}
}

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

// drawGuard is the noise source of dpsolve answer and run: it prints the
// --insecure-seed warning just before the first draw (so a release refused
// earlier prints none), and once the noise is drawn it enters the critical
// section, so a second Ctrl-C cannot lose answers whose budget is spent.
// leave ends the critical section once the outputs are written.
type drawGuard struct {
	*noise.Sampler
	warning string // printed before the first draw when not empty
	stderr  io.Writer
	drawn   bool
	unlock  func()
}

// AddLaplace draws through the guard (see drawGuard).
func (g *drawGuard) AddLaplace(values []float64, scale, grid float64) (float64, error) {
	g.before()
	defer g.after()
	return g.Sampler.AddLaplace(values, scale, grid)
}

// AddGaussian draws through the guard (see drawGuard).
func (g *drawGuard) AddGaussian(values []float64, sigma, grid float64) (float64, error) {
	g.before()
	defer g.after()
	return g.Sampler.AddGaussian(values, sigma, grid)
}

func (g *drawGuard) before() {
	if !g.drawn && g.warning != "" {
		fmt.Fprintln(g.stderr, g.warning)
	}
}

func (g *drawGuard) after() {
	if !g.drawn {
		g.drawn = true
		noiseDrawn.Store(true)
		g.unlock = enterCritical() // the budget is spent: the answers must reach the disk
	}
}

// leave ends the critical section, if the guard entered it.
func (g *drawGuard) leave() {
	if g.unlock != nil {
		g.unlock()
	}
}

// gridErrorText words release.Run's refusal of a budget too large for the
// data (the noise grid cannot represent the measurements) in terms of the
// flag to lower and the largest value it may take. The budget is unspent.
func gridErrorText(ge *release.GridError, b calibrate.Budget) error {
	peak, need := ge.Peak, ge.MinScale
	switch b.Kind() {
	case calibrate.Pure:
		return fmt.Errorf("--eps %g is too large for this data: the noise scale %.3g is finer than measurements as large as %.6g allow (it must be at least %.3g); use --eps at most about %.3g",
			b.Epsilon(), ge.Scale, peak, need, ge.Sensitivity/need)
	case calibrate.Concentrated:
		return fmt.Errorf("--rho %g is too large for this data: σ = %.3g is finer than measurements as large as %.6g allow (σ must be at least %.3g); use --rho at most about %.3g",
			b.Rho(), ge.Sigma, peak, need, ge.Sensitivity*ge.Sensitivity/(2*need*need))
	default:
		return fmt.Errorf("--eps %g is too large for this data: σ = %.3g is finer than measurements as large as %.6g allow (σ must be at least %.3g); use --eps at most about %.3g",
			b.Epsilon(), ge.Sigma, peak, need, largestGaussianEps(need, b.Delta(), ge.Sensitivity, b.Epsilon()))
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
