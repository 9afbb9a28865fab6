package main

// dpsolve compare: one workload, one privacy budget, one row per strategy
// with its expected error. See runCompare for the flags.
//
// # Extension point
//
// Rows come from a registry of strategy builders. Another file of this
// package adds a row by calling registerCompareStrategy from its init:
//
//	func init() {
//		registerCompareStrategy(compareStrategy{
//			Name:    "lrm",
//			Summary: "Low-Rank Mechanism (W ≈ B·L)",
//			Default: true,
//			Build: func(env *compareEnv) (*compareOutcome, error) {
//				// env.Workload, env.Gram, env.Noise (mechanism, ε, δ,
//				// unit scale), env.Ctx, env.Stderr are available.
//				if env.Noise.Mechanism != accounting.Laplace {
//					return nil, errCompareSkip // not applicable: no row
//				}
//				...
//				rep, err := accounting.NewReport("lrm", n, m, totalError)
//				return &compareOutcome{Report: rep}, err
//			},
//		})
//	}
//
// A builder returns either a matrix-mechanism strategy (compareOutcome.
// Strategy: compare computes its error with accounting.Evaluate under
// env.Noise, Gaussian or Laplace) or a finished accounting.Report (for
// mechanisms whose reconstruction is not least squares, such as the Low-Rank
// Mechanism). The time the builder takes is the row's "seconds". Rows appear
// in registration order (files initialize in file-name order, so
// compare_lrm.go's rows follow these). --mechanism laplace selects ε-DP
// Laplace noise for every row.

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/accounting"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/mechanism/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/progress"
)

func init() {
	register(&command{
		name:    "compare",
		summary: "compare the expected error of strategies (identity, H2, wavelet, optimized, ...) on a workload",
		run:     runCompare,
	})
	// The matrix-mechanism baselines are mechanism/strategy's registry; this
	// file only adds the optimizer's note. Other files add rows (lrm).
	for _, b := range strategy.Baselines() {
		registerCompareStrategy(compareStrategy{Name: b.Name, Summary: b.Summary, Default: b.Default, Build: baselineBuilder(b)})
	}
}

// baselineBuilder wraps a registered strategy as a compare row.
func baselineBuilder(b strategy.Baseline) func(env *compareEnv) (*compareOutcome, error) {
	return func(env *compareEnv) (*compareOutcome, error) {
		s, err := b.Build(env.Ctx, env.Workload.Domain(), env.Gram, &newton.Options{Tol: env.Tol, Progress: env.Progress})
		if err != nil {
			return nil, err
		}
		oc := &compareOutcome{Strategy: s}
		if o, ok := s.(*strategy.Optimized); ok {
			r := o.Result
			oc.Note = fmt.Sprintf("%s after %d iterations, certified gap %.2g", r.Status, r.Iterations, r.Gap)
		}
		return oc, nil
	}
}

// compareEnv is what a strategy builder receives. Builders must not modify
// Gram.
type compareEnv struct {
	Ctx      context.Context
	Workload workload.Workload
	// Gram is V = WᵀW, computed once for all rows.
	Gram *mat.SymDense
	// Noise is the calibrated noise at unit sensitivity: Mechanism
	// (accounting.Gaussian or accounting.Laplace), Epsilon, Delta, Scale.
	Noise accounting.Noise
	// Tol is the certified relative gap asked of optimizers (--tol).
	Tol float64
	// Stderr takes human progress messages.
	Stderr io.Writer
	// Progress reports long computations (the optimizer, lrm) through
	// the command's one renderer; nil under --quiet.
	Progress progress.Func
}

// compareOutcome is a builder's result: exactly one of Strategy and Report.
type compareOutcome struct {
	// Strategy is a matrix-mechanism strategy; compare evaluates it.
	Strategy strategy.Strategy
	// Report is an error report the builder computed itself.
	Report *accounting.Report
	// Note is an optional remark shown in the table and the JSON.
	Note string
}

// compareStrategy is one registered row.
type compareStrategy struct {
	// Name is the row label and the --strategies key.
	Name string
	// Summary is shown by dpsolve compare -h.
	Summary string
	// Default selects the row when --strategies is not given.
	Default bool
	// Build constructs the strategy (or the finished report).
	Build func(env *compareEnv) (*compareOutcome, error)
}

// errCompareSkip, returned by a builder, omits its row (with a note on
// stderr), e.g. for a mechanism the strategy does not support.
var errCompareSkip = errors.New("not applicable")

var compareStrategies []compareStrategy

// registerCompareStrategy adds a row builder; it is called from init
// functions. Duplicate names panic (a programming error).
func registerCompareStrategy(s compareStrategy) {
	if s.Name == "" || s.Build == nil {
		panic("dpsolve: compare strategy needs a name and a builder")
	}
	for _, c := range compareStrategies {
		if c.Name == s.Name {
			panic("dpsolve: duplicate compare strategy " + s.Name)
		}
	}
	compareStrategies = append(compareStrategies, s)
}

// lookupCompareStrategy resolves a --strategies name: a registered row, or
// any name strategy.Lookup knows (hB for the B-ary tree).
func lookupCompareStrategy(name string) (compareStrategy, error) {
	for _, c := range compareStrategies {
		if c.Name == name {
			return c, nil
		}
	}
	b, err := strategy.Lookup(name)
	if err != nil {
		names := make([]string, 0, len(compareStrategies))
		for _, c := range compareStrategies {
			names = append(names, c.Name)
		}
		return compareStrategy{}, usageErrorf("unknown strategy %q (want %s, or hB for a B-ary tree)", name, strings.Join(names, ", "))
	}
	return compareStrategy{Name: b.Name, Summary: b.Summary, Build: baselineBuilder(b)}, nil
}

// compareRow is one strategy's line of output.
type compareRow struct {
	Strategy string
	Report   *accounting.Report // nil when Err is set
	Seconds  float64            // building time
	Note     string
	Err      error
	// RatioSVD and RatioOptimized are RMSE ratios (NaN when undefined).
	RatioSVD, RatioOptimized float64
}

// compareRowJSON is a row's JSON form; absent or undefined numbers are
// omitted rather than written as NaN (which JSON cannot represent).
type compareRowJSON struct {
	Strategy       string   `json:"strategy"`
	RMSE           *float64 `json:"rmse,omitempty"`
	TotalError     *float64 `json:"total_error,omitempty"`
	UnitRMSE       *float64 `json:"unit_rmse,omitempty"`
	RatioSVD       *float64 `json:"ratio_svd,omitempty"`
	RatioOptimized *float64 `json:"ratio_optimized,omitempty"`
	Seconds        float64  `json:"seconds"`
	Measurements   int      `json:"measurements,omitempty"`
	L2Sensitivity  *float64 `json:"l2_sensitivity,omitempty"`
	L1Sensitivity  *float64 `json:"l1_sensitivity,omitempty"`
	Note           string   `json:"note,omitempty"`
	Error          string   `json:"error,omitempty"`
}

// compareJSON is the --json output.
type compareJSON struct {
	Workload           string           `json:"workload"`
	N                  int              `json:"n"`
	M                  int              `json:"m"`
	Mechanism          string           `json:"mechanism"`
	Epsilon            float64          `json:"epsilon"`
	Delta              *float64         `json:"delta,omitempty"`
	Calibration        string           `json:"calibration,omitempty"`
	NoiseScale         float64          `json:"noise_scale"`
	Rows               []compareRowJSON `json:"rows"`
	SVDBoundRMSE       float64          `json:"svd_bound_rmse"`
	SVDBoundTotalError float64          `json:"svd_bound_total_error"`
	SVDBoundUnitRMSE   float64          `json:"svd_bound_unit_rmse"`
}

func compareNum(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	var wf workloadFlags
	wf.register(fs)
	m := fs.Int("m", 0, "number of queries of the workload given by --gram (needed for per-query RMSE)")
	mech := fs.String("mechanism", "gaussian", "noise: gaussian ((ε,δ)-DP, L2 sensitivity) or laplace (ε-DP, L1 sensitivity)")
	eps := fs.Float64("eps", 1, "privacy parameter ε > 0")
	delta := fs.Float64("delta", 1e-6, "privacy parameter δ in (0,1) (Gaussian only)")
	cal := fs.String("calibration", "analytic", "Gaussian σ: analytic (Balle & Wang 2018) or classic (√(2 ln(1.25/δ))/ε, ε < 1)")
	list := fs.String("strategies", "", "comma-separated rows (default: all registered defaults); hB for a B-ary tree")
	tol := fs.Float64("tol", 1e-8, "certified relative gap for the optimized strategy")
	asCSV := fs.Bool("csv", false, "print CSV on stdout")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	outW := registerOutW(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dpsolve compare (--workload SPEC --n N | --w FILE | --gram FILE --m M) [--mechanism gaussian|laplace] [--eps 1 --delta 1e-6] [--csv|--json]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nstrategies:")
		for _, c := range compareStrategies {
			fmt.Fprintf(stderr, "  %-10s %s\n", c.Name, c.Summary)
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asCSV && *asJSON {
		return usageErrorf("give at most one of --csv and --json")
	}
	if !(*tol > 0) {
		return usageErrorf("--tol must be positive, got %g", *tol)
	}
	if err := checkPrivacyFlags(*mech, *eps, *delta, 0); err != nil {
		return err
	}
	if err := preflight("compare", []string{wf.gram, wf.wfile, wf.specFile}, wf.source(), memCompare, false, false, matOut("--out-w", *outW)); err != nil {
		return err
	}
	var noise accounting.Noise
	var err error
	switch *mech {
	case "gaussian":
		noise, err = accounting.GaussianNoise(*eps, *delta, accounting.Calibration(*cal))
	case "laplace":
		noise, err = accounting.LaplaceNoise(*eps)
	default:
		return usageErrorf("--mechanism must be gaussian or laplace, got %q", *mech)
	}
	if err != nil {
		return usageErrorf("%v", err)
	}
	w, err := loadCompareWorkload(&wf, *m)
	if err != nil {
		return err
	}
	if err := checkSizeMemory("compare", w.Domain(), w.Queries(), memCompare, false); err != nil {
		return err
	}
	var rows []compareStrategy
	if strings.TrimSpace(*list) == "" {
		for _, c := range compareStrategies {
			if c.Default {
				rows = append(rows, c)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, name := range strings.Split(*list, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				return usageErrorf("--strategies %q has an empty entry", *list)
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			c, err := lookupCompareStrategy(name)
			if err != nil {
				return err
			}
			rows = append(rows, c)
		}
	}
	progress := stderr
	if *quiet {
		progress = io.Discard
	}

	t0 := time.Now()
	v := w.Gram()
	n, nq := w.Domain(), w.Queries()
	fmt.Fprintf(progress, "dpsolve compare: %s, n = %d, m = %d, %s (%.2fs for the Gram)\n", w.Name(), n, nq, describeNoise(noise), time.Since(t0).Seconds())
	t0 = time.Now()
	bound, err := accounting.LowerBound(v, nq, noise)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "  SVD bound: RMSE %.6g (%.2fs)\n", bound.RMSE, time.Since(t0).Seconds())

	env := &compareEnv{Ctx: ctx, Workload: w, Gram: v, Noise: noise, Tol: *tol, Stderr: progress, Progress: progressTo(stderr, "compare", *quiet)}
	var out []compareRow
	for _, c := range rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		row := compareRow{Strategy: c.Name, RatioSVD: math.NaN(), RatioOptimized: math.NaN()}
		start := time.Now()
		oc, err := untilCancelled(ctx, func() (*compareOutcome, error) { return c.Build(env) })
		if interrupted(ctx, err) {
			return errCancelled(ctx)
		}
		row.Seconds = time.Since(start).Seconds()
		switch {
		case errors.Is(err, errCompareSkip):
			fmt.Fprintf(progress, "  %s: skipped (%v)\n", c.Name, err)
			continue
		case err != nil:
			row.Err = err
		case oc == nil || (oc.Strategy == nil) == (oc.Report == nil):
			row.Err = fmt.Errorf("builder returned neither a strategy nor a report (or both)")
		case oc.Report != nil:
			row.Report, row.Note = oc.Report, oc.Note
		default:
			row.Note = oc.Note
			row.Report, row.Err = accounting.Evaluate(v, nq, oc.Strategy, noise)
		}
		if row.Err != nil {
			fmt.Fprintf(progress, "  %s: %v\n", c.Name, row.Err)
		} else {
			row.RatioSVD = row.Report.RMSE / bound.RMSE
			fmt.Fprintf(progress, "  %s: RMSE %.6g (built in %.2fs)\n", c.Name, row.Report.RMSE, row.Seconds)
		}
		out = append(out, row)
	}
	if err := ctx.Err(); err != nil {
		return errCancelled(ctx)
	}
	setCompareReference(out, noise)
	if err := writeOutW(*outW, w); err != nil {
		return err
	}
	var werr error
	switch {
	case *asJSON:
		werr = writeCompareJSON(stdout, w, noise, bound, out)
	case *asCSV:
		werr = writeCompareCSV(stdout, bound, out)
	default:
		werr = writeCompareTable(stdout, w, noise, bound, out)
	}
	if werr != nil {
		return werr
	}
	return compareRowsError(out)
}

// loadCompareWorkload builds the workload from the shared workload flags
// (--workload/--n, --w, or --gram with --m).
func loadCompareWorkload(wf *workloadFlags, m int) (workload.Workload, error) {
	if wf.gram != "" && m <= 0 && wf.spec == "" && wf.wfile == "" && wf.specFile == "" {
		return nil, usageErrorf("--gram needs --m, the number of queries (positive), got %d", m)
	}
	src := wf.source()
	src.Queries = m
	return loadWorkload(src)
}

func describeNoise(nz accounting.Noise) string {
	if nz.Mechanism == accounting.Laplace {
		return fmt.Sprintf("Laplace, ε = %g (ε-DP), scale %.6g per unit L1 sensitivity", nz.Epsilon, nz.Scale)
	}
	return fmt.Sprintf("Gaussian, ε = %g, δ = %g (%s), σ = %.6g per unit L2 sensitivity", nz.Epsilon, nz.Delta, nz.Calibration, nz.Scale)
}

func writeCompareJSON(stdout io.Writer, w workload.Workload, nz accounting.Noise, b *accounting.Bound, rows []compareRow) error {
	o := compareJSON{
		Workload: w.Name(), N: w.Domain(), M: w.Queries(), Mechanism: string(nz.Mechanism),
		Epsilon: nz.Epsilon, Calibration: string(nz.Calibration), NoiseScale: nz.Scale,
		Rows:         []compareRowJSON{},
		SVDBoundRMSE: b.RMSE, SVDBoundTotalError: b.TotalError, SVDBoundUnitRMSE: b.UnitRMSE,
	}
	if nz.Mechanism == accounting.Gaussian {
		o.Delta = compareNum(nz.Delta)
	}
	for _, r := range rows {
		j := compareRowJSON{Strategy: r.Strategy, Seconds: r.Seconds, Note: r.Note}
		if r.Err != nil {
			j.Error = r.Err.Error()
		} else {
			j.RMSE, j.TotalError, j.UnitRMSE = compareNum(r.Report.RMSE), compareNum(r.Report.TotalError), compareNum(r.Report.UnitRMSE)
			j.RatioSVD, j.RatioOptimized = compareNum(r.RatioSVD), compareNum(r.RatioOptimized)
			j.Measurements = r.Report.Rows
			j.L2Sensitivity, j.L1Sensitivity = compareNum(r.Report.L2Sensitivity), compareNum(r.Report.L1Sensitivity)
		}
		o.Rows = append(o.Rows, j)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(o)
}

// compareCell formats a number for the table and CSV ("" when undefined).
func compareCell(x float64, format string) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return fmt.Sprintf(format, x)
}

func writeCompareCSV(stdout io.Writer, b *accounting.Bound, rows []compareRow) error {
	cw := csv.NewWriter(stdout)
	_ = cw.Write([]string{"strategy", "rmse", "total_error", "unit_rmse", "ratio_svd", "ratio_optimized", "seconds", "note", "error"})
	g := func(x float64) string { return compareCell(x, "%.10g") }
	for _, r := range rows {
		if r.Err != nil {
			_ = cw.Write([]string{r.Strategy, "", "", "", "", "", g(r.Seconds), r.Note, r.Err.Error()})
			continue
		}
		_ = cw.Write([]string{r.Strategy, g(r.Report.RMSE), g(r.Report.TotalError), g(r.Report.UnitRMSE),
			g(r.RatioSVD), g(r.RatioOptimized), g(r.Seconds), r.Note, ""})
	}
	_ = cw.Write([]string{"svd_bound", g(b.RMSE), g(b.TotalError), g(b.UnitRMSE), "1", "", "", "lower bound for every strategy", ""})
	cw.Flush()
	return cw.Error()
}

func writeCompareTable(stdout io.Writer, w workload.Workload, nz accounting.Noise, b *accounting.Bound, rows []compareRow) error {
	fmt.Fprintf(stdout, "workload  %s: n = %d, m = %d\n", w.Name(), w.Domain(), w.Queries())
	fmt.Fprintf(stdout, "noise     %s\n\n", describeNoise(nz))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "strategy\tRMSE\ttotal error\t× SVD bound\t%s\tunit RMSE\tseconds\t\n", compareReferenceHeader(nz))
	for _, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t%.2f\t\n", r.Strategy, "error", r.Seconds)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t\n", r.Strategy,
			compareCell(r.Report.RMSE, "%.4f"), compareCell(r.Report.TotalError, "%.6g"),
			compareCell(r.RatioSVD, "%.3f"), compareCell(r.RatioOptimized, "%.3f"),
			compareCell(r.Report.UnitRMSE, "%.4f"), r.Seconds)
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\t%s\t\t\n", "SVD bound", compareCell(b.RMSE, "%.4f"), compareCell(b.TotalError, "%.6g"), "1", compareCell(b.UnitRMSE, "%.4f"))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		switch {
		case r.Err != nil:
			fmt.Fprintf(stdout, "\n%s: %v", r.Strategy, r.Err)
		case r.Note != "":
			fmt.Fprintf(stdout, "\n%s: %s", r.Strategy, r.Note)
		}
	}
	fmt.Fprintln(stdout)
	return nil
}
