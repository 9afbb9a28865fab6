package main

// dpsolve synth: synthetic records from private marginal measurements
// (MST- or AIM-class mechanism, residual-plan measurements, a graphical
// model on a junction tree, controlled-rounding sampling).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/synth"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/pipeline/synthetic"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

func init() {
	register(&command{
		name:    "synth",
		summary: "synthetic records from private marginal measurements (MST or AIM, zCDP)",
		run:     runSynth,
	})
}

const synthUsage = `usage: dpsolve synth --spec S --data D (--rho R | --epsilon E --delta DL) [--mechanism aim|mst]
                     [--records N] [--budget-file L] [--insecure-seed S] [--max-cells C] [--json] --out DIR
       dpsolve synth --from-release DIR [--spec S] [--records N] [--insecure-seed S] [--max-cells C] [--json] --out DIR

Measures marginals of the records in D (CSV, gzipped CSV or Parquet, with a
header naming the spec's attributes; labels where the spec has a codebook,
integer codes otherwise) under a ρ-zCDP budget (or (ε, δ), converted to ρ as
AIM does), fits a graphical model to the measurements and writes DIR/synthetic.csv
(N records, default the noisy total; labels — bin ranges for binned
attributes — where the spec has a codebook, codes otherwise) and DIR/synth.json (mechanism, budget split,
measured marginals, model size, fit iterations, per-cell noise of every
measurement). AIM's workload is the spec's marginals workload (all pairs when
the spec has none). The release runs as every release does (check → charge →
measure → atomic commit): the ledger, when given, is charged after every check
and before any noise is drawn; a failure after the charge is reported as
charged and not released.

`

// synthSpec loads the domain, codebooks included (and the marginals
// workload, if any) of a spec. A spec with a domain and no workload (like
// the Adult domain.json) is read as the same domain with a one-way
// workload, which AIM does not use (it targets all pairs then).
func synthSpec(path string) ([]domain.Attribute, [][]int, error) {
	w, err := domain.LoadSpec(path, workload.Blocks)
	if err == nil {
		var sets [][]int
		if _, ms, _, err := marginals.Sets(w); err == nil {
			for _, s := range ms {
				if len(s.Attrs) > 0 {
					sets = append(sets, s.Attrs)
				}
			}
		}
		return w.Attributes(), sets, nil
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		return nil, nil, usageErrorf("--spec: %v", rerr)
	}
	var obj map[string]json.RawMessage
	if jerr := json.Unmarshal(b, &obj); jerr != nil || obj["domain"] == nil || obj["workload"] != nil {
		return nil, nil, fmt.Errorf("--spec %s: %w", path, err)
	}
	obj["workload"] = json.RawMessage(`[{"name": "one-way", "marginals": {"k": 1}}]`)
	nb, jerr := json.Marshal(obj)
	if jerr != nil {
		return nil, nil, fmt.Errorf("--spec %s: %w", path, err)
	}
	w, derr := domain.ParseSpec(bytes.NewReader(nb), filepath.Dir(path), workload.Blocks)
	if derr != nil {
		return nil, nil, fmt.Errorf("--spec %s: %w", path, derr)
	}
	return w.Attributes(), nil, nil
}

func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("synth", stderr)
	spec := fs.String("spec", "", "the domain spec (JSON: attributes, optionally a marginals workload)")
	data := fs.String("data", "", "the records (CSV, gzipped CSV or Parquet; labels where the spec has a codebook, integer codes otherwise)")
	rho := fs.Float64("rho", 0, "ρ-zCDP budget")
	eps := fs.Float64("epsilon", 0, "ε of an (ε, δ) budget (with --delta)")
	delta := fs.Float64("delta", 0, "δ of an (ε, δ) budget")
	mech := fs.String("mechanism", "aim", "aim or mst")
	records := fs.Int("records", 0, "number of synthetic records (0: the noisy total)")
	budgetFile := fs.String("budget-file", "", "ledger to charge")
	label := fs.String("label", "", "the ledger entry's label (default: the output directory)")
	seed := fs.String("insecure-seed", "", "simulation only: seeded noise and selection — the output is NOT private")
	maxCells := fs.Float64("max-cells", 0, "cap on the model size Σ clique cells (0: 1e7, 80 MB per table)")
	out := fs.String("out", "", "output directory")
	asJSON := fs.Bool("json", false, "print synth.json on stdout")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	fromRelease := fs.String("from-release", "", "fit to this release's published marginal tables (answers.csv) instead of measuring data: no budget spent")
	fs.Usage = func() { fmt.Fprint(stderr, synthUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *fromRelease != "" {
		if *data != "" || *rho != 0 || *eps != 0 || *delta != 0 || *budgetFile != "" || *mech != "aim" {
			return usageErrorf("--from-release reads no data and spends no budget: drop --data, --rho, --epsilon, --delta, --budget-file and --mechanism")
		}
		return synthFromRelease(ctx, *fromRelease, *spec, *out, *records, *maxCells, *seed, *asJSON, stdout)
	}
	if *spec == "" || *data == "" || *out == "" {
		return usageErrorf("--spec, --data and --out are required")
	}
	var b calibrate.Budget
	var err error
	switch {
	case *rho != 0 && (*eps != 0 || *delta != 0):
		return usageErrorf("give --rho or --epsilon with --delta, not both")
	case *rho != 0:
		b, err = calibrate.ZCDP(*rho)
	case *eps != 0 || *delta != 0:
		if *delta == 0 {
			return usageErrorf("--epsilon needs --delta > 0 (synth is a zCDP mechanism)")
		}
		b, err = calibrate.ApproxDP(*eps, *delta)
	default:
		return usageErrorf("a budget is required: --rho R or --epsilon E --delta DL")
	}
	if err != nil {
		return usageErrorf("%v", err)
	}
	o := synthetic.Request{Ledger: *budgetFile, Label: *label, Records: *records, Out: *out}
	o.Budget, o.Mechanism, o.MaxCells = b, *mech, *maxCells
	if *seed != "" {
		s, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil {
			return usageErrorf("--insecure-seed must be a non-negative integer, got %q", *seed)
		}
		o.InsecureSeed = &s
		fmt.Fprintf(stderr, "WARNING: --insecure-seed %d: noise and selection come from a seeded generator; the output is NOT differentially private\n", s)
	}
	attrs, sets, err := synthSpec(*spec)
	if err != nil {
		return err
	}
	o.Attrs, o.Workload = attrs, sets
	o.Progress = progressTo(stderr, "synth", *quiet)
	f, err := os.Open(*data)
	if err != nil {
		return usageErrorf("--data: %v", err)
	}
	defer f.Close()
	o.Data = f
	res, rep, err := synthetic.Release(ctx, o)
	if err != nil {
		if res.Outcome == publish.Refused && (errors.Is(err, synth.ErrInput) || errors.Is(err, publish.ErrOutput)) {
			return usageErrorf("%v", err)
		}
		return err // a SpentError says the budget was charged and nothing released
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(stdout, "mechanism   %s, ρ = %.6g (%s)\n", rep.Mechanism, rep.ZCDP.Rho(), describeBudget(rep.Budget))
	fmt.Fprintf(stdout, "measured    %d marginals in %d steps, %d selection rounds\n", len(rep.Measured), len(rep.Steps), rep.Rounds)
	fmt.Fprintf(stdout, "model       %.4g cells, %d cliques, %d fit steps (final loss %.6g, certified gap %.3g)\n", rep.Fit.Cells, len(rep.Cliques), rep.FitIterations, rep.Fit.Loss, rep.Fit.Gap)
	fmt.Fprintf(stdout, "records     %d written to %s/synthetic.csv (report: synth.json), %.2f s\n", rep.Records, *out, rep.Seconds)
	if !rep.Private {
		fmt.Fprintln(stdout, "NOT PRIVATE: seeded noise (--insecure-seed)")
	}
	return nil
}

// synthFromRelease is dpsolve synth --from-release: a model fitted to a
// release's published marginal tables, sampled; no data, no budget.
func synthFromRelease(ctx context.Context, dir, spec, out string, records int, maxCells float64, seed string, asJSON bool, stdout io.Writer) error {
	if out == "" {
		return usageErrorf("--out is required")
	}
	if spec == "" {
		var meta struct {
			Spec string `json:"spec"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "release.json"))
		if err != nil {
			return usageErrorf("--from-release: %v", err)
		}
		if err := json.Unmarshal(b, &meta); err != nil || meta.Spec == "" {
			return usageErrorf("--from-release: %s names no spec; give --spec", filepath.Join(dir, "release.json"))
		}
		spec = meta.Spec
	}
	attrs, _, err := synthSpec(spec)
	if err != nil {
		return err
	}
	req := synthetic.FromReleaseRequest{Dir: dir, Attrs: attrs, Records: records, MaxCells: maxCells, Out: out}
	if seed != "" {
		s, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			return usageErrorf("--insecure-seed must be a non-negative integer, got %q", seed)
		}
		req.Seed = &s
	}
	rep, err := synthetic.FromRelease(ctx, req)
	if err != nil {
		if errors.Is(err, synth.ErrInput) {
			return usageErrorf("%v", err)
		}
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(stdout, "fitted to    %d published tables of %s (%d skipped), no budget spent\n", len(rep.Tables), dir, len(rep.Skipped))
	fmt.Fprintf(stdout, "model        %.4g cells, %d cliques, %d fit steps (final loss %.6g, certified gap %.3g)\n", rep.Fit.Cells, len(rep.Cliques), rep.Fit.Iterations, rep.Fit.Loss, rep.Fit.Gap)
	fmt.Fprintf(stdout, "records      %d written to %s/synthetic.csv (report: synth.json)\n", rep.Records, out)
	if !rep.Private {
		fmt.Fprintln(stdout, "NOT PRIVATE: the release was made with seeded noise")
	}
	return nil
}
