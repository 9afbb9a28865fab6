package main

// dpsolve compare: one workload, one privacy budget, one row per strategy
// with its expected error (mechanism/compare computes them; its registry
// holds the rows). See runCompare for the flags.

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/dpsolve/dpsolve/mechanism/compare"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/accounting"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

func init() {
	register(&command{
		name:    "compare",
		summary: "compare the expected error of strategies (identity, H2, wavelet, optimized, ...) on a workload",
		run:     runCompare,
	})
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
	Workload  string `json:"workload"`
	N         int    `json:"n"`
	M         int    `json:"m"`
	Mechanism string `json:"mechanism"`
	// Budget is the noise's budget, written after mechanism (MarshalJSON).
	Budget             calibrate.Budget `json:"-"`
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

// compareFlags are dpsolve compare's parsed flags.
type compareFlags struct {
	wf              workloadFlags
	m               int
	mech, cal, list string
	eps, delta, tol float64
	asCSV, asJSON   bool
	quiet           bool
	outW            string
}

func (f *compareFlags) register(fs *flag.FlagSet) {
	f.wf.register(fs)
	fs.IntVar(&f.m, "m", 0, "number of queries of the workload given by --gram (needed for per-query RMSE)")
	fs.StringVar(&f.mech, "mechanism", calibrate.MechanismName(calibrate.Approx), "noise: "+calibrate.MechanismUsage(compareMechanisms...))
	fs.Float64Var(&f.eps, "eps", 1, "privacy parameter ε > 0")
	fs.Float64Var(&f.delta, "delta", 1e-6, "privacy parameter δ in (0,1) (Gaussian only)")
	fs.StringVar(&f.cal, "calibration", "analytic", "Gaussian σ: analytic (Balle & Wang 2018) or classic (√(2 ln(1.25/δ))/ε, ε < 1)")
	fs.StringVar(&f.list, "strategies", "", "comma-separated rows (default: all registered defaults); hB for a B-ary tree")
	fs.Float64Var(&f.tol, "tol", 1e-8, "certified relative gap for the optimized strategy")
	fs.BoolVar(&f.asCSV, "csv", false, "print CSV on stdout")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object on stdout")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&f.outW, "out-w", "", outWUsage)
}

// compareMechanisms are the privacy definitions compare's --mechanism
// offers: its rows are costed under (ε,δ)-DP or pure ε-DP.
var compareMechanisms = []calibrate.Kind{calibrate.Pure, calibrate.Approx}

// check validates the flags that need no file and returns the calibrated
// noise at unit sensitivity.
func (f *compareFlags) check() (accounting.Noise, error) {
	if f.asCSV && f.asJSON {
		return accounting.Noise{}, usageErrorf("give at most one of --csv and --json")
	}
	if !(f.tol > 0) {
		return accounting.Noise{}, usageErrorf("--tol must be positive, got %g", f.tol)
	}
	mech, kind, err := mechanismFlag(f.mech, compareMechanisms...)
	if err != nil {
		return accounting.Noise{}, err
	}
	f.mech = string(mech)
	if err := checkPrivacyFlags(kind, f.eps, f.delta, 0); err != nil {
		return accounting.Noise{}, err
	}
	return compareNoise(mech, f.eps, f.delta, f.cal)
}

// compareNoise calibrates the noise of --mechanism at unit sensitivity.
func compareNoise(mech calibrate.NoiseKind, eps, delta float64, cal string) (accounting.Noise, error) {
	var noise accounting.Noise
	var err error
	if mech == calibrate.Gaussian {
		noise, err = accounting.GaussianNoise(eps, delta, accounting.Calibration(cal))
	} else {
		noise, err = accounting.LaplaceNoise(eps)
	}
	if err != nil {
		return noise, usageErrorf("%v", err)
	}
	return noise, nil
}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	var f compareFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dpsolve compare (--workload SPEC --n N | --w FILE | --gram FILE --m M) [--mechanism "+strings.Join(calibrate.MechanismValues(compareMechanisms...), "|")+"] [--eps 1 --delta 1e-6] [--csv|--json]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nstrategies:")
		for _, c := range compare.Registered() {
			fmt.Fprintf(stderr, "  %-10s %s\n", c.Name, c.Summary)
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// The order of the checks is the order of their messages: cheap flag
	// checks, then the files, then the workload itself.
	noise, err := f.check()
	if err != nil {
		return err
	}
	wf := &f.wf
	if err := preflight("compare", []string{wf.gram, wf.wfile, wf.specFile}, wf.source(), memCompare, false, false, matOut("--out-w", f.outW)); err != nil {
		return err
	}
	w, err := loadCompareWorkload(wf, f.m)
	if err != nil {
		return err
	}
	if err := checkSizeMemory("compare", w.Domain(), w.Queries(), memCompare, false); err != nil {
		return err
	}
	rows, err := selectCompareRows(f.list)
	if err != nil {
		return err
	}
	progress := stderr
	if f.quiet {
		progress = io.Discard
	}
	env := &compare.Env{Ctx: ctx, Workload: w, Noise: noise, Tol: f.tol, Log: progress, Progress: progressTo(stderr, "compare", f.quiet)}
	// An interrupted comparison returns at once and writes nothing.
	res, err := untilCancelled(ctx, func() (*compare.Result, error) { return compare.Run(env, rows) })
	if err != nil {
		return err
	}
	out := newCompareResult(res)
	if err := writeOutW(f.outW, w); err != nil {
		return err
	}
	var werr error
	switch {
	case f.asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		werr = enc.Encode(out)
	case f.asCSV:
		werr = out.writeCSV(stdout)
	default:
		werr = out.writeTable(stdout)
	}
	if werr != nil {
		return werr
	}
	return res.Err()
}

// selectCompareRows resolves --strategies (empty: the registered defaults);
// a name given twice yields one row.
func selectCompareRows(list string) ([]compare.Candidate, error) {
	if strings.TrimSpace(list) == "" {
		return compare.Defaults(), nil
	}
	var rows []compare.Candidate
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			return nil, usageErrorf("--strategies %q has an empty entry", list)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		c, ok := compare.Lookup(name)
		if !ok {
			var names []string
			for _, c := range compare.Registered() {
				names = append(names, c.Name)
			}
			return nil, usageErrorf("unknown strategy %q (want %s, or hB for a B-ary tree)", name, strings.Join(names, ", "))
		}
		rows = append(rows, c)
	}
	return rows, nil
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

// MarshalJSON writes the result with its budget in calibrate's encoding
// after the mechanism key.
func (o compareJSON) MarshalJSON() ([]byte, error) {
	type plain compareJSON // without this method
	return calibrate.MarshalInline(plain(o), "mechanism", o.Budget)
}

// newCompareResult is the one result of dpsolve compare: the JSON object,
// which the table and the CSV render too. Undefined numbers become absent
// fields (nil), which the table and the CSV show as empty cells.
func newCompareResult(res *compare.Result) *compareJSON {
	w, nz, b := res.Workload, res.Noise, res.Bound
	o := &compareJSON{
		Workload: w.Name(), N: w.Domain(), M: w.Queries(), Mechanism: string(nz.Mechanism),
		Budget: nz.Budget, Calibration: string(nz.Calibration), NoiseScale: nz.Scale,
		Rows:         []compareRowJSON{},
		SVDBoundRMSE: b.RMSE, SVDBoundTotalError: b.TotalError, SVDBoundUnitRMSE: b.UnitRMSE,
	}
	for _, r := range res.Rows {
		j := compareRowJSON{Strategy: r.Strategy, Seconds: r.Seconds, Note: r.Note}
		if r.Err != nil {
			j.Error = r.Err.Error()
		} else {
			j.RMSE, j.TotalError, j.UnitRMSE = compareNum(r.Report.RMSE), compareNum(r.Report.TotalError), compareNum(r.Report.UnitRMSE)
			j.RatioSVD, j.RatioOptimized = compareNum(r.RatioSVD), compareNum(r.RatioReference)
			j.Measurements = r.Report.Rows
			j.L2Sensitivity, j.L1Sensitivity = compareNum(r.Report.L2Sensitivity), compareNum(r.Report.L1Sensitivity)
		}
		o.Rows = append(o.Rows, j)
	}
	return o
}

// noiseText is the table's noise line, as compare.DescribeNoise words it.
func (o *compareJSON) noiseText() string {
	return compare.DescribeNoise(accounting.Noise{Budget: o.Budget, Mechanism: calibrate.NoiseKind(o.Mechanism),
		Calibration: accounting.Calibration(o.Calibration), Scale: o.NoiseScale})
}

// compareCell formats a number for the table and CSV ("" when undefined).
func compareCell(x *float64, format string) string {
	if x == nil {
		return ""
	}
	return fmt.Sprintf(format, *x)
}

func (o *compareJSON) writeCSV(stdout io.Writer) error {
	cw := csv.NewWriter(stdout)
	_ = cw.Write([]string{"strategy", "rmse", "total_error", "unit_rmse", "ratio_svd", "ratio_optimized", "seconds", "note", "error"})
	g := func(x *float64) string { return compareCell(x, "%.10g") }
	for _, r := range o.Rows {
		if r.Error != "" {
			_ = cw.Write([]string{r.Strategy, "", "", "", "", "", g(&r.Seconds), r.Note, r.Error})
			continue
		}
		_ = cw.Write([]string{r.Strategy, g(r.RMSE), g(r.TotalError), g(r.UnitRMSE),
			g(r.RatioSVD), g(r.RatioOptimized), g(&r.Seconds), r.Note, ""})
	}
	_ = cw.Write([]string{"svd_bound", g(compareNum(o.SVDBoundRMSE)), g(compareNum(o.SVDBoundTotalError)), g(compareNum(o.SVDBoundUnitRMSE)), "1", "", "", "lower bound for every strategy", ""})
	cw.Flush()
	return cw.Error()
}

func (o *compareJSON) writeTable(stdout io.Writer) error {
	fmt.Fprintf(stdout, "workload  %s: n = %d, m = %d\n", o.Workload, o.N, o.M)
	fmt.Fprintf(stdout, "noise     %s\n\n", o.noiseText())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "strategy\tRMSE\ttotal error\t× SVD bound\t%s\tunit RMSE\tseconds\t\n", compareReferenceHeader(calibrate.NoiseKind(o.Mechanism)))
	for _, r := range o.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t%.2f\t\n", r.Strategy, "error", r.Seconds)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t\n", r.Strategy,
			compareCell(r.RMSE, "%.4f"), compareCell(r.TotalError, "%.6g"),
			compareCell(r.RatioSVD, "%.3f"), compareCell(r.RatioOptimized, "%.3f"),
			compareCell(r.UnitRMSE, "%.4f"), r.Seconds)
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\t%s\t\t\n", "SVD bound", compareCell(compareNum(o.SVDBoundRMSE), "%.4f"),
		compareCell(compareNum(o.SVDBoundTotalError), "%.6g"), "1", compareCell(compareNum(o.SVDBoundUnitRMSE), "%.4f"))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range o.Rows {
		switch {
		case r.Error != "":
			fmt.Fprintf(stdout, "\n%s: %s", r.Strategy, r.Error)
		case r.Note != "":
			fmt.Fprintf(stdout, "\n%s: %s", r.Strategy, r.Note)
		}
	}
	fmt.Fprintln(stdout)
	return nil
}
