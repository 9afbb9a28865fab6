package main

// dpsolve lrm: plan the Low-Rank Mechanism (Yuan et al., VLDB 2012) for a
// workload matrix and report its expected error against the paper's bounds
// and Identity's.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/mechanism/workload"
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
	Workload  string   `json:"workload"`
	N         int      `json:"n"`
	M         int      `json:"m"`
	Mechanism string   `json:"mechanism"`
	Ball      string   `json:"ball"`
	Epsilon   float64  `json:"epsilon"`
	Delta     *float64 `json:"delta,omitempty"`
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

func runLRM(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("lrm", stderr)
	wfile := fs.String("w", "", "workload matrix W (m×n) from a .npy or .csv file")
	spec := fs.String("workload", "", "or a built-in workload with an explicit matrix (identity, prefix, wrange:m=M, wrelated:m=M,s=S, ...)")
	var specFile string
	registerSpecFile(fs, &specFile)
	nFlag := fs.Int("n", 0, "domain size for --workload")
	mech := fs.String("mechanism", "laplace", "laplace (ε-DP, columns of L in the ℓ1 ball) or gaussian ((ε,δ)-DP, ℓ2 ball)")
	eps := fs.Float64("eps", 1, "privacy parameter ε > 0")
	delta := fs.Float64("delta", 0, "privacy parameter δ in (0,1), gaussian only")
	outB := fs.String("out-b", "", "write B (m×r) to this .npy or .csv file")
	outL := fs.String("out-l", "", "write L (r×n) to this .npy or .csv file")
	outW := registerOutW(fs)
	data := fs.String("data", "", "histogram x (.npy/.csv, n counts) to include the data-dependent structural error (for analysis only: it depends on private data)")
	rankFactor := fs.Float64("rank-factor", 1.2, "r = ⌈rank-factor·rank(W)⌉ rows of L")
	rank := fs.Int("rank", 0, "explicit r (overrides --rank-factor)")
	tol := fs.Float64("tol", 1e-3, "stop when ‖W − BL‖_F ≤ tol·‖W‖_F")
	maxOuter := fs.Int("max-outer", 0, "cap on multiplier iterations (0: default 60)")
	maxInner := fs.Int("max-inner", 0, "cap on L-steps per multiplier iteration (0: default 40)")
	seed := fs.Uint64("seed", 1, "seed of the random orthogonal start (not privacy randomness)")
	startFlag := fs.String("start", "auto", "starting point: auto (pidentity for laplace when r ≥ n, else svd), svd (Yuan et al.'s) or pidentity (HDMM's L = [I; Θ]D⁻¹ by L-BFGS)")
	pRows := fs.Int("pidentity-rows", 0, "p, rows added to the identity by the p-Identity start (0: --rank − n when --rank > n, else ⌈n/16⌉)")
	pIters := fs.Int("pidentity-iters", 0, "cap on the p-Identity start's L-BFGS iterations (0: default 500)")
	refine := fs.Bool("refine", false, "run the augmented-Lagrangian iteration from the p-Identity start too (slower; rarely better)")
	relaxed := fs.Bool("relaxed", false, "keep the relaxed W ≈ BL instead of polishing it to an exact decomposition")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	quiet := fs.Bool("quiet", false, "no per-iteration progress on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dpsolve lrm (--w W.npy | --workload SPEC --n N | --spec FILE) [--mechanism laplace|gaussian] --eps 1 [--delta D] [--out-b B.npy --out-l L.npy] [--json]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// The budget is checked by calibrate and everything else by lrm.Solve
	// (its errors wrap ErrInput and exit 1): no second copy of the checks here.
	ball := lrm.L1
	var bud calibrate.Budget
	switch *mech {
	case "laplace":
		bud = calibrate.Budget{Kind: calibrate.Pure, Epsilon: *eps, Delta: *delta}
	case "gaussian":
		ball = lrm.L2
		bud = calibrate.ApproxDP(*eps, *delta)
	default:
		return usageErrorf("--mechanism must be laplace or gaussian, got %q", *mech)
	}
	if err := bud.Validate(); err != nil {
		return usageErrorf("--mechanism %s --eps %g --delta %g: %v", *mech, *eps, *delta, err)
	}
	var start lrm.Start
	switch *startFlag {
	case "auto":
		start = lrm.StartAuto
	case "svd":
		start = lrm.StartSVD
	case "pidentity":
		start = lrm.StartPIdentity
	default:
		return usageErrorf("--start must be auto, svd or pidentity, got %q", *startFlag)
	}
	if *seed == 0 {
		return usageErrorf("--seed must be positive")
	}
	if err := checkRange("--eps", *eps, epsMin, epsMax); err != nil {
		return err
	}
	if err := preflight("lrm", []string{*wfile, *data, specFile}, lrmSource(*wfile, *spec, specFile, *nFlag), memLRM, true, false, matOut("--out-b", *outB), matOut("--out-l", *outL), matOut("--out-w", *outW)); err != nil {
		return err
	}
	w, label, err := loadLRMWorkload(lrmSource(*wfile, *spec, specFile, *nFlag))
	if err != nil {
		return err
	}
	m, n := w.Dims()
	if err := checkSizeMemory("lrm", n, m, memLRM, true); err != nil {
		return err
	}
	var x []float64
	if *data != "" {
		if x, err = matio.ReadVector(*data); err != nil {
			return err
		}
		if len(x) != n {
			return fmt.Errorf("%s: %d cells, the workload has n = %d", *data, len(x), n)
		}
	}

	opt := &lrm.Options{Ball: ball, RankFactor: *rankFactor, Rank: *rank, Tol: *tol,
		MaxOuter: *maxOuter, MaxInner: *maxInner, Seed: *seed, Relaxed: *relaxed,
		Start: start, PIdentityRows: *pRows, PIdentityIters: *pIters, Refine: *refine,
		Progress: progressTo(stderr, "lrm", *quiet)}
	if !*quiet {
		fmt.Fprintf(stderr, "dpsolve lrm: %s, m = %d, n = %d, %s noise, columns of L in the %v ball\n", label, m, n, *mech, ball)
	}
	// An interrupted solve returns at once and writes nothing.
	res, err := untilCancelled(ctx, func() (*lrm.Result, error) { return lrm.Solve(ctx, w, opt) })
	if err != nil {
		return err
	}
	if err := writeMatrices(outFile{*outB, res.B}, outFile{*outL, res.L}, outFile{*outW, w}); err != nil {
		return err
	}
	noiseErr, err := res.ExpectedNoiseError(bud)
	if err != nil {
		return usageErrorf("%v", err)
	}
	unit, err := unitVariance(res, bud)
	if err != nil {
		return err
	}
	sb, err := res.StructuralBound()
	if err != nil {
		return err
	}
	out := lrmJSON{
		Workload: label, N: n, M: m, Mechanism: *mech, Ball: ball.String(), Epsilon: *eps,
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
	if ball == lrm.L2 {
		out.Delta = delta
	}
	if x != nil {
		s, err := res.StructuralError(x)
		if err != nil {
			return err
		}
		out.StructuralError = &s
		out.ExpectedError += s
	} else if !res.Polished && !res.Fallback && !res.Identity && !res.PIdentity {
		fmt.Fprintf(stderr, "dpsolve lrm: note: the relaxed decomposition has a data-dependent structural error ≤ %.3g·‖x‖²; give --data to include it\n", sb)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	status := "converged"
	switch {
	case res.Fallback:
		status = "fell back to the exact SVD decomposition"
	case res.Identity:
		status = "returned Identity (B = W, L = I), better than the optimizer's result"
	case res.PIdentity:
		status = fmt.Sprintf("p-Identity start (L = [I; Θ]·D⁻¹, p = %d, %d L-BFGS iterations), exact", res.PIdentityRows, res.PIdentityIterations)
	case res.Polished:
		status = "converged, polished to an exact decomposition"
	}
	fmt.Fprintf(stdout, "workload        %s: m = %d, n = %d, rank %d\n", label, m, n, res.WorkloadRank)
	after := fmt.Sprintf(" after %d iterations (%d L-steps)", res.Iterations, res.InnerIterations)
	if res.Iterations == 0 {
		after = "" // the p-Identity start without the iteration (--refine)
	}
	fmt.Fprintf(stdout, "decomposition   B %d×%d, L %d×%d; %s%s, %.2f s\n", m, res.Rank, res.Rank, n, status, after, res.Seconds)
	fmt.Fprintf(stdout, "objective       tr(BᵀB) = %.8g, residual %.2e, sensitivity %.6f (%v)\n", res.Objective, res.Residual, res.Sensitivity, ball)
	fmt.Fprintf(stdout, "expected error  %.6g (RMSE per query %.6g)\n", out.ExpectedError, math.Sqrt(out.ExpectedError/float64(m)))
	fmt.Fprintf(stdout, "identity        %.6g (%.2f× LRM)\n", out.IdentityError, out.IdentityError/out.ExpectedError)
	fmt.Fprintf(stdout, "seed bounds     SVD upper %.6g, SVD lower %.6g, Hardt–Talwar rate %.6g (no constant)\n", out.SVDUpperBound, out.LowerBound, out.HardtTalwarRate)
	return nil
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
