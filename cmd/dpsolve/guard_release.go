package main

// The outcome record and the budget wording of dpsolve answer and run; the
// release's order (checks, charge, noise, commit) is pipeline/publish's.

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// recordOutcome writes, under dpsolve batch (cmd/dpsolve/internal/batch:
// OutcomeEnv), the outcome record of an answer or run job from its release
// transaction's outcome (publish.RunHistogram): refused when the command
// returned before it could charge (outcome 0) or it refused, released, or
// charged_not_released. A crash writes none, and the batch then marks the
// job needs_review.
func recordOutcome(name string, outcome publish.Outcome, err error, stderr io.Writer) {
	path := os.Getenv(batch.OutcomeEnv)
	if path == "" {
		return
	}
	if outcome == 0 {
		outcome = publish.Refused
	}
	rec := batch.OutcomeRecord{Outcome: outcome.String(), NoiseMayBeDrawn: outcome != publish.Refused}
	if err != nil {
		rec.Error = err.Error()
	}
	if werr := batch.WriteOutcome(path, rec); werr != nil {
		fmt.Fprintf(stderr, "dpsolve %s: cannot write the outcome record %s: %v\n", name, path, werr)
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
