package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func init() {
	register(&command{
		name:    "answer",
		summary: "privately answer a workload from a strategy and a histogram (secure noise)",
		run:     runAnswer,
	})
}

// releaseFlags are the flags shared by dpsolve answer and dpsolve run: the
// data, the workload to answer, the budget, the outputs.
type releaseFlags struct {
	data       string
	spec       string
	wfile      string
	specFile   string
	mechanism  string
	eps, delta float64
	rho        float64
	out        string
	outXhat    string
	clamp      bool
	round      bool
	seed       string
	asJSON     bool
	// allowFractional accepts non-integer cells (inputs.go, checkCounts).
	allowFractional bool
	// budgetFile and label: the ledger charged before the noise, as
	// dpsolve release's.
	budgetFile, label string
}

func (f *releaseFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "histogram x: non-negative counts, .npy (int or float) or .csv")
	fs.StringVar(&f.spec, "workload", "", "workload to answer: identity, total, prefix, allrange, width:k=K, wrange:m=M, … (n is the data length)")
	fs.StringVar(&f.wfile, "w", "", "workload matrix W (m×n) from a .npy or .csv file, instead of --workload")
	registerSpecFile(fs, &f.specFile)
	fs.StringVar(&f.mechanism, "mechanism", calibrate.MechanismName(calibrate.Approx), "noise: "+calibrate.MechanismUsage())
	fs.Float64Var(&f.eps, "eps", 0, "ε > 0 ("+calibrate.MechanismNames(calibrate.Pure, calibrate.Approx)+")")
	fs.Float64Var(&f.delta, "delta", 0, "δ in (0,1) ("+calibrate.MechanismName(calibrate.Approx)+" only)")
	fs.Float64Var(&f.rho, "rho", 0, "ρ > 0 ("+calibrate.MechanismName(calibrate.Concentrated)+" only)")
	fs.StringVar(&f.out, "out", "", "write the private workload answers to this .npy or .csv file (required)")
	fs.StringVar(&f.outXhat, "out-xhat", "", "also write the reconstructed histogram x̂ to this .npy or .csv file")
	fs.BoolVar(&f.clamp, "clamp", false, "post-process: set negative cells of x̂ to 0 before answering (biases the answers)")
	fs.BoolVar(&f.round, "round", false, "post-process: round x̂ to integers before answering (biases the answers)")
	fs.StringVar(&f.seed, "insecure-seed", "", "simulation only: draw noise from a seeded generator — the output is NOT private")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object on stdout")
	fs.BoolVar(&f.allowFractional, "allow-fractional", false, "accept non-integer cells; the guarantee then assumes one person changes one cell by at most 1")
	fs.StringVar(&f.budgetFile, "budget-file", "", "budget ledger (as dpsolve release's, e.g. from dpsolve ledger create): refuse before any noise when the release would exceed it; record it otherwise")
	fs.StringVar(&f.label, "label", "", "label of this release in the budget ledger (default: the --out path)")
}

// budget converts the privacy flags into a validated budget.
func (f *releaseFlags) budget() (calibrate.Budget, error) {
	_, k, err := mechanismFlag(f.mechanism)
	if err != nil {
		return calibrate.Budget{}, err
	}
	if err := checkPrivacyFlags(k, f.eps, f.delta, f.rho); err != nil {
		return calibrate.Budget{}, err
	}
	b, err := calibrate.New(k, f.eps, f.delta, f.rho)
	if err != nil {
		return b, usageErrorf("%v", err)
	}
	return b, nil
}

// describeBudget prints a budget with its --mechanism value, e.g.
// "gaussian(eps=1, delta=1e-06)", "laplace(eps=1)", "zcdp(rho=0.5)".
func describeBudget(b calibrate.Budget) string {
	mech := calibrate.MechanismName(b.Kind())
	switch b.Kind() {
	case calibrate.Pure:
		return fmt.Sprintf("%s(eps=%g)", mech, b.Epsilon())
	case calibrate.Concentrated:
		return fmt.Sprintf("%s(rho=%g)", mech, b.Rho())
	}
	return fmt.Sprintf("%s(eps=%g, delta=%g)", mech, b.Epsilon(), b.Delta())
}

// check validates the flags that do not need files.
func (f *releaseFlags) check() (calibrate.Budget, error) {
	if f.data == "" {
		return calibrate.Budget{}, usageErrorf("--data is required")
	}
	if f.out == "" {
		return calibrate.Budget{}, usageErrorf("--out is required")
	}
	if given := btoi(f.spec != "") + btoi(f.wfile != "") + btoi(f.specFile != ""); given != 1 {
		return calibrate.Budget{}, usageErrorf("give exactly one of --workload, --w and --spec")
	}
	if f.seed != "" {
		if _, err := strconv.ParseUint(f.seed, 10, 64); err != nil {
			return calibrate.Budget{}, usageErrorf("--insecure-seed must be a non-negative integer, got %q", f.seed)
		}
	}
	return f.budget()
}

// loadData reads and validates the histogram.
func (f *releaseFlags) loadData() ([]float64, error) {
	x, err := matio.ReadVector(f.data)
	if err != nil {
		return nil, err
	}
	if err := release.CheckData(x, len(x)); err != nil {
		return nil, fmt.Errorf("%s: %w", f.data, err)
	}
	return x, nil
}

// loadWorkload builds the workload to answer over n cells (the data's).
func (f *releaseFlags) loadWorkload(n int) (workload.Workload, error) {
	w, err := loadWorkload(f.source(n))
	if err != nil {
		return nil, err
	}
	if w.Domain() != n {
		return nil, fmt.Errorf("workload %s has domain %d but the data has %d cells", w.Name(), w.Domain(), n)
	}
	return w, nil
}

// source is the workload the flags describe, over n cells (the data's; a
// built-in workload takes its n from them, a file or spec knows its own).
func (f *releaseFlags) source(n int) workload.Source {
	if f.spec != "" {
		return workload.Source{Spec: f.spec, N: n}
	}
	return workload.Source{WFile: f.wfile, SpecFile: f.specFile}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// noiseSource returns the noise source the flags ask for and, for the
// seeded one, the warning printed just before its first draw.
func (f *releaseFlags) noiseSource() (src *noise.Sampler, warning string) {
	if f.seed == "" {
		return noise.NewSecure(), ""
	}
	seed, _ := strconv.ParseUint(f.seed, 10, 64) // validated in check
	return noise.NewSeededInsecure(seed),
		fmt.Sprintf("WARNING: --insecure-seed %d: noise comes from a seeded generator; the output is NOT differentially private", seed)
}

// releaseJSON is the machine-readable output of dpsolve answer and run.
type releaseJSON struct {
	Mechanism string `json:"mechanism"`
	// Budget is the release's budget, written after mechanism (MarshalJSON).
	Budget             calibrate.Budget `json:"-"`
	Sigma              float64          `json:"sigma"`
	NoiseScale         float64          `json:"noise_scale"`
	Sensitivity        float64          `json:"sensitivity"`
	SensitivityNorm    string           `json:"sensitivity_norm"`
	SnappedSensitivity float64          `json:"snapped_sensitivity"`
	Grid               float64          `json:"grid"`
	ExpectedRMSE       float64          `json:"expected_rmse"`
	ExpectedMSE        float64          `json:"expected_mse"`
	ExpectedTotalSqErr float64          `json:"expected_total_squared_error"`
	Workload           string           `json:"workload"`
	Queries            int              `json:"queries"`
	N                  int              `json:"n"`
	StrategyRows       int              `json:"strategy_rows"`
	PostProcessing     string           `json:"post_processing"`
	Private            bool             `json:"private"`
	Out                string           `json:"out"`

	// dpsolve run only: the optimization.
	Objective    *float64 `json:"objective,omitempty"`
	Gap          *float64 `json:"gap,omitempty"`
	SolveStatus  string   `json:"solve_status,omitempty"`
	SolveSeconds *float64 `json:"solve_seconds,omitempty"`
}

// doRelease releases the answers of w on x through strategy a in one
// release transaction (publish.RunHistogram: every check and the outputs'
// reservation, then the noise, then the commit of --out and --out-xhat),
// and reports. extra (may be nil) adds fields to the result; *outcome is
// set to the transaction's outcome.
func doRelease(ctx context.Context, f *releaseFlags, b calibrate.Budget, a mat.Matrix, x []float64, w workload.Workload,
	stdout, stderr io.Writer, extra func(*releaseJSON), outcome *publish.Outcome) error {
	src, warning := f.noiseSource()
	req := publish.HistogramRequest{
		Release: release.Request{Strategy: a, Budget: b, Data: x, Workload: w, Noise: src,
			PostProcess: release.Cleanup{Clamp: f.clamp, Round: f.round}},
		Outputs: []publish.OutputFile{{Path: f.out, Write: vectorWriter(f.out, func(r *release.Result) []float64 { return r.Answers })}},
	}
	if f.budgetFile != "" {
		req.Ledger, req.Label = f.budgetFile, f.label
		req.Charged = func(st ledger.Status) {
			fmt.Fprintf(stderr, "dpsolve: charged %s to %s: %s of %s spent\n", chargeInUnit(b, &st.Limit), f.budgetFile, st.Spent, st.Limit)
		}
	}
	if f.outXhat != "" {
		req.Outputs = append(req.Outputs, publish.OutputFile{Path: f.outXhat, Write: vectorWriter(f.outXhat, func(r *release.Result) []float64 { return r.XHat })})
	}
	if warning != "" {
		req.Drawing = func() { fmt.Fprintln(stderr, warning) }
	}
	res, err := publish.RunHistogram(ctx, req)
	*outcome = res.Outcome
	switch res.Outcome {
	case publish.Released:
	case publish.ChargedNotReleased:
		return err
	default:
		var te *atomicdir.TargetError
		if errors.Is(err, publish.ErrOutput) && errors.As(err, &te) {
			flag := "--out"
			if te.Target == f.outXhat {
				flag = "--out-xhat"
			}
			return usageErrorf("%s %v", flag, te)
		}
		return preReleaseError(b, err)
	}
	out := newReleaseResult(f, b, res.Release, w, src.Private())
	if extra != nil {
		extra(out)
	}
	fmt.Fprintf(stderr, "dpsolve: released %d private answers of %s to %s (%s)\n", len(res.Release.Answers), w.Name(), f.out, describeBudget(b))
	return writeReport(stdout, f.asJSON, out)
}

// vectorWriter writes the vector v picks from the release in path's
// format (.npy or .csv; checked before the release).
func vectorWriter(path string, v func(*release.Result) []float64) func(io.Writer, *release.Result) error {
	return func(w io.Writer, r *release.Result) error {
		format, err := matio.FormatOf(path)
		if err != nil {
			return err
		}
		return matio.WriteVectorTo(w, v(r), format)
	}
}

// preReleaseError words release.Run's refusal of a budget too large for the
// data for the command line (the flag to lower); other errors pass as they are.
func preReleaseError(b calibrate.Budget, err error) error {
	var ge *release.GridError
	if errors.As(err, &ge) {
		return gridErrorText(ge, b)
	}
	return err
}

// postProcessing names the post-processing the flags ask for.
func (f *releaseFlags) postProcessing() string {
	switch {
	case f.clamp && f.round:
		return "clamp+round"
	case f.clamp:
		return "clamp"
	case f.round:
		return "round"
	}
	return "none"
}

// newReleaseResult is the one result of dpsolve answer and run that both
// the text and the --json renderings read.
func newReleaseResult(f *releaseFlags, b calibrate.Budget, res *release.Result, w workload.Workload, private bool) *releaseJSON {
	norm := fmt.Sprintf("L%d", b.Noise().Norm())
	m, exp := res.Mechanism, res.Expected
	return &releaseJSON{
		Mechanism: calibrate.MechanismName(b.Kind()), Budget: b,
		Sigma: m.Sigma(), NoiseScale: m.Scale(),
		Sensitivity: m.Sensitivity(), SensitivityNorm: norm,
		SnappedSensitivity: m.SnappedSensitivity(), Grid: m.Grid(),
		ExpectedRMSE: exp.RMSE, ExpectedMSE: exp.PerQuery, ExpectedTotalSqErr: exp.Total,
		Workload: w.Name(), Queries: w.Queries(), N: m.Domain(), StrategyRows: m.Rows(),
		PostProcessing: f.postProcessing(), Private: private, Out: f.out,
	}
}

// MarshalJSON writes the result with its budget in calibrate's encoding
// after the mechanism key.
func (o releaseJSON) MarshalJSON() ([]byte, error) {
	type plain releaseJSON // without this method
	return calibrate.MarshalInline(plain(o), "mechanism", o.Budget)
}

// writeText renders the result for a reader.
func (o *releaseJSON) writeText(w io.Writer) {
	fmt.Fprintf(w, "mechanism      %s, strategy %d×%d\n", describeBudget(o.Budget), o.StrategyRows, o.N)
	fmt.Fprintf(w, "sensitivity    %.6g (%s, largest column norm of A)\n", o.Sensitivity, o.SensitivityNorm)
	if o.Budget.Noise() == calibrate.Laplace {
		fmt.Fprintf(w, "sigma          %.6g (noise standard deviation; Laplace scale b = %.6g)\n", o.Sigma, o.NoiseScale)
	} else {
		fmt.Fprintf(w, "sigma          %.6g\n", o.Sigma)
	}
	fmt.Fprintf(w, "expected RMSE  %.6g per query (%s, %d queries; before post-processing)\n", o.ExpectedRMSE, o.Workload, o.Queries)
	fmt.Fprintf(w, "post-process   %s\n", o.PostProcessing)
	if !o.Private {
		fmt.Fprintf(w, "private        NO (seeded simulation noise)\n")
	}
	fmt.Fprintf(w, "answers        %s\n", o.Out)
}

// runAnswer runs dpsolve answer and, under dpsolve batch, writes its
// outcome record (recordOutcome).
func runAnswer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var outcome publish.Outcome
	err := answerCommand(ctx, args, stdout, stderr, &outcome)
	recordOutcome("answer", outcome, err, stderr)
	return err
}

func answerCommand(ctx context.Context, args []string, stdout, stderr io.Writer, outcome *publish.Outcome) error {
	fs := newFlagSet("answer", stderr)
	var f releaseFlags
	f.register(fs)
	strategyPath := fs.String("strategy", "", "strategy matrix A (p×n), .npy or .csv (required), e.g. from dpsolve solve --out-a")
	outW := registerOutW(fs)
	fs.Bool("quiet", false, "no progress on stderr (answer prints none; warnings and the release line remain)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *strategyPath == "" {
		return usageErrorf("--strategy is required")
	}
	b, err := f.check()
	if err != nil {
		return err
	}
	if err := checkOutputs([]string{f.data, f.wfile, f.specFile, *strategyPath}, matOut("--out", f.out), matOut("--out-xhat", f.outXhat), matOut("--out-w", *outW)); err != nil {
		return err
	}
	a, err := matio.ReadMatrix(*strategyPath)
	if err != nil {
		return err
	}
	x, err := f.loadData()
	if err != nil {
		return err
	}
	if err := checkCounts(x, f.data, f.allowFractional, stderr); err != nil {
		return err
	}
	if err := checkSpecMemory("answer", f.source(len(x)), memAnswer, false, true); err != nil {
		return err
	}
	if _, n := a.Dims(); n != len(x) {
		return fmt.Errorf("strategy %s has %d columns but the data %s has %d cells", *strategyPath, n, f.data, len(x))
	}
	w, err := f.loadWorkload(len(x))
	if err != nil {
		return err
	}
	warnLaplaceMismatch(a, w, b, stderr, false)
	if err := doRelease(ctx, &f, b, a, x, w, stdout, stderr, nil, outcome); err != nil {
		return err
	}
	return writeOutW(*outW, w) // after the answers: they matter more
}

// finite reports whether v is a finite float (for JSON-safe optional fields).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
