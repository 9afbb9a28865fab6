package main

// dpsolve mf: plan a certified-optimal correlated-noise mechanism for n
// training steps (DP matrix factorization) under a participation schema,
// or score a given strategy under one.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/bench"
	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/mf"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/status"
)

func init() {
	register(&command{
		name:    "mf",
		summary: "plan certified-optimal correlated noise for private training (DP matrix factorization)",
		run:     runMF,
	})
}

// mfJSON is the machine-readable output of dpsolve mf. Objective and
// LowerBound are total squared errors over the n steps per unit noise
// variance at the schema's sensitivity (tr(V X⁻¹)·sens²).
type mfJSON struct {
	N        int    `json:"n"`
	Schema   string `json:"schema"`
	Epochs   int    `json:"epochs"`
	MinSep   int    `json:"min_sep"`
	Bands    int    `json:"bands"`
	Workload string `json:"workload"`
	// Ridge is --ridge's μ; ReleasedError is then the released
	// quantities' own total squared error (tr(V X⁻¹)·sens² without the
	// ridge), at most Objective.
	Ridge         float64 `json:"ridge,omitempty"`
	ReleasedError float64 `json:"released_error,omitempty"`
	Objective     float64 `json:"objective"`
	LowerBound    float64 `json:"lower_bound,omitempty"`
	Gap           float64 `json:"gap,omitempty"`
	// Sensitivity is sens (L2) and SensitivitySquared sens².
	Sensitivity        float64       `json:"sensitivity"`
	SensitivitySquared float64       `json:"sensitivity_squared"`
	SensitivityExact   bool          `json:"sensitivity_exact"`
	MeanError          float64       `json:"mean_step_error,omitempty"`
	MaxError           float64       `json:"max_step_error,omitempty"`
	RMSE               float64       `json:"rmse,omitempty"`
	Iterations         int           `json:"iterations"`
	CGSteps            int           `json:"cg_steps"`
	Seconds            float64       `json:"seconds"`
	Status             status.Status `json:"status,omitempty"`
	// Sigma is the noise multiplier for the (ε,δ) Budget of --epsilon/
	// --delta (unit-norm clipped gradients), ZCDP the ρ = sens²/(2σ²) it
	// gives; both are written after sigma (MarshalJSON).
	Sigma   float64          `json:"sigma,omitempty"`
	ZCDP    calibrate.Budget `json:"-"`
	Budget  calibrate.Budget `json:"-"`
	PerStep []float64        `json:"per_step_error,omitempty"`
	Checked string           `json:"checked,omitempty"`
	Backend string           `json:"backend"`
	Core    string           `json:"core,omitempty"`
	mfStructured
}

// memMF is the peak of dpsolve mf in n×n float64 matrices for the single-
// participation schema: V, its copy and factor, newton's work matrices and
// its certificate's, and the strategy and its factor at the end (an upper
// model kept from before the workload's rows were generated on demand and
// the evaluation stopped copying, both of which only lowered the peak).
const memMF = 14

// memMFBanded is the banded peak for a built-in workload: V, the solver's
// five n×n matrices (counted by mechanism/mf's memory test; the iterate,
// the step, the CG vectors and X's factor are bands of n·b numbers) and
// its column preconditioner, at most one n×n matrix's worth (or 4 MiB): 7. X and C are
// built in the solver's matrices at the end and the evaluation works in
// blocks of 256 rows: half a matrix for those blocks and the bands.
const memMFBanded = 7.5

// memMFEpoch is the fixed-epoch peak for a built-in workload: V and the
// solver's seven n×n matrices (counted by mechanism/mf's memory test; the
// eigensolver, the certificate, the preconditioner, X and C borrow them):
// 8. Half a matrix more for the evaluation's row blocks, the per-iteration
// vectors and, below n = 512, the preconditioner's blocks.
const memMFEpoch = 8.5

// memMFUser is what a workload read from a file adds: the file's matrix
// and the user's W (or the Gram's copy).
const memMFUser = 2

// mfMemory is the peak model for the schema; user says the workload comes
// from --w or --gram.
func mfMemory(s mf.Schema, user bool) float64 {
	extra := 0.0
	if user {
		extra = memMFUser
	}
	switch {
	case s.Kind == mf.FixedEpoch && s.Epochs > 1:
		return memMFEpoch + extra
	case s.Kind == mf.MinSep:
		return memMFBanded + extra
	}
	return memMF + extra
}

const mfUsage = `usage: dpsolve mf --n N [--epochs K | --min-sep B [--bands B] [--epochs K]]
       (--workload prefix|momentum:BETA[,cooldown:S[:F]] | --w FILE | --gram FILE)
       [--family dense|banded|toeplitz|blt|auto] [--max-buffers D] [--bands B]
       [--json] [--out DIR] [--check C.npy] [--epsilon E --delta D | --sigma S --delta D] [--ridge MU]

Workloads (the model after step t is row t of a lower-triangular A):
  prefix                  SGD: the sum of the first t gradients
  momentum:BETA           heavy-ball momentum β ∈ [0,1): A_tu = (1 − β^(t−u+1))/(1 − β)
  momentum:BETA,cooldown:S[:F]
                          with learning rates 1 falling linearly to F (default 0.1)
                          over the last S steps: A_tu = Σ_{s=u..t} η_s β^(s−u)
  --w FILE / --gram FILE  any workload W (m×n) or its Gram V = WᵀW (.npy or .csv);
                          a rank-deficient one (m < n rows, say the final model only)
                          has no invertible optimal strategy: add --ridge MU to plan
                          for V + MU·mean(diag V)·I (1e-6 certifies on 64 steps)
Schemas:
  (default)               single participation: sens² = max_j X_jj
  --epochs K              (k,b) fixed epoch, n = K·b, uses at r, r+b, …
  --min-sep B             b-min-separation with at most --epochs K uses (default:
                          as many as fit), b-banded strategy (--bands ≤ B)
Families:
  dense / banded          the certified n×n solvers (fixed epoch and single: dense;
                          --min-sep: banded); the default, n ≤ 16384
  blt                     buffered linear Toeplitz, d ≤ --max-buffers buffers (default:
                          added while the loss falls ≥ 1%), any n to 10⁸, O(n) memory;
                          prefix and momentum:BETA only; --out writes blt.json
  toeplitz                banded Toeplitz with --bands coefficients (default min(b, 64)),
                          positive and non-increasing, optimized by L-BFGS; --out writes
                          toeplitz.json
  auto                    blt for a prefix/momentum workload above n = 2048, else dense/banded
sigma is the noise multiplier of the clipped gradients (σ·clip is the standard deviation of
Z before correlation); --sigma S --delta D reports the ε it gives.
Privacy amplification by sampling is not modelled.
`

func runMF(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mf", stderr)
	n := fs.Int("n", 0, "number of training steps")
	epochs := fs.Int("epochs", 0, "participations per record: fixed-epoch k (n = k·b), or the cap with --min-sep")
	minSep := fs.Int("min-sep", 0, "minimum separation b between two uses of a record (banded strategy)")
	bands := fs.Int("bands", 0, "bands of the strategy with --min-sep (default: min-sep)")
	spec := fs.String("workload", "", "prefix, momentum:BETA[,cooldown:S[:F]]")
	wfile := fs.String("w", "", "workload matrix W (m×n) from a .npy or .csv file")
	gram := fs.String("gram", "", "Gram V = WᵀW (n×n) from a .npy or .csv file")
	tol := fs.Float64("tol", 1e-8, "target certified relative gap")
	maxIter := fs.Int("max-iter", 0, "Newton iteration cap (0: 100)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	outDir := fs.String("out", "", "write DIR/C.npy, DIR/bands.npy (banded) and DIR/report.json, atomically")
	check := fs.String("check", "", "score this strategy C (n×n .npy/.csv) under the schema instead of solving")
	eps := fs.Float64("epsilon", 0, "with --delta: report the noise multiplier σ for (ε,δ)-DP")
	delta := fs.Float64("delta", 0, "δ for --epsilon")
	perStep := fs.Bool("per-step", false, "include every step's squared error in --json")
	ridge := fs.Float64("ridge", 0, "plan for V + μ·mean(diag V)·I: needed by a rank-deficient workload (fewer released quantities than steps), e.g. 1e-6")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	family := fs.String("family", "", "dense|banded|toeplitz|blt|auto (default: dense, or banded with --min-sep)")
	maxBuffers := fs.Int("max-buffers", 0, "most BLT buffers (noise state: d model-sized vectors; default 8, fewer if a buffer gains < 1%)")
	sigma := fs.Float64("sigma", 0, "with --delta: report the ε this noise multiplier gives")
	lossKind := fs.String("loss", "mean", "structured families: optimize the mean or the max per-step error")
	denseBound := fs.Bool("dense-bound", false, "structured families: also run the dense fixed-epoch certificate (n×n, n ≤ 16384) for a tighter bound")
	fs.Usage = func() { fmt.Fprint(stderr, mfUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	schema, err := mfSchema(*epochs, *minSep, *bands, fs)
	if err != nil {
		return err
	}
	if *tol <= 0 || *tol >= 1 || math.IsNaN(*tol) {
		return usageErrorf("--tol must be in (0, 1), got %g", *tol)
	}
	if err := checkMFPrivacy(*eps, *delta, *sigma); err != nil {
		return err
	}
	fam, err := mfFamily(*family, *spec, *n, schema)
	if err != nil {
		return err
	}
	if err := checkMFFamilyFlags(fam, *wfile, *gram, *check, *ridge, *maxBuffers, *n, *lossKind); err != nil {
		return err
	}
	// --out is checked and reserved before any work (exit 2 at once, not
	// after the solve).
	outRes, err := reserveMFOut(*outDir, *check, stderr)
	if err != nil {
		return err
	}
	if outRes != nil {
		defer outRes.Abort() // after Commit it does nothing
	}
	if fam == "blt" || fam == "toeplitz" {
		return runMFStructured(ctx, structuredFlags{maxLoss: *lossKind == "max", denseBound: *denseBound, family: fam, maxBuffers: *maxBuffers, bands: *bands, n: *n, spec: *spec,
			eps: *eps, delta: *delta, sigma: *sigma, perStep: *perStep, asJSON: *asJSON, quiet: *quiet, out: outRes}, schema, stdout, stderr)
	}
	w, err := loadMFWorkload(schema, *spec, *wfile, *gram, *n, *ridge)
	if err != nil {
		return err
	}
	if *check != "" {
		return mfCheck(w, schema, *check, *eps, *delta, *sigma, *asJSON, *perStep, stdout)
	}
	if !*quiet {
		fmt.Fprintf(stderr, "dpsolve mf: %s, n = %d, %s, backend %s\n", w.Name, w.N(), schema, blas.Describe())
	}
	mfEstimate(stderr, fam, w.N(), schema, *spec == "")
	opt := &mf.Options{Tol: *tol, MaxIter: *maxIter, Progress: progressTo(stderr, "mf", *quiet)}
	res, err := untilCancelled(ctx, func() (*mf.Result, error) { return mf.Solve(ctx, w, schema, opt) })
	if err != nil {
		return err
	}
	ev, err := res.Evaluate(w)
	if err != nil {
		return err
	}
	out, err := denseMFReport(w, schema, res, ev, fam, *perStep, *eps, *delta, *sigma, *ridge)
	if err != nil {
		return err
	}
	if outRes != nil {
		if err := writeMFDir(ctx, outRes, res, schema, out, nil); err != nil {
			return err
		}
	}
	return printMF(stdout, out, *asJSON)
}

// loadMFWorkload reads the dense solvers' workload and checks that it fits:
// memory is checked on --n before anything is read (so that an oversized
// request fails fast), then again on the workload's own size, before the
// schema is validated against it and the ridge, if any, is added.
func loadMFWorkload(schema mf.Schema, spec, wfile, gram string, n int, ridge float64) (*mf.Workload, error) {
	if n > 0 {
		if err := checkSizeMemory("mf", n, 0, mfMemory(schema, spec == ""), false); err != nil {
			return nil, err
		}
	}
	w, err := mfWorkload(spec, wfile, gram, n)
	if err != nil {
		return nil, err
	}
	if err := checkSizeMemory("mf", w.N(), 0, mfMemory(schema, spec == ""), false); err != nil {
		return nil, err
	}
	if err := schema.Validate(w.N()); err != nil {
		return nil, err
	}
	if ridge != 0 {
		if w, err = w.Ridge(ridge); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// checkMFFamilyFlags refuses the flag combinations that do not fit the
// family: the structured families (blt, toeplitz) take a named workload and
// --n, not a matrix, a check or a ridge, and only blt takes --max-buffers.
// Checked before --out is reserved, so that a usage error leaves it alone.
func checkMFFamilyFlags(fam, wfile, gram, check string, ridge float64, maxBuffers, n int, lossKind string) error {
	if fam == "blt" || fam == "toeplitz" {
		if wfile != "" || gram != "" || check != "" || ridge != 0 {
			return usageErrorf("--family %s takes --workload prefix|momentum:BETA, not --w, --gram, --check or --ridge", fam)
		}
		if maxBuffers < 0 || (maxBuffers > 0 && fam != "blt") {
			return usageErrorf("--max-buffers must be positive and goes with --family blt")
		}
		if n <= 0 {
			return usageErrorf("--family %s needs --n N > 0", fam)
		}
		if lossKind != "mean" && lossKind != "max" {
			return usageErrorf("--loss %q: want mean or max", lossKind)
		}
	} else if maxBuffers != 0 {
		return usageErrorf("--max-buffers goes with --family blt")
	}
	return nil
}

// reserveMFOut reserves --out before any work, so that a bad directory
// exits 2 at once rather than after the solve: an earlier mf output there
// is replaced at the end, anything else non-empty is refused and left as it
// is. It returns nil with no --out, or with --check (which writes nothing);
// the caller defers Abort on what it returns.
func reserveMFOut(outDir, check string, stderr io.Writer) (*atomicdir.Dir, error) {
	if outDir == "" || check != "" {
		return nil, nil
	}
	d, err := atomicdir.ReserveReplacing(outDir, isMFDir, func(path string) {
		fmt.Fprintf(stderr, "dpsolve mf: removed %s, the unfinished output of an earlier run that was killed\n", path)
	})
	if err != nil {
		return nil, outDirError(outDir, err, "an earlier dpsolve mf output (no report.json)")
	}
	return d, nil
}

// denseMFReport builds the report of a dense or banded solve: the
// evaluation, the privacy figures, the ridge (when planned with one) and the
// solver's certificate scaled by the squared sensitivity, and refuses it
// when its bound is not certified (mfCertified). Kept apart from runMF so
// that the solve and the report's arithmetic are read separately.
func denseMFReport(w *mf.Workload, schema mf.Schema, res *mf.Result, ev *mf.Evaluation, fam string, perStep bool, eps, delta, sigma, ridge float64) (mfJSON, error) {
	out := mfReport(w, schema, ev, perStep)
	out.Family = fam
	if err := mfPrivacy(&out, eps, delta, sigma); err != nil {
		return out, err
	}
	if ridge != 0 {
		out.Ridge, out.ReleasedError = ridge, ev.Error
	}
	s2 := res.Sensitivity.Squared
	out.Objective, out.LowerBound, out.Gap = res.Objective*s2, res.LowerBound*s2, res.Gap
	out.Iterations, out.CGSteps, out.Seconds, out.Status = res.Iterations, res.CGSteps, res.Seconds, res.Status
	if err := mfCertified(out); err != nil {
		return out, err
	}
	return out, nil
}

// mfCertified refuses to print a report whose lower bound is above its
// objective beyond rounding (mf.CheckBound): the solver checks its own
// pair, and this checks the pair as reported, after the scaling by sens²,
// so that no report calls such a bound certified.
func mfCertified(out mfJSON) error {
	return mf.CheckBound(out.Objective, out.LowerBound, out.N)
}

// mfFamily resolves --family: "" is dense (banded with --min-sep), auto
// picks blt for a prefix/momentum workload above n = 2048.
func mfFamily(family, spec string, n int, s mf.Schema) (string, error) {
	switch family {
	case "":
		if s.Kind == mf.MinSep {
			return "banded", nil
		}
		return "dense", nil
	case "dense", "banded":
		if (family == "banded") != (s.Kind == mf.MinSep) {
			return "", usageErrorf("--family banded goes with --min-sep, dense with the other schemas")
		}
		return family, nil
	case "blt", "toeplitz":
		return family, nil
	case "auto":
		if _, err := mf.ParseToeplitzWorkload(spec); err == nil && n > 2048 {
			return "blt", nil
		}
		return mfFamily("", spec, n, s)
	}
	return "", usageErrorf("--family %q: want dense, banded, toeplitz, blt or auto", family)
}

func mfSchema(epochs, minSep, bands int, fs *flag.FlagSet) (mf.Schema, error) {
	switch {
	case epochs < 0 || minSep < 0 || bands < 0:
		return mf.Schema{}, usageErrorf("--epochs, --min-sep and --bands must be non-negative")
	case bands > 0 && minSep == 0:
		return mf.Schema{}, usageErrorf("--bands needs --min-sep")
	case minSep > 0:
		return mf.Schema{Kind: mf.MinSep, MinSep: minSep, Epochs: epochs, Bands: bands}, nil
	case epochs > 0:
		return mf.Schema{Kind: mf.FixedEpoch, Epochs: epochs}, nil
	}
	return mf.Schema{Kind: mf.Single}, nil
}

func mfWorkload(spec, wfile, gram string, n int) (*mf.Workload, error) {
	given := 0
	for _, s := range []string{spec, wfile, gram} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return nil, usageErrorf("give exactly one of --workload, --w, --gram")
	}
	if spec != "" {
		if n <= 0 {
			return nil, usageErrorf("--workload needs --n N > 0")
		}
		return mf.ParseWorkload(spec, n)
	}
	path := wfile + gram
	m, err := matio.ReadMatrix(path)
	if err != nil {
		return nil, err
	}
	if _, c := m.Dims(); n > 0 && c != n {
		return nil, usageErrorf("%s has %d columns, --n is %d", path, c, n)
	}
	if wfile != "" {
		return mf.FromMatrix(filepath.Base(path), m)
	}
	r, c := m.Dims()
	if r != c {
		return nil, usageErrorf("--gram %s is %d×%d, want square", path, r, c)
	}
	v := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			if math.Abs(m.At(i, j)-m.At(j, i)) > 1e-9*(math.Abs(m.At(i, j))+math.Abs(m.At(j, i))+1e-300) {
				return nil, usageErrorf("--gram %s is not symmetric at (%d,%d)", path, i, j)
			}
			v.SetSym(i, j, m.At(i, j))
		}
	}
	return mf.FromGram(filepath.Base(path), v)
}

func mfReport(w *mf.Workload, s mf.Schema, ev *mf.Evaluation, perStep bool) mfJSON {
	be := blas.Current()
	out := mfJSON{N: w.N(), Schema: string(s.Kind), Workload: w.Name, Objective: ev.Error,
		Sensitivity: math.Sqrt(ev.Sensitivity.Squared), SensitivitySquared: ev.Sensitivity.Squared,
		SensitivityExact: ev.Sensitivity.Exact, MeanError: ev.Mean, MaxError: ev.Max, RMSE: ev.RMS,
		Backend: be.Name(), Core: be.CoreName()}
	switch s.Kind {
	case mf.FixedEpoch:
		out.Epochs = s.Epochs
	case mf.MinSep:
		out.Epochs, out.MinSep, out.Bands = s.Participations(w.N()), s.MinSep, s.Bands
		if out.Bands == 0 {
			out.Bands = s.MinSep
		}
	default:
		out.Epochs = 1
	}
	if perStep {
		out.PerStep = ev.PerStep
	}
	return out
}

func mfCheck(w *mf.Workload, s mf.Schema, path string, eps, delta, sigma float64, asJSON, perStep bool, stdout io.Writer) error {
	c, err := matio.ReadMatrix(path)
	if err != nil {
		return err
	}
	ev, err := mf.Evaluate(w, c, s)
	if err != nil {
		return err
	}
	out := mfReport(w, s, ev, perStep)
	out.Checked = path
	if err := mfPrivacy(&out, eps, delta, sigma); err != nil {
		return err
	}
	return printMF(stdout, out, asJSON)
}

// MarshalJSON writes the report with its budgets in calibrate's encoding
// after the sigma key: rho, then epsilon and delta.
func (o mfJSON) MarshalJSON() ([]byte, error) {
	type plain mfJSON // without this method
	obj, err := calibrate.MarshalInline(plain(o), "sigma", o.Budget)
	if err != nil {
		return nil, err
	}
	return calibrate.MarshalInline(json.RawMessage(obj), "sigma", o.ZCDP) // before epsilon
}

func printMF(stdout io.Writer, out mfJSON, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "workload      %s (n = %d steps), schema %s\n", out.Workload, out.N, out.Schema)
	if out.Loss > 0 {
		// structured: the lines below
	} else if out.Checked != "" {
		fmt.Fprintf(stdout, "strategy      %s (scored, not optimized)\n", out.Checked)
	} else {
		fmt.Fprintf(stdout, "status        %s after %d iterations (%d CG steps), %.3f s\n", out.Status, out.Iterations, out.CGSteps, out.Seconds)
	}
	fmt.Fprintf(stdout, "sensitivity   %.12g (sens² %.12g, exact %v)\n", out.Sensitivity, out.SensitivitySquared, out.SensitivityExact)
	fmt.Fprintf(stdout, "objective     %.12g   total squared error per unit σ²: tr(V X⁻¹)·sens²\n", out.Objective)
	if out.Checked == "" && out.Loss == 0 {
		fmt.Fprintf(stdout, "lower bound   %.12g   certified: no strategy in the schema's feasible set does better\n", out.LowerBound)
		fmt.Fprintf(stdout, "gap           %.3g\n", out.Gap)
	}
	if out.MaxError > 0 {
		fmt.Fprintf(stdout, "per step      mean %.6g, max %.6g, RMSE %.6g (per unit σ²)\n", out.MeanError, out.MaxError, out.RMSE)
	}
	if out.Loss > 0 {
		fmt.Fprintf(stdout, "family        %s", out.Family)
		if out.Buffers > 0 {
			fmt.Fprintf(stdout, ", %d buffers", out.Buffers)
		}
		if out.Bands > 0 {
			fmt.Fprintf(stdout, ", %d bands", out.Bands)
		}
		fmt.Fprintf(stdout, ", %.3f s\n", out.Seconds)
		fmt.Fprintf(stdout, "loss          %.6g   mean per-step squared error × sens² (max %.6g)\n", out.Loss, out.MaxLoss)
		fmt.Fprintf(stdout, "bound         %.6g   no mechanism under the schema does better (%s); ratio %.4f\n", out.BoundMean, out.BoundSource, out.Ratio)
		fmt.Fprintf(stdout, "independent   %.6g   loss of independent noise (C = I); the plan's RMSE is %.2f× lower at the same privacy\n", out.IndependentLoss, out.RMSEGain)
	}
	if out.Sigma > 0 {
		fmt.Fprintf(stdout, "noise         σ = %.6g for (ε, δ) = (%g, %g); ρ-zCDP ρ = %.6g\n", out.Sigma, out.Budget.Epsilon(), out.Budget.Delta(), out.ZCDP.Rho())
	}
	return nil
}

// writeMFDir writes C.npy, bands.npy (banded) and report.json into the
// reserved output's temporary directory and commits it (internal/atomicdir),
// so an interrupted run leaves either the old directory or the complete new
// one.
//
// A structured family has no res: extra writes its files (blt.json,
// toeplitz.json) into the temporary directory instead of C.npy.
func writeMFDir(ctx context.Context, d *atomicdir.Dir, res *mf.Result, s mf.Schema, rep mfJSON, extra func(tmp string) error) error {
	tmp := d.Temp()
	if extra != nil {
		if err := extra(tmp); err != nil {
			return err
		}
	}
	if res != nil {
		if err := matio.WriteMatrix(filepath.Join(tmp, "C.npy"), res.C); err != nil {
			return err
		}
	}
	if res != nil && s.Kind == mf.MinSep {
		if err := matio.WriteMatrix(filepath.Join(tmp, "bands.npy"), mf.Bands(res.C, rep.Bands)); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "report.json"), append(data, '\n'), 0o666); err != nil {
		return err
	}
	return d.Commit(func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: nothing written: %w", err)
		}
		return nil
	})
}

// isMFDir recognizes an earlier dpsolve mf output, which mf --out may
// replace.
func isMFDir(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, "report.json"))
	return err == nil && fi.Mode().IsRegular()
}

// runMFBench is dpsolve bench --mf: dpsolve's certified DP-MF solves and,
// with --peers, the L-BFGS peer at both stopping rules, in one run.
func runMFBench(ctx context.Context, spec string, peers bool, python string, budget time.Duration, md string, stdout, stderr io.Writer) error {
	cases, err := bench.ParseMFCases(spec)
	if err != nil {
		return usageErrorf("--mf: %v", err)
	}
	for _, c := range cases {
		if c.Structured() {
			continue // O(n) memory
		}
		if err := checkSizeMemory("bench", c.N, 0, memMF, false); err != nil {
			return err
		}
	}
	b := &bench.MFBench{MaxSeconds: budget.Seconds(), Log: stderr}
	if peers {
		b.Python = python
	}
	rows, err := b.Run(ctx, cases)
	if err != nil {
		return err
	}
	if md != "" {
		if err := writeFileAtomic(md, func(w io.Writer) error { return bench.WriteMFMarkdown(w, rows) }); err != nil {
			return err
		}
	}
	return bench.WriteMFMarkdown(stdout, rows)
}
