package main

// dpsolve mf --family blt|toeplitz: structured (Toeplitz) strategies at any
// n in O(n) memory, with a lower bound for every mechanism and the
// comparison with independent noise.

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/mechanism/mf"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// mfStructured is the part of mfJSON the structured families add.
type mfStructured struct {
	Family string `json:"family,omitempty"`
	// Buffers is d for a BLT, Bands the coefficient count of a banded
	// Toeplitz strategy.
	Buffers int `json:"buffers,omitempty"`
	// Loss is the mean per-step squared error × sens² per unit σ²
	// (jax_privacy's loss); MaxLoss the largest step's.
	Loss    float64 `json:"loss,omitempty"`
	MaxLoss float64 `json:"max_loss,omitempty"`
	// BoundMean is a lower bound on Loss for every mechanism under the
	// schema, from BoundSource; Ratio = Loss/BoundMean.
	BoundMean   float64 `json:"bound_mean_loss,omitempty"`
	BoundSource string  `json:"bound_source,omitempty"`
	Ratio       float64 `json:"ratio_to_bound,omitempty"`
	// IndependentLoss is the loss of independent noise (C = I, DP-SGD)
	// under the same schema; RMSEGain = √(IndependentLoss/Loss) is how
	// much lower the plan's RMSE is at the same privacy.
	IndependentLoss float64 `json:"independent_noise_loss,omitempty"`
	RMSEGain        float64 `json:"rmse_gain_vs_independent,omitempty"`
	// SigmaMeaning states what sigma is.
	SigmaMeaning string `json:"sigma_meaning,omitempty"`
}

const sigmaMeaning = "noise multiplier of the clipped gradients: Z has i.i.d. N(0, (sigma*clip)^2) entries before correlation (step t adds (C^-1 Z)_t), and the release is the Gaussian mechanism at L2 sensitivity sensitivity*clip, C as written"

// mfEstimate prints a time and memory estimate before a solve that may be
// long: the dense solvers' n³ time and n² memory (measured: fixed epoch
// n = 2000, 20 epochs, 105 s; banded n = 512, b = 64, 0.6 s on SkylakeX),
// a BLT's O(n) memory and O(k·d⁴) optimization.
func mfEstimate(stderr io.Writer, family string, n int, s mf.Schema, user bool) {
	var secs, mb float64
	switch family {
	case "blt", "toeplitz":
		secs, mb = 1e-7*float64(n)*float64(max(1, s.Participations(n)))+1, 40*float64(n)/1e6+20
	default:
		f := float64(n) / 2000
		secs = 105 * f * f * f
		mb = mfMemory(s, user) * float64(n) * float64(n) * 8 / 1e6
	}
	if secs >= 10 {
		fmt.Fprintf(stderr, "dpsolve mf: estimate ~%.0f s and ~%.0f MB (family %s, n = %d); press Ctrl-C to stop\n", secs, mb, family, n)
	}
}

// checkMFPrivacy validates --epsilon/--delta/--sigma: exit 2 with a
// message for NaN, Inf, non-positive or uncomputable ε, δ outside (0, 1),
// a σ that is not finite and positive.
func checkMFPrivacy(eps, delta, sigma float64) error {
	if sigma != 0 {
		if eps != 0 {
			return usageErrorf("give --sigma or --epsilon, not both")
		}
		if !(sigma > 0) || math.IsInf(sigma, 0) {
			return usageErrorf("--sigma must be finite and positive, got %v", sigma)
		}
		if !(delta > 0 && delta < 1) {
			return usageErrorf("--sigma needs --delta in (0, 1), got %v", delta)
		}
		return nil
	}
	if eps == 0 && delta == 0 {
		return nil
	}
	if eps == 0 || delta == 0 {
		return usageErrorf("--epsilon and --delta go together")
	}
	if _, err := calibrate.GaussianSigma(eps, delta, 1); err != nil {
		return usageErrorf("--epsilon %v --delta %v: %v", eps, delta, err)
	}
	return nil
}

// epsilonForSigma is the ε at δ of the Gaussian mechanism with noise
// multiplier σ at the given L2 sensitivity: the inverse of
// calibrate.GaussianSigma, by bisection on log ε (GaussianSigma falls as
// ε grows) to relative 1e-10.
func epsilonForSigma(sigma, delta, sens float64) (float64, error) {
	lo, hi := 1e-8, 1e5
	f := func(e float64) float64 {
		s, err := calibrate.GaussianSigma(e, delta, sens)
		if err != nil {
			return math.NaN()
		}
		return s
	}
	if s := f(lo); !(s >= sigma) {
		return 0, usageErrorf("σ = %v is too large: ε would be below %g", sigma, lo)
	}
	if s := f(hi); math.IsNaN(s) || s > sigma {
		return 0, usageErrorf("σ = %v is too small: ε would be above %g", sigma, hi)
	}
	for i := 0; i < 200 && hi/lo > 1+1e-10; i++ {
		mid := math.Sqrt(lo * hi)
		if s := f(mid); !math.IsNaN(s) && s > sigma {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

type structuredFlags struct {
	family     string
	maxBuffers int
	bands      int
	n          int
	spec       string
	eps, delta float64
	sigma      float64
	perStep    bool
	asJSON     bool
	quiet      bool
	out        *atomicdir.Dir // the reserved --out, or nil
	maxLoss    bool
	denseBound bool
}

func runMFStructured(ctx context.Context, f structuredFlags, schema mf.Schema, stdout, stderr io.Writer) error {
	tw, err := mf.ParseToeplitzWorkload(f.spec)
	if err != nil {
		return err
	}
	if err := schema.ValidateStructured(f.n); err != nil {
		return err
	}
	start := time.Now()
	if !f.quiet {
		fmt.Fprintf(stderr, "dpsolve mf: family %s, %s, n = %d, %s\n", f.family, tw.Name, f.n, schema)
	}
	mfEstimate(stderr, f.family, f.n, schema, false)
	var c, r []float64
	var blt *mf.BLT
	var iters int
	out := mfJSON{N: f.n, Schema: string(schema.Kind), Workload: tw.Name}
	switch f.family {
	case "blt":
		opt := &mf.BLTOptions{MaxBuffers: f.maxBuffers, Max: f.maxLoss}
		if !f.quiet {
			opt.Progress = func(format string, a ...any) { fmt.Fprintf(stderr, "dpsolve mf: "+format+"\n", a...) }
		}
		res, err := untilCancelled(ctx, func() (*mf.BLTResult, error) { return mf.OptimizeBLT(ctx, tw, f.n, schema, opt) })
		if err != nil {
			return err
		}
		blt, iters = res.BLT, res.Iterations
		c, r = blt.Coefs(f.n), blt.InverseCoefs(f.n)
		out.Buffers = blt.Buffers()
	case "toeplitz":
		b := f.bands
		if b == 0 {
			b = min(schema.Period(f.n), 64)
		}
		res, err := untilCancelled(ctx, func() (*mf.ToeplitzResult, error) {
			return mf.OptimizeBandedToeplitz(ctx, tw, f.n, b, schema, f.maxLoss)
		})
		if err != nil {
			return err
		}
		c, iters = res.Coefs, res.Iterations
		if r, err = mf.InverseSeries(c, f.n); err != nil {
			return err
		}
		full := make([]float64, f.n)
		copy(full, c)
		c, out.Bands = full, b
	}
	ev, err := mf.EvaluateToeplitz(tw, c, r, schema, f.perStep)
	if err != nil {
		return err
	}
	ind := make([]float64, f.n)
	ind[0] = 1
	iev, err := mf.EvaluateToeplitz(tw, ind, ind, schema, false)
	if err != nil {
		return err
	}
	bound, err := mf.ToeplitzLowerBound(tw, f.n, schema, 0)
	if err != nil {
		return err
	}
	if f.denseBound {
		if err := denseFixedEpochBound(ctx, f, schema, bound, stderr); err != nil {
			return err
		}
	}
	fillStructuredReport(&out, f, schema, ev, iev, bound, iters)
	if err := mfPrivacy(&out, f.eps, f.delta, f.sigma); err != nil {
		return err
	}
	if err := mfCertified(out); err != nil {
		return err
	}
	out.Seconds = time.Since(start).Seconds()
	if f.out != nil {
		err := writeMFDir(ctx, f.out, nil, schema, out, func(tmp string) error {
			if blt != nil {
				return writeJSONFile(filepath.Join(tmp, "blt.json"), bltFile{BLTFile: mf.BLTJSON(blt), N: f.n, Schema: structuredSchema(schema, f.n), Sigma: out.Sigma, Sensitivity: out.Sensitivity, SigmaMeaning: sigmaMeaning})
			}
			return writeJSONFile(filepath.Join(tmp, "toeplitz.json"), toeplitzFile{Coefs: c[:out.Bands], N: f.n, Schema: structuredSchema(schema, f.n), Sigma: out.Sigma, Sensitivity: out.Sensitivity, SigmaMeaning: sigmaMeaning})
		})
		if err != nil {
			return err
		}
	}
	return printMF(stdout, out, f.asJSON)
}

// fillStructuredReport fills the report of a structured (blt or toeplitz)
// solve from its evaluation ev, the independent-noise evaluation iev it is
// compared with, and the lower bound: the errors are scaled by the squared
// sensitivity so that they read as in the dense report. Kept apart from
// runMFStructured so that the solve and the report's arithmetic are read
// separately.
func fillStructuredReport(out *mfJSON, f structuredFlags, schema mf.Schema, ev, iev *mf.ToeplitzEvaluation, bound *mf.Bound, iters int) {
	be := blas.Current()
	out.Family, out.Backend, out.Core = f.family, be.Name(), be.CoreName()
	out.Epochs = schema.Participations(f.n)
	if schema.Kind == mf.MinSep {
		out.MinSep = schema.MinSep
	}
	s2 := ev.Sensitivity.Squared
	out.Sensitivity, out.SensitivitySquared, out.SensitivityExact = math.Sqrt(s2), s2, true
	out.MeanError, out.MaxError = ev.MeanLoss, ev.MaxLoss
	out.RMSE = math.Sqrt(ev.MeanLoss)
	out.Objective, out.LowerBound = ev.Total*s2, bound.Total
	out.Gap = (out.Objective - out.LowerBound) / out.Objective
	out.Loss, out.MaxLoss = ev.MeanLoss, ev.MaxLoss
	out.BoundMean, out.BoundSource, out.Ratio = bound.Mean, bound.Source, ev.MeanLoss/bound.Mean
	out.IndependentLoss = iev.MeanLoss
	out.RMSEGain = math.Sqrt(iev.MeanLoss / ev.MeanLoss)
	out.SigmaMeaning = sigmaMeaning
	out.Iterations = iters
	if f.perStep {
		out.PerStep = make([]float64, len(ev.PerStep))
		for i, v := range ev.PerStep {
			out.PerStep[i] = v * s2
		}
	}
}

// denseFixedEpochBound raises the bound to the dense fixed-epoch
// certificate where n fits: fixed-epoch patterns {r, r + n/k, …} are
// min-separation patterns when n/k ≥ b, so a lower bound for every
// fixed-epoch (k, n/k) mechanism bounds every mechanism under the schema.
// The certificate is valid at any iterate, so a loose gap (1e-3) suffices.
func denseFixedEpochBound(ctx context.Context, f structuredFlags, s mf.Schema, bound *mf.Bound, stderr io.Writer) error {
	k := s.Participations(f.n)
	if s.Kind == mf.FixedEpoch {
		k = s.Epochs
	}
	if f.n%k != 0 || f.n/k < s.Period(f.n) || k > mf.MaxEpochs {
		return usageErrorf("--dense-bound needs n divisible by k = %d with n/k ≥ the separation (and k ≤ %d)", k, mf.MaxEpochs)
	}
	fe := mf.Schema{Kind: mf.FixedEpoch, Epochs: k}
	if err := checkSizeMemory("mf", f.n, 0, mfMemory(fe, false), false); err != nil {
		return err
	}
	w, err := mf.ParseWorkload(f.spec, f.n)
	if err != nil {
		return err
	}
	mfEstimate(stderr, "dense", f.n, fe, false)
	res, err := untilCancelled(ctx, func() (*mf.Result, error) {
		return mf.Solve(ctx, w, fe, &mf.Options{Tol: 1e-3, Progress: progressTo(stderr, "mf", f.quiet)})
	})
	if err != nil {
		return err
	}
	total := res.LowerBound * res.Sensitivity.Squared
	if total > bound.Total {
		bound.Total, bound.Mean = total, total/float64(f.n)
		bound.Source = fmt.Sprintf("dense fixed-epoch (k = %d) certificate (weak duality, gap %.1e)", k, res.Gap)
	}
	return nil
}

// bltFile is blt.json: jax_privacy's BufferedToeplitz fields and ours.
type bltFile struct {
	mf.BLTFile
	N            int     `json:"n"`
	Schema       string  `json:"schema"`
	Sensitivity  float64 `json:"sensitivity"`
	Sigma        float64 `json:"sigma,omitempty"`
	SigmaMeaning string  `json:"sigma_meaning"`
}

// toeplitzFile is toeplitz.json: C's coefficients, c₀ first.
type toeplitzFile struct {
	Coefs        []float64 `json:"coefs"`
	N            int       `json:"n"`
	Schema       string    `json:"schema"`
	Sensitivity  float64   `json:"sensitivity"`
	Sigma        float64   `json:"sigma,omitempty"`
	SigmaMeaning string    `json:"sigma_meaning"`
}

func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// mfPrivacy fills σ, ε, δ and ρ: from --epsilon/--delta (σ for that
// budget at the plan's sensitivity) or from --sigma/--delta (ε at δ for
// that σ).
func mfPrivacy(out *mfJSON, eps, delta, sigma float64) error {
	if sigma > 0 {
		e, err := epsilonForSigma(sigma, delta, out.Sensitivity)
		if err != nil {
			return err
		}
		eps = e
		out.Sigma = sigma
	} else if eps > 0 {
		s, err := calibrate.GaussianSigma(eps, delta, out.Sensitivity)
		if err != nil {
			return usageErrorf("%v", err)
		}
		out.Sigma = s
	}
	if out.Sigma > 0 {
		out.Budget, _ = calibrate.ApproxDP(eps, delta)
		out.ZCDP, _ = calibrate.ZCDP(out.SensitivitySquared / (2 * out.Sigma * out.Sigma))
	}
	return nil
}

// structuredSchema names the schema for blt.json and toeplitz.json.
func structuredSchema(s mf.Schema, n int) string {
	switch s.Kind {
	case mf.MinSep:
		return fmt.Sprintf("min-sep b=%d k=%d", s.MinSep, s.Participations(n))
	case mf.FixedEpoch:
		return fmt.Sprintf("fixed-epoch k=%d b=%d", s.Epochs, n/s.Epochs)
	}
	return string(s.Kind)
}
