package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func init() {
	register(&command{
		name:    "release",
		summary: "privately release a multi-attribute workload's answers from records (spec + plan + budget)",
		run:     runRelease,
	})
}

// tblFlags are dpsolve release's flags.
type tblFlags struct {
	spec, data, planDir, template string
	rho, eps, delta               float64
	out, budgetFile, label        string
	split                         int       // --split N: this release is 1 of N
	splitArg                      string    // --split as given
	termShares                    []float64 // --split terms[:w,…]: per-term shares (empty: equal)
	splitTerms                    bool
	asJSON, dryRun, quiet         bool
	nonneg, integer               bool
	allowFractional               bool
	seed                          string
	tablesDir                     string          // --tables DIR: one CSV per table
	set                           map[string]bool // flags given on the command line
}

func (f *tblFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.spec, "spec", "", "workload spec (JSON) naming the attributes and terms (required)")
	fs.StringVar(&f.data, "data", "", "records: CSV (optionally gzip-compressed; the header names the spec's attributes) or Parquet, holding integer codes or the values the spec's codebook (\"values\", \"edges\") maps; or a histogram .npy in domain order (required unless --dry-run)")
	fs.StringVar(&f.tablesDir, "tables", "", "also write one CSV per table (a crosstab for two attributes) into this directory (must not exist or be empty), after the release is in --out")
	fs.StringVar(&f.planDir, "plan", "", "directory written by dpsolve plan --out (strategy.json and its factors)")
	fs.StringVar(&f.template, "template", "", "plan in-process with this template instead of --plan (kron, union, dense, marginals, best)")
	fs.Float64Var(&f.rho, "rho", 0, "ρ-zCDP budget (discrete Gaussian noise, σ² = Δ²/(2ρ))")
	fs.Float64Var(&f.eps, "eps", 0, "ε: with --delta, (ε,δ)-DP (analytic Gaussian); alone, pure ε-DP (Laplace; marginals plans measure every marginal table)")
	fs.Float64Var(&f.delta, "delta", 0, "δ in (0,1), with --eps")
	fs.StringVar(&f.out, "out", "", "output directory for answers.csv and release.json (required unless --dry-run; must not exist or be empty)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object on stdout")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the noise scale and expected errors without reading the data or writing anything (the same feasibility checks as a release: a release the dry run accepts is not refused for its size)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr (warnings and the ledger charge are still printed)")
	fs.BoolVar(&f.allowFractional, "allow-fractional", false, "accept a histogram .npy whose cells are not whole numbers (as dpsolve run does): only if one person still changes at most one cell by at most 1")
	fs.StringVar(&f.splitArg, "split", "1", "N: this release spends 1/N of the given budget (ρ/N, ε/N, δ/N), so N releases together spend it; terms: divide the budget over the spec's terms, equally or terms:w1,w2,… in proportion to the given shares, each term planned and measured on its own (needs --template, not --plan)")
	fs.StringVar(&f.budgetFile, "budget-file", "", "budget ledger (JSON, e.g. {\"limit\": {\"rho\": 1}}): refuse before any noise when the release would exceed it; record it otherwise")
	fs.StringVar(&f.label, "label", "", "label of this release in the budget ledger (default: the output directory)")
	fs.BoolVar(&f.nonneg, "nonnegative", false, "post-process: non-negative tables, consistent with one another, every one summing to the least-squares total (histogram strategies: least squares over non-negative histograms; marginals plans: over consistent non-negative tables); biased, see estimator in release.json; the stddev column describes the least-squares answers")
	fs.BoolVar(&f.integer, "integer", false, "post-process: integer tables keeping the totals and the consistency (histogram strategies: the histogram rounded by its running sums; marginals plans: controlled rounding); see estimator in release.json")
	fs.StringVar(&f.seed, "insecure-seed", "", "simulation only: seeded noise — the output is NOT private and says so")
}

// budget builds and validates the budget from --rho / --eps / --delta with
// the ranges and rules run and answer apply (checkPrivacyFlags): which
// flags are given selects the mechanism (--rho: zCDP; --eps with --delta:
// (ε,δ); --eps alone: pure ε), a given flag must hold a value in its usable
// range (0 included: "--rho 0" is an error, not a missing budget).
func (f *tblFlags) budget() (calibrate.Budget, error) {
	var b calibrate.Budget
	given := func(name string) bool { return f.set[name] }
	var kind calibrate.Kind
	switch {
	case given("rho") && (given("eps") || given("delta")):
		return b, usageErrorf("give either --rho or --eps [--delta], not both")
	case given("rho"):
		kind = calibrate.Concentrated
		if err := checkRange("--rho", f.rho, rhoMin, rhoMax); err != nil {
			return b, err
		}
	case given("eps") && given("delta"):
		kind = calibrate.Approx
		if math.IsNaN(f.delta) || f.delta <= 0 || f.delta >= 1 {
			return b, usageErrorf("--delta must lie in (0,1), got %v (omit --delta for pure ε-DP)", f.delta)
		}
	case given("eps"):
		kind = calibrate.Pure
	case given("delta"):
		return b, usageErrorf("--delta needs --eps")
	default:
		return b, usageErrorf("give a budget: --rho R, or --eps E [--delta D]")
	}
	if kind != calibrate.Concentrated {
		if err := checkRange("--eps", f.eps, epsMin, epsMax); err != nil {
			return b, err
		}
	}
	// The shared rules of run and answer (ranges, δ in (0,1)).
	if err := checkPrivacyFlags(kind, f.eps, f.delta, f.rho); err != nil {
		return b, err
	}
	b, err := calibrate.New(kind, f.eps, f.delta, f.rho)
	if err != nil {
		return b, usageErrorf("%v", err)
	}
	return b, nil
}

// checkSplitRange refuses a split that leaves each part a budget outside
// the usable range (the calibration's limits apply to what is spent).
func checkSplitRange(b calibrate.Budget, n int, what string) error {
	if n <= 1 {
		return nil
	}
	switch b.Kind() {
	case calibrate.Concentrated:
		if b.Rho() < rhoMin {
			return usageErrorf("--split %s leaves ρ = %.4g for a part, below the usable range [%g, %g]", what, b.Rho(), rhoMin, rhoMax)
		}
	default:
		if b.Epsilon() < epsMin {
			return usageErrorf("--split %s leaves ε = %.4g for a part, below the usable range [%g, %g]", what, b.Epsilon(), epsMin, epsMax)
		}
	}
	return nil
}

// check validates the flags that need no files.
func (f *tblFlags) check() (calibrate.Budget, error) {
	if f.spec == "" {
		return calibrate.Budget{}, usageErrorf("--spec is required")
	}
	if f.planDir != "" && f.template != "" {
		return calibrate.Budget{}, usageErrorf("give --plan or --template, not both")
	}
	if !f.dryRun && f.data == "" {
		return calibrate.Budget{}, usageErrorf("--data is required (or --dry-run)")
	}
	if !f.dryRun && f.out == "" {
		return calibrate.Budget{}, usageErrorf("--out is required (or --dry-run)")
	}
	if err := f.parseSplit(); err != nil {
		return calibrate.Budget{}, err
	}
	if f.seed != "" {
		if _, err := strconv.ParseUint(f.seed, 10, 64); err != nil {
			return calibrate.Budget{}, usageErrorf("--insecure-seed must be a non-negative integer, got %q", f.seed)
		}
	}
	b, err := f.budget()
	if err != nil {
		return b, err
	}
	part, err := tables.Split(b, f.split)
	if err != nil {
		return part, err
	}
	return part, checkSplitRange(part, f.split, strconv.Itoa(f.split))
}

// parseSplit reads --split: a positive integer N, "terms" or
// "terms:w1,w2,…".
func (f *tblFlags) parseSplit() error {
	arg := strings.TrimSpace(f.splitArg)
	f.split = 1
	if rest, ok := strings.CutPrefix(arg, "terms"); ok && (rest == "" || strings.HasPrefix(rest, ":")) {
		f.splitTerms = true
		if rest != "" {
			for _, part := range strings.Split(rest[1:], ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
				if err != nil || !(v > 0) || math.IsInf(v, 0) {
					return usageErrorf("--split terms:w1,w2,… takes positive shares, one per term; got %q", part)
				}
				f.termShares = append(f.termShares, v)
			}
		}
		if f.planDir != "" {
			return usageErrorf("--split terms cannot divide the budget of a --plan directory: its one strategy measures every term jointly (each measurement serves several terms and the sensitivity covers them all), so no part of it belongs to one term; use --template to plan each term on its own under its share, or --split N for N separate releases")
		}
		return nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		return usageErrorf("--split must be a positive integer N, terms or terms:w1,w2,…; got %q", f.splitArg)
	}
	f.split = n
	return nil
}

// runRelease runs the release command and, under dpsolve batch, writes the
// transaction's outcome record (cmd/dpsolve/internal/batch: OutcomeEnv) that decides
// whether the job may be run again. A crash writes none: the batch then
// marks the job needs_review.
func runRelease(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var outcome publish.Outcome
	err := releaseCommand(ctx, args, stdout, stderr, &outcome)
	if path := os.Getenv(batch.OutcomeEnv); path != "" {
		if outcome == 0 { // returned before the transaction's charge could happen
			outcome = publish.Refused
		}
		rec := batch.OutcomeRecord{Outcome: outcome.String(), NoiseMayBeDrawn: outcome != publish.Refused}
		if err != nil {
			rec.Error = err.Error()
		}
		if werr := batch.WriteOutcome(path, rec); werr != nil {
			fmt.Fprintf(stderr, "dpsolve release: cannot write the outcome record %s: %v\n", path, werr)
		}
	}
	return err
}

// releaseCommand is dpsolve release; it sets *outcome once the release
// transaction has run (before that, nothing can have been charged).
func releaseCommand(ctx context.Context, args []string, stdout, stderr io.Writer, outcome *publish.Outcome) error {
	start := time.Now()
	fs := newFlagSet("release", stderr)
	withReleaseHelp(fs, stderr)
	var f tblFlags
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	// Budget flags first: before any file is read or planned.
	b, err := f.check()
	if err != nil {
		return err
	}
	if !f.dryRun {
		// Refuse an existing, linked or unwritable output before anything
		// is read or spent.
		if err := checkOutDir(f.out, stderr); err != nil {
			return err
		}
		if err := checkTablesDir(f.tablesDir, f.out); err != nil {
			return err
		}
	}
	if err := f.checkInputFiles(); err != nil {
		return err
	}
	// The shared spec reader first, so that a bad or missing spec is
	// reported as by every other command; then its bytes for the record.
	k, err := domain.LoadSpec(f.spec, workload.Blocks)
	if err != nil {
		return err
	}
	specBytes, err := os.ReadFile(f.spec)
	if err != nil {
		return inputerr.Errorf("release", "spec: %v", err)
	}
	// What can be refused from the spec, the plan's file and the budget
	// alone is refused before planning (seconds, not minutes).
	if err := f.checkPlanPrivacy(b); err != nil {
		return err
	}
	if err := f.feasible(k, stderr); err != nil {
		return err
	}
	req, err := f.request(k, b, stderr)
	if err != nil {
		return err
	}
	var rep *tblJSON // the report, made once the release is prepared
	if !f.dryRun {
		f.transaction(&req, &rep, start, b, stderr)
	}
	// The library's transaction (pipeline/publish) runs every refusing
	// check, reserves --out, charges the ledger under its lock, draws the
	// noise and commits the output; without --out it is the dry run.
	prep, err := publish.Prepare(ctx, req)
	if err != nil {
		return outputUsage(f.out, err)
	}
	defer prep.Close()
	rep = f.newReport(prep.Parts(), k, b, specBytes)
	if f.budgetFile != "" {
		rep.BudgetFile = f.budgetFile
		if st := prep.Ledger(); st != nil {
			rep.LedgerSpent, rep.LedgerLimit = &st.Spent, &st.Limit
		}
	}
	if f.dryRun {
		rep.Seconds = time.Since(start).Seconds()
		return tblPrint(stdout, f.asJSON, rep)
	}
	return f.publish(ctx, prep, k, b, rep, stdout, stderr, outcome)
}

// outputUsage words the transaction's refusal of --out as a usage error
// (exit 2); other errors pass unchanged.
func outputUsage(out string, err error) error {
	if errors.Is(err, publish.ErrPartsPostProcess) {
		return usageErrorf("--nonnegative/--integer: %v", err)
	}
	if !errors.Is(err, publish.ErrOutput) {
		return err
	}
	switch {
	case errors.Is(err, atomicdir.ErrBusy):
		return usageErrorf("--out %s is being written by another release; choose a new directory", out)
	case errors.Is(err, atomicdir.ErrNotEmpty):
		return usageErrorf("--out %s exists and is not empty; choose a new directory", out)
	case errors.Is(err, atomicdir.ErrNotDir):
		return usageErrorf("--out %s exists and is not a directory", out)
	}
	return usageErrorf("--out %s: %v", out, err)
}

// request is the release's transaction request from the flags.
func (f *tblFlags) request(k *domain.Kron, b calibrate.Budget, stderr io.Writer) (publish.Request, error) {
	req := publish.Request{Workload: k, Budget: b, PlanDir: f.planDir, Template: f.template,
		SplitTerms: f.splitTerms, TermShares: f.termShares, Progress: progressTo(stderr, "release", f.quiet),
		CheckPart: checkPartBudget, PostProcess: tables.Publishable{NonNegative: f.nonneg, Integer: f.integer, Progress: progressTo(stderr, "release", f.quiet)},
		Ledger: f.budgetFile, Label: f.label}
	if f.splitTerms {
		if _, err := tables.SplitTerms(b, f.termShares, len(k.Terms())); err != nil {
			return req, usageErrorf("--split: %v", err)
		}
	}
	// An unknown template is a usage error, refused before planning.
	if f.planDir == "" && f.template != "marginals" {
		name := f.template
		if name == "" {
			name = "best"
		}
		if _, err := planner.Lookup(name); err != nil {
			return req, usageErrorf("%v", err)
		}
	}
	if !f.quiet {
		req.Planned = func(res *plan.Result) {
			fmt.Fprintf(stderr, "dpsolve release: planned with template %s (objective %.6g per unit noise, %.3f s)\n", res.Template, res.Objective, res.Seconds)
		}
	}
	if f.dryRun {
		return req, nil // Prepare checks the ledger's room; it never charges
	}
	req.Out = f.out
	req.Stale = func(path string) {
		fmt.Fprintf(stderr, "dpsolve release: removed %s, the unfinished output of an earlier release to %s that was killed\n", path, f.out)
	}
	return req, nil
}

// newReport is the release's report before anything is measured: the
// planned figures of the parts, the spec's record, the noise source and
// the post-processing.
func (f *tblFlags) newReport(parts *tables.Parts, w *domain.Kron, b calibrate.Budget, specBytes []byte) *tblJSON {
	sum := sha256.Sum256(specBytes)
	rep := tblPartsReport(parts.Parts(), w, b)
	rep.DryRun, rep.Spec, rep.SpecSHA256, rep.Split = f.dryRun, f.spec, hex.EncodeToString(sum[:]), f.split
	rep.Seed, rep.Private = "secure", true
	if f.seed != "" {
		rep.Seed, rep.Private = f.seed, false
	}
	rep.PostProcessing = tblPost(*f)
	if rep.PostProcessing != "none" {
		rep.Note = "post-processed answers are biased: they no longer have the planned variance, and the stddev column describes the answers before post-processing"
	}
	return rep
}

// transaction completes the request of a release (not a dry run): the
// data's reader, the noise source, the charge's message and release.json,
// which reads the report *rep made after Prepare.
func (f *tblFlags) transaction(req *publish.Request, rep **tblJSON, start time.Time, b calibrate.Budget, stderr io.Writer) {
	w := req.Workload
	if f.seed != "" {
		seed, _ := strconv.ParseUint(f.seed, 10, 64)
		req.Noise = noise.NewSeededInsecure(seed)
	}
	req.Data = publish.Data{Load: func(ctx context.Context, histogram bool, sets [][]int) (tables.Data, int64, error) {
		if f.seed != "" {
			// After every check, before the charge: a refused release
			// prints no warning.
			fmt.Fprintf(stderr, "WARNING: --insecure-seed %s: noise comes from a seeded generator; the output is NOT differentially private\n", f.seed)
		}
		return f.readData(ctx, histogram, sets, w, stderr)
	}}
	req.Charged = func(st ledger.Status) {
		(*rep).LedgerSpent = &st.Spent
		fmt.Fprintf(stderr, "dpsolve release: charged %s to %s: %s of %s spent\n", chargeInUnit(b, &st.Limit), f.budgetFile, st.Spent, st.Limit)
	}
	req.Files = func(r *publish.Result) ([]publish.File, error) {
		rp, tr := *rep, r.Tables
		rp.Data, rp.Records = f.data, r.Records
		rp.Consistency, rp.Estimator, rp.Estimators = tr.Consistency, tr.Estimator, tr.Estimators
		rp.Out, rp.Created = f.out, time.Now().UTC().Format(time.RFC3339)
		rp.Seconds = time.Since(start).Seconds()
		body, err := json.MarshalIndent(rp, "", "  ")
		if err != nil {
			return nil, err
		}
		body = append(body, '\n')
		return []publish.File{{Name: "release.json", Write: func(o io.Writer) error { _, err := o.Write(body); return err }}}, nil
	}
}

// publish runs the prepared transaction: it reads the data, charges the
// ledger as the last step before the noise, measures, answers and commits
// answers.csv and release.json.
func (f *tblFlags) publish(ctx context.Context, prep *publish.Prepared, w *domain.Kron, b calibrate.Budget, rep *tblJSON, stdout, stderr io.Writer, outcome *publish.Outcome) error {
	res, err := prep.Release(ctx)
	*outcome = res.Outcome
	switch res.Outcome {
	case publish.Released:
	case publish.ChargedNotReleased:
		// After the charge nothing may fail silently: the error says that
		// the budget was spent and nothing released.
		var se *publish.SpentError
		if errors.As(err, &se) {
			err = se.Err
		}
		return &spentError{err: err, cost: chargeInUnit(b, rep.LedgerLimit), ledger: f.budgetFile}
	default:
		return outputUsage(f.out, err)
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "dpsolve release: released %d answers to %s (%s)\n", rep.Queries, f.out, b)
	}
	if err := writeTablesDir(f.tablesDir, f.out, w, res.Tables, f.quiet, stderr); err != nil {
		return err
	}
	return tblPrint(stdout, f.asJSON, rep)
}

// checkPartBudget refuses a part whose share of the budget falls below the
// usable range of the calibration: a term of --split terms, or a part of a
// union measured part by part.
func checkPartBudget(c tables.PartCheck) error {
	if c.Union == nil {
		return checkSplitRange(c.Budget, 2, "terms")
	}
	if bk := c.Budget; bk.Kind() == calibrate.Pure && bk.Epsilon() < epsMin || bk.Kind() == calibrate.Concentrated && bk.Rho() < rhoMin {
		return usageErrorf("the union's part of terms %s (weight %.4g) would get %s, below the usable range; use --template kron", strings.Join(c.Union.Terms, ", "), c.Union.Weight, bk)
	}
	return nil
}

// readData reads the histogram or the marginal tables the release needs,
// with progress on stderr; an interrupt stops it between records.
func (f *tblFlags) readData(ctx context.Context, histogram bool, sets [][]int, w *domain.Kron, stderr io.Writer) (tables.Data, int64, error) {
	if strings.EqualFold(filepath.Ext(f.data), ".npy") {
		x, err := records.ReadHistogramNPY(f.data, w.Attributes())
		if err != nil {
			return tables.Data{}, 0, err
		}
		// The rule of dpsolve run: counts are whole numbers unless
		// --allow-fractional says one person still changes one cell by ≤ 1.
		if err := checkCounts(x, f.data, f.allowFractional, stderr); err != nil {
			return tables.Data{}, 0, inputerr.Errorf("release", "data: %v", err)
		}
		return tables.Data{Histogram: x, Tables: records.Marginalize(x, w.Attributes(), sets)}, 0, nil
	}
	file, err := os.Open(f.data)
	if err != nil {
		return tables.Data{}, 0, inputerr.Errorf("release", "data: %v", err)
	}
	defer file.Close()
	opt := &records.Options{}
	if fi, err := file.Stat(); err == nil {
		opt.Total = fi.Size()
	}
	opt.Progress = progressTo(stderr, "release", f.quiet)
	in := ctxReader{ctx: ctx, r: publish.LineLimit(file, publish.MaxLineBytes), at: file}
	if histogram {
		x, st, err := records.ReadHistogram(in, w.Attributes(), opt)
		if err != nil {
			return tables.Data{}, 0, wrapData(f.data, err)
		}
		// With --split terms a marginals part may need tables too.
		return tables.Data{Histogram: x, Tables: records.Marginalize(x, w.Attributes(), sets)}, st.Records, nil
	}
	tabs, st, err := records.ReadMarginals(in, w.Attributes(), sets, opt)
	return tables.Data{Tables: tabs}, st.Records, wrapData(f.data, err)
}

// ctxReader stops a read at the next call once ctx is cancelled, so an
// interrupt stops a long read of the records within one buffer.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	at  io.ReaderAt // the file itself, for Parquet (the line cap applies to CSV reads)
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, errCancelled(c.ctx)
	}
	return c.r.Read(p)
}

// ReadAt lets the records reader read a Parquet file at offsets, stopping
// at the next call once ctx is cancelled.
func (c ctxReader) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, errCancelled(c.ctx)
	}
	if c.at == nil {
		return 0, errors.New("the input does not allow reading at offsets")
	}
	return c.at.ReadAt(p, off)
}

func wrapData(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", path, err)
}
