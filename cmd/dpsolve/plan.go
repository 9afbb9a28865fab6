package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

func init() {
	register(&command{
		name:    "plan",
		summary: "plan a strategy for a multi-attribute workload spec (Kronecker, union, dense, marginals)",
		run:     runPlan,
	})
}

// planJSON is the machine-readable output of dpsolve plan.
type planJSON struct {
	Spec             string      `json:"spec"`
	Cells            json.Number `json:"cells"` // exact, however large
	Queries          int         `json:"queries"`
	Template         string      `json:"template"`
	Privacy          string      `json:"privacy"`
	Objective        float64     `json:"objective"`
	LowerBound       *float64    `json:"lower_bound"`
	LowerBoundSource string      `json:"lower_bound_source,omitempty"`
	// AboveBound is (objective − lower_bound)/objective.
	AboveBound *float64 `json:"above_lower_bound"`
	// FamilyBound bounds every strategy of the template's own family
	// (FamilySource says which); null when none is known.
	FamilyBound  *float64 `json:"family_bound"`
	FamilySource string   `json:"family_bound_source,omitempty"`
	// Parts lists a union's parts: weight, terms and kind.
	Parts []planPartJSON `json:"parts,omitempty"`
	// Family is set for a marginals-family plan (any blocks).
	Family         *planFamilyJSON `json:"marginals_family,omitempty"`
	DenseObjective *float64        `json:"dense_objective"`
	AboveDense     *float64        `json:"above_dense"`
	Sweeps         int             `json:"sweeps"`
	Status         string          `json:"status"`
	Regularization float64         `json:"regularization"`
	Seconds        float64         `json:"seconds"`
	Templates      []planTriedJSON `json:"templates"`
	Terms          []planTermJSON  `json:"terms"`
	Out            string          `json:"out,omitempty"`
	// Marginals is set for the marginals template: its objective, largest
	// per-query variance, certificate and per-marginal variances.
	Marginals *planMarginalsJSON `json:"marginals,omitempty"`
	// PureMarginals is set for the marginals template under --privacy pure:
	// the measured tables' Laplace scales (at ε = 1) and the GLS variances.
	PureMarginals *planPureMarginalsJSON `json:"marginals_pure,omitempty"`

	// The text output's own wording of fields above (not in the JSON).
	cellsText  string  // Cells as bigCount prints it
	termCount  int     // the spec's number of terms
	aboveDense float64 // AboveDense also when not finite (then null in the JSON)
}

// planPureMarginalsJSON reports a pure marginals plan (per unit Laplace
// variance 2/ε² at L1 sensitivity 1).
type planPureMarginalsJSON struct {
	Objective   string                    `json:"objective"`
	MaxVariance float64                   `json:"max_variance"`
	DirectError float64                   `json:"direct_estimator_error"`
	Tables      []marginals.PureTableJSON `json:"tables"`
	Sets        []marginals.MarginalJSON  `json:"sets"`
}

// planMarginalsJSON reports a marginals plan (per unit noise at L2
// sensitivity 1).
type planMarginalsJSON struct {
	Objective   string                   `json:"objective"`
	MaxVariance float64                  `json:"max_variance"`
	LowerBound  float64                  `json:"lower_bound"`
	Gap         float64                  `json:"gap"`
	Residuals   int                      `json:"residual_subsets"`
	Iterations  int                      `json:"newton_steps"`
	Sets        []marginals.MarginalJSON `json:"sets"`

	moreSets int // marginals left out of Sets (the text output's cap)
}

// planTextRows caps the per-marginal and per-table lines of plan's text
// output, which then ends the list with a "… N more" line: all ≤3-way
// marginals of 100 attributes are 166,750 lines. --json and strategy.json
// list them all.
const planTextRows = 50

// planPartJSON is one part of a union plan; Kind is "kron" or the
// template of a hybrid part ("marginals").
type planPartJSON struct {
	Weight float64  `json:"weight"`
	Terms  []string `json:"terms"`
	Kind   string   `json:"kind"`
}

// planFamilyJSON reports a marginals-family plan.
type planFamilyJSON struct {
	Privacy      string                `json:"privacy"`
	LargestTable float64               `json:"largest_table_error"`
	FamilyBound  float64               `json:"family_bound"`
	Start        string                `json:"start,omitempty"`
	Iterations   int                   `json:"iterations"`
	Residuals    int                   `json:"residual_subsets,omitempty"`
	Tables       []planFamilyTableJSON `json:"tables,omitempty"`
}

type planFamilyTableJSON struct {
	Attributes []string `json:"attributes"`
	Weight     float64  `json:"weight"`
}

type planTriedJSON struct {
	Template  string   `json:"template"`
	Objective *float64 `json:"objective"`
	Seconds   float64  `json:"seconds"`
	Error     string   `json:"error,omitempty"`
}

type planTermJSON struct {
	Term    string  `json:"term"`
	Queries int     `json:"queries"`
	Error   float64 `json:"error"`
}

func maybe(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// planFlags are dpsolve plan's parsed and checked flags.
type planFlags struct {
	spec, template, privacy, outDir string
	objective                       marginals.Objective
	asJSON, quiet                   bool
	threads                         int
}

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parsePlanFlags(args, stderr)
	if err != nil {
		return err
	}
	w, err := domain.LoadSpec(f.spec, workload.Blocks)
	if err != nil {
		return err
	}
	blas.Current().SetThreads(f.threads)
	res, err := solvePlan(ctx, f, w, stderr)
	if err != nil {
		return err
	}
	if f.outDir != "" {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: nothing written: %w", err)
		}
		if err := writeStrategyDir(ctx, f.outDir, w, res); err != nil {
			return err
		}
	}
	out := planReport(f, w, res)
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return printPlan(stdout, out)
}

// parsePlanFlags parses and checks the flags before any file is read, so a
// usage error never costs a load.
func parsePlanFlags(args []string, stderr io.Writer) (planFlags, error) {
	fs := newFlagSet("plan", stderr)
	specPath := fs.String("spec", "", "workload spec file (JSON: domain and workload terms)")
	template := fs.String("template", "best", "template: "+strings.Join(planner.Names(), ", ")+" (best: the portfolio)")
	objective := fs.String("objective", "sum", "marginals template: sum (total squared error) or max (largest per-query variance)")
	privacy := fs.String("privacy", "gaussian", "gaussian ((ε,δ)-DP, L2 sensitivity) or pure (ε-DP, L1 sensitivity)")
	outDir := fs.String("out", "", "write DIR/strategy.json and the factor matrices (.npy) to this directory, atomically")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	threads := fs.Int("threads", 1, "kernel threads (per-attribute blocks are small: one thread is fastest, and much faster on a busy machine)")
	if err := parseFlags(fs, args); err != nil {
		return planFlags{}, err
	}
	f := planFlags{spec: *specPath, template: *template, privacy: *privacy, outDir: *outDir,
		asJSON: *asJSON, quiet: *quiet, threads: *threads}
	if f.threads < 1 {
		return f, usageErrorf("--threads must be positive, got %d", f.threads)
	}
	if f.spec == "" {
		return f, usageErrorf("--spec is required")
	}
	if err := checkPlanOut(f.outDir, f.spec); err != nil {
		return f, err
	}
	names := planner.Names()
	known := false
	for _, n := range names {
		known = known || n == f.template
	}
	if !known {
		return f, usageErrorf("--template must be one of %s, got %q", strings.Join(names, ", "), f.template)
	}
	if _, ok := planNoise(f.privacy); !ok {
		return f, usageErrorf("--privacy must be gaussian or pure, got %q", f.privacy)
	}
	mobj, err := marginals.ParseObjective(*objective)
	if err != nil {
		return f, usageErrorf("--objective must be sum or max, got %q", *objective)
	}
	if mobj != marginals.Sum && f.template != marginals.TemplateName {
		return f, usageErrorf("--objective %s needs --template %s", mobj, marginals.TemplateName)
	}
	f.objective = mobj
	return f, nil
}

// solvePlan runs the chosen template through tables.PlanStrategy, only
// among strategies with a file format when --out is given.
func solvePlan(ctx context.Context, f planFlags, w *domain.Kron, stderr io.Writer) (*plan.Result, error) {
	if !f.quiet {
		fmt.Fprintf(stderr, "dpsolve plan: %s: %d attributes, %s cells, %d terms, %d queries; template %s, privacy %s\n",
			f.spec, len(w.Attributes()), bigCount(w.CellCount()), len(w.Terms()), w.Queries(), f.template, f.privacy)
	}
	noise, _ := planNoise(f.privacy)
	// The solvers certify the point they stopped at even when cancelled
	// (an O(n³) step: 16 s at n = 2048); planning writes nothing, so an
	// interrupt abandons it and returns at once.
	res, err := untilCancelled(ctx, func() (*plan.Result, error) {
		return tables.PlanStrategy(ctx, tables.PlanRequest{
			Workload: w, Template: f.template, Objective: f.objective, Writable: f.outDir != "",
			Options: plan.Options{Noise: noise, Progress: progressTo(stderr, "plan", f.quiet)},
		})
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted: nothing written: %w", ctx.Err())
		}
		return nil, err
	}
	return res, nil
}

// planReport is the result both outputs are rendered from: --json prints
// it as is, the text output reads its rows from it.
func planReport(f planFlags, w *domain.Kron, res *plan.Result) planJSON {
	out := planJSON{
		Spec: f.spec, Cells: json.Number(w.CellCount().String()), Queries: w.Queries(), Template: res.Template, Privacy: f.privacy,
		Objective: res.Objective, LowerBound: maybe(res.LowerBound), LowerBoundSource: res.LowerBoundSource,
		AboveBound:  maybe((res.Objective - res.LowerBound) / res.Objective),
		FamilyBound: maybe(positive(res.FamilyBound)), FamilySource: res.FamilySource,
		DenseObjective: maybe(res.DenseObjective), AboveDense: maybe(res.AboveDense),
		Sweeps: res.Sweeps, Status: res.Status.String(), Regularization: res.Regularization, Seconds: res.Seconds, Out: f.outDir,
		cellsText: bigCount(w.CellCount()), termCount: len(w.Terms()), aboveDense: res.AboveDense,
	}
	tried := res.Tried
	if tried == nil {
		tried = []plan.Tried{{Template: res.Template, Objective: res.Objective, Seconds: res.Seconds}}
	}
	for _, t := range tried {
		out.Templates = append(out.Templates, planTriedJSON{Template: t.Template, Objective: maybe(t.Objective), Seconds: t.Seconds, Error: t.Err})
	}
	for _, t := range res.TermErrors {
		out.Terms = append(out.Terms, planTermJSON{Term: t.Term, Queries: t.Queries, Error: t.Error})
	}
	for _, p := range res.Strategy.Parts {
		kind := "kron"
		if p.Strategy != nil {
			kind = p.Strategy.Template
		}
		out.Parts = append(out.Parts, planPartJSON{Weight: p.Weight, Terms: p.Terms, Kind: kind})
	}
	if fp, ok := res.Strategy.Other.(*marginals.FamilyPlan); ok {
		out.Family = familyJSON(fp, attributeNames(w))
	}
	if mp, ok := res.Strategy.Other.(*marginals.Plan); ok {
		// Only the marginals' rows are reported (and only the first
		// planTextRows for the text output): StrategyFile of the plan
		// without its residuals.
		head := *mp
		head.Residuals = nil
		if !f.asJSON && len(head.Marginals) > planTextRows {
			head.Marginals = head.Marginals[:planTextRows]
		}
		sf := head.StrategyFile(attributeNames(w))
		out.Marginals = &planMarginalsJSON{Objective: string(mp.Objective), MaxVariance: mp.MaxVariance, LowerBound: mp.LowerBound,
			Gap: mp.Gap, Residuals: len(mp.Residuals), Iterations: mp.Iterations, Sets: sf.Marginals,
			moreSets: len(mp.Marginals) - len(sf.Marginals)}
	}
	if pp, ok := res.Strategy.Other.(*marginals.PurePlan); ok {
		sf := pp.StrategyFile(attributeNames(w))
		out.PureMarginals = &planPureMarginalsJSON{Objective: string(pp.Objective), MaxVariance: pp.MaxVariance,
			DirectError: pp.DirectValue, Tables: sf.Tables, Sets: sf.Marginals}
	}
	return out
}

// printPlan is the text output: the summary, then the rows of out.
func printPlan(w io.Writer, out planJSON) error {
	stdout := bufio.NewWriter(w)
	fmt.Fprintf(stdout, "spec          %s: %s cells, %d queries in %d terms\n", out.Spec, out.cellsText, out.Queries, out.termCount)
	fmt.Fprintf(stdout, "template      %s (%s), %s", out.Template, out.Privacy, out.Status)
	if out.Sweeps > 0 {
		fmt.Fprintf(stdout, " after %d sweeps", out.Sweeps)
	}
	fmt.Fprintf(stdout, ", %.3f s\n", out.Seconds)
	fmt.Fprintf(stdout, "objective     %.12g   expected total squared error per unit noise at sensitivity 1\n", out.Objective)
	if p := out.LowerBound; p != nil {
		fmt.Fprintf(stdout, "lower bound   %.12g   certified for every strategy (%s)\n", *p, out.LowerBoundSource)
	} else {
		fmt.Fprintf(stdout, "lower bound   none known\n")
	}
	if p := out.FamilyBound; p != nil {
		fmt.Fprintf(stdout, "family bound  %.12g   certified for the template's family only (%s); the plan is %.3g above it\n",
			*p, out.FamilySource, (out.Objective-*p)/out.Objective)
	}
	if p := out.DenseObjective; p != nil {
		fmt.Fprintf(stdout, "dense optimum %.12g   the plan is %.3g above it\n", *p, out.aboveDense)
	}
	if out.Regularization > 0 {
		fmt.Fprintf(stdout, "regularized   θ ≤ %g: a singular Gram was solved with newton's regularization (objective and bound are for the workload itself)\n", out.Regularization)
	}
	printPlanRows(stdout, out)
	printPlanMarginals(stdout, out)
	if out.Out != "" {
		fmt.Fprintf(stdout, "strategy      %s/strategy.json\n", out.Out)
	}
	return stdout.Flush()
}

// printPlanRows prints the templates tried, the per-term errors and a
// union's parts.
func printPlanRows(stdout io.Writer, out planJSON) {
	for _, t := range out.Templates {
		obj := "-"
		if t.Objective != nil {
			obj = fmt.Sprintf("%.12g", *t.Objective)
		}
		fmt.Fprintf(stdout, "  tried %-7s %20s %9.3f s %s\n", t.Template, obj, t.Seconds, t.Error)
	}
	for _, t := range out.Terms {
		fmt.Fprintf(stdout, "  term %-20s %9d queries  error %.10g\n", t.Term, t.Queries, t.Error)
	}
	for i, p := range out.Parts {
		fmt.Fprintf(stdout, "  part %-3d %-9s weight %.6g  terms %s\n", i+1, p.Kind, p.Weight, strings.Join(p.Terms, ", "))
	}
}

// printPlanMarginals prints the marginals templates' details: the family
// plan's tables or residual count, the marginals plan's and the pure
// plan's per-marginal variances.
func printPlanMarginals(stdout io.Writer, out planJSON) {
	if f := out.Family; f != nil {
		fmt.Fprintf(stdout, "marginals     family plan (%s): largest table alone %.10g, family bound %.10g", f.Privacy, f.LargestTable, f.FamilyBound)
		if f.Privacy == "pure" {
			fmt.Fprintf(stdout, ", %d tables (start %s, %d steps)\n", len(f.Tables), f.Start, f.Iterations)
			for i, tb := range f.Tables {
				if i == planTextRows {
					printMore(stdout, len(f.Tables)-i, "tables")
					break
				}
				fmt.Fprintf(stdout, "  table %-33s weight %.6g (Laplace scale %.6g/ε)\n", "{"+strings.Join(tb.Attributes, ", ")+"}", tb.Weight, 1/tb.Weight)
			}
		} else {
			fmt.Fprintf(stdout, ", %d residual subsets\n", f.Residuals)
		}
	}
	if m := out.Marginals; m != nil {
		fmt.Fprintf(stdout, "marginals     objective %s: %d residual subsets, largest per-query variance %.10g", m.Objective, m.Residuals, m.MaxVariance)
		if m.Objective == string(marginals.Max) {
			fmt.Fprintf(stdout, " (lower bound %.10g, gap %.2g, %d Newton steps)", m.LowerBound, m.Gap, m.Iterations)
		}
		fmt.Fprintln(stdout)
		printMarginalSets(stdout, m.Sets, m.moreSets)
	}
	if m := out.PureMarginals; m != nil {
		fmt.Fprintf(stdout, "marginals     pure, objective %s: %d tables measured with Laplace noise, GLS reconstruction; largest per-query variance %.10g (each marginal from its own table: %.10g)\n",
			m.Objective, len(m.Tables), m.MaxVariance, m.DirectError)
		for i, tb := range m.Tables {
			if i == planTextRows {
				printMore(stdout, len(m.Tables)-i, "tables")
				break
			}
			fmt.Fprintf(stdout, "  table %-33s scale %.6g/ε (spends %.4g of ε)\n", "{"+strings.Join(tb.Attributes, ", ")+"}", tb.Scale, tb.Share)
		}
		printMarginalSets(stdout, m.Sets, 0)
	}
}

// printMore ends a capped list of the text output.
func printMore(stdout io.Writer, n int, what string) {
	fmt.Fprintf(stdout, "  … %d more %s (--json lists them all)\n", n, what)
}

// printMarginalSets prints the first planTextRows marginals' weight and
// per-cell variance, then how many more there are (more of them are not
// in sets).
func printMarginalSets(stdout io.Writer, sets []marginals.MarginalJSON, more int) {
	for i, s := range sets {
		if i == planTextRows {
			more += len(sets) - i
			break
		}
		v := "not estimable"
		if s.CellVariance != nil {
			v = fmt.Sprintf("%.10g", *s.CellVariance)
		}
		fmt.Fprintf(stdout, "  marginal %-30s weight %-8g per-cell variance %s\n", "{"+strings.Join(s.Attributes, ", ")+"}", s.Weight, v)
	}
	if more > 0 {
		printMore(stdout, more, "marginals")
	}
}

// writeStrategyDir writes dir/strategy.json and the factor .npy files into
// a temporary directory next to dir and renames it into place
// (internal/atomicdir), so dir is never half-written. An existing dir is
// replaced only if it holds a strategy.json (a previous plan); anything
// else non-empty is refused, nothing of it deleted.
func writeStrategyDir(ctx context.Context, dir string, w *domain.Kron, res *plan.Result) (err error) {
	d, err := atomicdir.ReserveReplacing(dir, isPlanDir, nil)
	if err != nil {
		return outDirError(dir, err, "a plan directory (no strategy.json)")
	}
	defer d.Abort() // after Commit it does nothing
	if err := tables.WriteStrategy(d.Temp(), w, res); err != nil {
		return err
	}
	return d.Commit(func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: nothing written: %w", err)
		}
		return nil
	})
}

// isPlanDir recognizes an earlier dpsolve plan output, which plan --out
// may replace.
func isPlanDir(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, "strategy.json"))
	return err == nil && fi.Mode().IsRegular()
}

// outDirError words internal/atomicdir's refusal of --out dir as a usage
// error (exit 2); what names what the command would have replaced.
func outDirError(dir string, err error, what string) error {
	switch {
	case errors.Is(err, atomicdir.ErrNotEmpty):
		return usageErrorf("--out %s exists and is not %s; choose a new directory", dir, what)
	case errors.Is(err, atomicdir.ErrNotDir):
		return usageErrorf("--out %s exists and is not a directory", dir)
	case errors.Is(err, atomicdir.ErrBusy):
		return usageErrorf("--out %s is being written by another dpsolve; choose a new directory", dir)
	}
	var te *atomicdir.TargetError
	if errors.As(err, &te) {
		return usageErrorf("--out %v", err)
	}
	return err
}

// positive returns x, or NaN when it is not positive (a zero family bound
// is the trivial one: not reported).
func positive(x float64) float64 {
	if x > 0 {
		return x
	}
	return math.NaN()
}

// familyJSON reports a marginals-family plan.
func familyJSON(fp *marginals.FamilyPlan, names []string) *planFamilyJSON {
	f := &planFamilyJSON{Privacy: "gaussian", LargestTable: fp.LargestTable, FamilyBound: fp.FamilyBound,
		Start: fp.Start, Iterations: fp.Iterations, Residuals: len(fp.Residuals)}
	if fp.Pure {
		f.Privacy = "pure"
	}
	for _, tb := range fp.Tables {
		attrs := make([]string, len(tb.Attrs))
		for i, a := range tb.Attrs {
			attrs[i] = names[a]
		}
		f.Tables = append(f.Tables, planFamilyTableJSON{Attributes: attrs, Weight: tb.Weight})
	}
	return f
}

// attributeNames returns the domain's attribute names in order.
func attributeNames(w *domain.Kron) []string {
	var names []string
	for _, a := range w.Attributes() {
		names = append(names, a.Name)
	}
	return names
}

// planNoise maps --privacy to the noise model a plan is normalized for:
// "gaussian" ((ε,δ)-DP or zCDP, L2 sensitivity) to calibrate.Gaussian and
// "pure" (pure ε-DP, L1 sensitivity) to calibrate.Laplace. The flag names
// the privacy definition, as plan files do; ok is false for any other value.
func planNoise(privacy string) (noise calibrate.NoiseKind, ok bool) {
	switch privacy {
	case "gaussian":
		return calibrate.Gaussian, true
	case "pure":
		return calibrate.Laplace, true
	}
	return "", false
}
