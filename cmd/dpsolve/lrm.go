package main

// dpsolve lrm: plan the Low-Rank Mechanism (Yuan et al., VLDB 2012) for a
// workload matrix and report its expected error against the paper's bounds
// and Identity's.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

func init() {
	register(&command{
		name:    "lrm",
		summary: "plan the Low-Rank Mechanism W ≈ B·L (ε-DP Laplace, or (ε,δ) Gaussian) and its expected error",
		run:     runLRM,
	})
}

// lrmJSON is the machine-readable output of dpsolve lrm. Errors are the
// expected total squared error of the m answers.
type lrmJSON struct {
	Workload  string `json:"workload"`
	N         int    `json:"n"`
	M         int    `json:"m"`
	Mechanism string `json:"mechanism"`
	Ball      string `json:"ball"`
	// Budget is the noise's budget, written after ball (MarshalJSON).
	Budget calibrate.Budget `json:"-"`
	// Objective is Φ = tr(BᵀB); Residual ‖W − BL‖_F/‖W‖_F of the returned
	// pair; Rank r the rows of L.
	Objective    float64 `json:"objective"`
	Residual     float64 `json:"residual"`
	Rank         int     `json:"rank"`
	WorkloadRank int     `json:"workload_rank"`
	Iterations   int     `json:"iterations"`
	InnerIters   int     `json:"inner_iterations"`
	Seconds      float64 `json:"seconds"`
	// ExpectedError is NoiseError plus, with --data, the structural part.
	ExpectedError   float64  `json:"expected_error"`
	NoiseError      float64  `json:"noise_error"`
	StructuralError *float64 `json:"structural_error"`
	// StructuralBound is ‖W − BL‖²_F: structural part ≤ it·‖x‖²₂.
	StructuralBound float64 `json:"structural_bound"`
	IdentityError   float64 `json:"identity_error"`
	SVDUpperBound   float64 `json:"svd_upper_bound"`
	LowerBound      float64 `json:"lower_bound"`
	HardtTalwarRate float64 `json:"hardt_talwar_rate"`
	Sensitivity     float64 `json:"sensitivity"`
	Converged       bool    `json:"converged"`
	Polished        bool    `json:"polished"`
	Fallback        bool    `json:"fallback"`
	Identity        bool    `json:"identity"`
	// Start is "svd" or "pidentity"; PIdentity reports that the p-Identity
	// start (exact) is the returned pair.
	Start               string  `json:"start"`
	PIdentity           bool    `json:"pidentity"`
	PIdentityRows       int     `json:"pidentity_rows,omitempty"`
	PIdentityIterations int     `json:"pidentity_iterations,omitempty"`
	PIdentityObjective  float64 `json:"pidentity_objective,omitempty"`
	RelaxedObjective    float64 `json:"relaxed_objective"`
	ALResidual          float64 `json:"al_residual"`
	Perturbations       int     `json:"perturbations"`
}

// lrmFlags are dpsolve lrm's parsed flags.
type lrmFlags struct {
	wfile, spec, specFile string
	n                     int
	mech                  string
	eps, delta            float64
	outB, outL, outW      string
	data                  string
	startFlag             string
	seed                  uint64
	asJSON, quiet         bool
	// opt holds the optimizer's settings; Noise, Start and Progress are
	// filled in by check and runLRM.
	opt lrm.Options
}

func (f *lrmFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.wfile, "w", "", "workload matrix W (m×n) from a .npy or .csv file")
	fs.StringVar(&f.spec, "workload", "", "or a built-in workload with an explicit matrix (identity, prefix, wrange:m=M, wrelated:m=M,s=S, ...)")
	registerSpecFile(fs, &f.specFile)
	fs.IntVar(&f.n, "n", 0, "domain size for --workload")
	fs.StringVar(&f.mech, "mechanism", calibrate.MechanismName(calibrate.Pure), calibrate.MechanismUsage(lrmMechanisms...)+"; the columns of L lie in the unit ball of that norm")
	fs.Float64Var(&f.eps, "eps", 1, "privacy parameter ε > 0")
	fs.Float64Var(&f.delta, "delta", 0, "privacy parameter δ in (0,1), gaussian only")
	fs.StringVar(&f.outB, "out-b", "", "write B (m×r) to this .npy or .csv file")
	fs.StringVar(&f.outL, "out-l", "", "write L (r×n) to this .npy or .csv file")
	fs.StringVar(&f.outW, "out-w", "", outWUsage)
	fs.StringVar(&f.data, "data", "", "histogram x (.npy/.csv, n counts) to include the data-dependent structural error (for analysis only: it depends on private data)")
	fs.Float64Var(&f.opt.RankFactor, "rank-factor", 1.2, "r = ⌈rank-factor·rank(W)⌉ rows of L")
	fs.IntVar(&f.opt.Rank, "rank", 0, "explicit r (overrides --rank-factor)")
	fs.Float64Var(&f.opt.Tol, "tol", 1e-3, "stop when ‖W − BL‖_F ≤ tol·‖W‖_F")
	fs.IntVar(&f.opt.MaxOuter, "max-outer", 0, "cap on multiplier iterations (0: default 60)")
	fs.IntVar(&f.opt.MaxInner, "max-inner", 0, "cap on L-steps per multiplier iteration (0: default 40)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the random orthogonal start (not privacy randomness)")
	fs.StringVar(&f.startFlag, "start", "auto", "starting point: auto (pidentity for laplace when r ≥ n, else svd), svd (Yuan et al.'s) or pidentity (HDMM's L = [I; Θ]D⁻¹ by L-BFGS)")
	fs.IntVar(&f.opt.PIdentityRows, "pidentity-rows", 0, "p, rows added to the identity by the p-Identity start (0: --rank − n when --rank > n, else ⌈n/16⌉)")
	fs.IntVar(&f.opt.PIdentityIters, "pidentity-iters", 0, "cap on the p-Identity start's L-BFGS iterations (0: default 500)")
	fs.BoolVar(&f.opt.Refine, "refine", false, "run the augmented-Lagrangian iteration from the p-Identity start too (slower; rarely better)")
	fs.BoolVar(&f.opt.Relaxed, "relaxed", false, "keep the relaxed W ≈ BL instead of polishing it to an exact decomposition")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object on stdout")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-iteration progress on stderr")
}

// lrmMechanisms are the privacy definitions lrm's --mechanism offers.
var lrmMechanisms = []calibrate.Kind{calibrate.Pure, calibrate.Approx}

// check validates the flags that need no file and returns the budget the
// noise is calibrated to. The budget is checked by calibrate and everything
// else by lrm.Solve (its errors wrap ErrInput and exit 1): no second copy
// of the checks here.
func (f *lrmFlags) check() (calibrate.Budget, error) {
	mech, kind, err := mechanismFlag(f.mech, lrmMechanisms...)
	if err != nil {
		return calibrate.Budget{}, err
	}
	f.mech = string(mech)
	f.opt.Noise = mech
	bud, err := calibrate.New(kind, f.eps, f.delta, 0)
	if err != nil {
		return bud, usageErrorf("--mechanism %s --eps %g --delta %g: %v", f.mech, f.eps, f.delta, err)
	}
	switch f.startFlag {
	case "auto":
		f.opt.Start = lrm.StartAuto
	case "svd":
		f.opt.Start = lrm.StartSVD
	case "pidentity":
		f.opt.Start = lrm.StartPIdentity
	default:
		return bud, usageErrorf("--start must be auto, svd or pidentity, got %q", f.startFlag)
	}
	if f.seed == 0 {
		return bud, usageErrorf("--seed must be positive")
	}
	f.opt.Seed = f.seed
	return bud, checkRange("--eps", f.eps, epsMin, epsMax)
}

// source is the workload lrm's flags describe.
func (f *lrmFlags) source() workload.Source { return lrmSource(f.wfile, f.spec, f.specFile, f.n) }

func runLRM(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("lrm", stderr)
	var f lrmFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dpsolve lrm (--w W.npy | --workload SPEC --n N | --spec FILE) [--mechanism "+strings.Join(calibrate.MechanismValues(lrmMechanisms...), "|")+"] --eps 1 [--delta D] [--out-b B.npy --out-l L.npy] [--json]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	bud, err := f.check()
	if err != nil {
		return err
	}
	if err := preflight("lrm", []string{f.wfile, f.data, f.specFile}, f.source(), memLRM, true, false, matOut("--out-b", f.outB), matOut("--out-l", f.outL), matOut("--out-w", f.outW)); err != nil {
		return err
	}
	w, label, err := loadLRMWorkload(f.source())
	if err != nil {
		return err
	}
	m, n := w.Dims()
	if err := checkSizeMemory("lrm", n, m, memLRM, true); err != nil {
		return err
	}
	x, err := readLRMData(f.data, n)
	if err != nil {
		return err
	}
	opt := f.opt
	opt.Progress = progressTo(stderr, "lrm", f.quiet)
	if !f.quiet {
		fmt.Fprintf(stderr, "dpsolve lrm: %s, m = %d, n = %d, %s noise, columns of L in the %s ball\n", label, m, n, f.mech, lrmBall(opt.Noise))
	}
	// An interrupted solve returns at once and writes nothing.
	res, err := untilCancelled(ctx, func() (*lrm.Result, error) { return lrm.Solve(ctx, w, &opt) })
	if err != nil {
		return err
	}
	if err := writeMatrices(outFile{f.outB, res.B}, outFile{f.outL, res.L}, outFile{f.outW, w}); err != nil {
		return err
	}
	out, err := newLRMResult(label, m, n, &f, bud, res, x)
	if err != nil {
		return err
	}
	if x == nil && !res.Polished && !res.Fallback && !res.Identity && !res.PIdentity {
		fmt.Fprintf(stderr, "dpsolve lrm: note: the relaxed decomposition has a data-dependent structural error ≤ %.3g·‖x‖²; give --data to include it\n", out.StructuralBound)
	}
	return writeReport(stdout, f.asJSON, out)
}

// readLRMData reads the optional histogram of --data (nil without it).
func readLRMData(path string, n int) ([]float64, error) {
	if path == "" {
		return nil, nil
	}
	x, err := matio.ReadVector(path)
	if err != nil {
		return nil, err
	}
	if len(x) != n {
		return nil, fmt.Errorf("%s: %d cells, the workload has n = %d", path, len(x), n)
	}
	return x, nil
}

// newLRMResult is the one result of dpsolve lrm that both the text and the
// --json renderings read. Errors are turned from the Φ scale into expected
// squared errors under bud; with data x the structural part is added.
func newLRMResult(label string, m, n int, f *lrmFlags, bud calibrate.Budget, res *lrm.Result, x []float64) (*lrmJSON, error) {
	noiseErr, err := res.ExpectedNoiseError(bud)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	unit, err := unitVariance(res, bud)
	if err != nil {
		return nil, err
	}
	sb, err := res.StructuralBound()
	if err != nil {
		return nil, err
	}
	out := &lrmJSON{
		Workload: label, N: n, M: m, Mechanism: f.mech, Ball: lrmBall(f.opt.Noise), Budget: bud,
		Objective: res.Objective, Residual: res.Residual, Rank: res.Rank, WorkloadRank: res.WorkloadRank,
		Iterations: res.Iterations, InnerIters: res.InnerIterations, Seconds: res.Seconds,
		ExpectedError: noiseErr, NoiseError: noiseErr, StructuralBound: sb,
		IdentityError: unit * res.FrobeniusW2, SVDUpperBound: unit * res.Bounds.SVDUpper,
		LowerBound: unit * res.Bounds.Lower, HardtTalwarRate: unit * res.Bounds.HardtTalwar,
		Sensitivity: res.Sensitivity, Converged: res.Status.Err() == nil, Polished: res.Polished, Fallback: res.Fallback, Identity: res.Identity,
		RelaxedObjective: res.RelaxedObjective, ALResidual: res.ALResidual, Perturbations: res.Perturbations,
		Start: res.Start.String(), PIdentity: res.PIdentity, PIdentityRows: res.PIdentityRows,
		PIdentityIterations: res.PIdentityIterations, PIdentityObjective: res.PIdentityObjective,
	}
	if x != nil {
		s, err := res.StructuralError(x)
		if err != nil {
			return nil, err
		}
		out.StructuralError = &s
		out.ExpectedError += s
	}
	return out, nil
}

// MarshalJSON writes the result with its budget in calibrate's encoding
// after the ball key.
func (o lrmJSON) MarshalJSON() ([]byte, error) {
	type plain lrmJSON // without this method
	return calibrate.MarshalInline(plain(o), "ball", o.Budget)
}

// outcome says in words how the decomposition was obtained.
func (o *lrmJSON) outcome() string {
	switch {
	case o.Fallback:
		return "fell back to the exact SVD decomposition"
	case o.Identity:
		return "returned Identity (B = W, L = I), better than the optimizer's result"
	case o.PIdentity:
		return fmt.Sprintf("p-Identity start (L = [I; Θ]·D⁻¹, p = %d, %d L-BFGS iterations), exact", o.PIdentityRows, o.PIdentityIterations)
	case o.Polished:
		return "converged, polished to an exact decomposition"
	}
	return "converged"
}

// writeText renders the result for a reader.
func (o *lrmJSON) writeText(w io.Writer) {
	fmt.Fprintf(w, "workload        %s: m = %d, n = %d, rank %d\n", o.Workload, o.M, o.N, o.WorkloadRank)
	after := fmt.Sprintf(" after %d iterations (%d L-steps)", o.Iterations, o.InnerIters)
	if o.Iterations == 0 {
		after = "" // the p-Identity start without the iteration (--refine)
	}
	fmt.Fprintf(w, "decomposition   B %d×%d, L %d×%d; %s%s, %.2f s\n", o.M, o.Rank, o.Rank, o.N, o.outcome(), after, o.Seconds)
	fmt.Fprintf(w, "objective       tr(BᵀB) = %.8g, residual %.2e, sensitivity %.6f (%s)\n", o.Objective, o.Residual, o.Sensitivity, o.Ball)
	fmt.Fprintf(w, "expected error  %.6g (RMSE per query %.6g)\n", o.ExpectedError, math.Sqrt(o.ExpectedError/float64(o.M)))
	fmt.Fprintf(w, "identity        %.6g (%.2f× LRM)\n", o.IdentityError, o.IdentityError/o.ExpectedError)
	fmt.Fprintf(w, "seed bounds     SVD upper %.6g, SVD lower %.6g, Hardt–Talwar rate %.6g (no constant)\n", o.SVDUpperBound, o.LowerBound, o.HardtTalwarRate)
}

// unitVariance is the per-measurement noise variance at unit sensitivity:
// the factor that turns Φ-scale quantities into errors.
func unitVariance(res *lrm.Result, b calibrate.Budget) (float64, error) {
	v, err := res.NoiseVariance(b)
	if err != nil {
		return 0, err
	}
	return v / (res.Sensitivity * res.Sensitivity), nil
}

// loadLRMWorkload reads W from a file or builds an explicit built-in
// workload, through the shared loader.
func loadLRMWorkload(src workload.Source) (*mat.Dense, string, error) {
	w, err := loadWorkload(src)
	if err != nil {
		return nil, "", err
	}
	ex, ok := w.(workload.Explicit)
	if !ok {
		return nil, "", usageErrorf("workload %s has no explicit matrix; write W to a file and use --w", w.Name())
	}
	return ex.Matrix(), w.Name(), nil
}

// lrmSource is the workload lrm's flags describe.
func lrmSource(wfile, spec, specFile string, n int) workload.Source {
	return workload.Source{Spec: spec, N: n, WFile: wfile, SpecFile: specFile}
}

// lrmBall names the ball the columns of L lie in, as the report spells it:
// "l1" for Laplace noise, "l2" for Gaussian (the noise model's norm).
func lrmBall(k calibrate.NoiseKind) string { return fmt.Sprintf("l%d", k.Norm()) }
