package main

// The release command's report: release.json's structure, the text
// summary, and the atomic write of the output directory.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// tblTermJSON is one term's planned error.
type tblTermJSON struct {
	Name          string  `json:"name"`
	Weight        float64 `json:"weight"`
	Queries       int     `json:"queries"`
	TotalVariance float64 `json:"expected_squared_error"`
	MinStd        float64 `json:"min_stddev"`
	MaxStd        float64 `json:"max_stddev"`
	HalfWidth95   float64 `json:"halfwidth95"`
}

// tblSplitJSON is one term's release under --split terms.
type tblSplitJSON struct {
	Term  string  `json:"term"`
	Share float64 `json:"share"`
	// Budget is the term's budget, written after share (MarshalJSON).
	Budget             calibrate.Budget `json:"-"`
	Plan               string           `json:"plan"`
	Template           string           `json:"template"`
	Sigma              float64          `json:"sigma"`
	Sensitivity        float64          `json:"sensitivity"`
	Measurements       int              `json:"measurements"`
	ExpectedTotalSqErr float64          `json:"expected_total_squared_error"`
}

// tblTableJSON is one marginal table a pure marginals release measures.
type tblTableJSON struct {
	Attributes []string `json:"attributes"`
	Cells      int      `json:"cells"`
	Epsilon    float64  `json:"epsilon"`
	Scale      float64  `json:"laplace_scale"`
	Variance   float64  `json:"variance"`
	Grid       float64  `json:"grid"`
}

// tblJSON is release.json and the --json output.
type tblJSON struct {
	DryRun     bool    `json:"dry_run"`
	Spec       string  `json:"spec"`
	SpecSHA256 string  `json:"spec_sha256"`
	Plan       string  `json:"plan"`
	Template   string  `json:"template"`
	Attributes int     `json:"attributes"`
	Cells      float64 `json:"cells"`
	Queries    int     `json:"queries"`
	Mechanism  string  `json:"mechanism"`
	Privacy    string  `json:"privacy"`
	// Budget is the release's budget, written after privacy (MarshalJSON).
	Budget calibrate.Budget `json:"-"`
	Split  int              `json:"split"`
	// ApproxDP is a ρ budget's (ε,δ) guarantees at δ = 1e-6 and 1e-9.
	ApproxDP           []calibrate.Budget `json:"approx_dp,omitempty"`
	Sigma              float64            `json:"sigma"`
	NoiseScale         float64            `json:"noise_scale"`
	Sensitivity        float64            `json:"sensitivity"`
	SensitivityNorm    string             `json:"sensitivity_norm"`
	SnappedSensitivity float64            `json:"snapped_sensitivity"`
	Measurements       int                `json:"measurements"`
	ExpectedTotalSqErr float64            `json:"expected_total_squared_error"`
	ExpectedWeighted   float64            `json:"expected_weighted_error"`
	Terms              []tblTermJSON      `json:"terms"`
	// MarginalTables lists, for a pure ε-DP marginals plan, every measured
	// marginal table with its share of ε and its Laplace noise.
	MarginalTables []tblTableJSON `json:"marginal_tables,omitempty"`
	// Consistency reports the post-processing of a marginals plan's tables
	// (--nonnegative / --integer): method, tolerance and what remains.
	Consistency *tables.Consistency `json:"consistency,omitempty"`
	// Estimator (Estimators with --split terms, one per term) states the
	// --nonnegative / --integer estimator's method, objective and bias,
	// the released total and per table its total and largest change.
	Estimator  *tables.Estimator   `json:"estimator,omitempty"`
	Estimators []*tables.Estimator `json:"estimators,omitempty"`
	// SplitTerms lists, with --split terms, each term's own release: its
	// share of the budget, plan and noise (the top-level sigma, noise scale
	// and sensitivity are then the largest over the terms).
	SplitTerms     []tblSplitJSON `json:"split_terms,omitempty"`
	Seed           string         `json:"seed"`
	Private        bool           `json:"private"`
	PostProcessing string         `json:"post_processing"`
	Note           string         `json:"note,omitempty"`
	Data           string         `json:"data,omitempty"`
	Records        int64          `json:"records,omitempty"`
	BudgetFile     string         `json:"budget_file,omitempty"`
	LedgerSpent    *ledger.Limit  `json:"ledger_spent,omitempty"`
	LedgerLimit    *ledger.Limit  `json:"ledger_limit,omitempty"`
	Out            string         `json:"out,omitempty"`
	Created        string         `json:"created,omitempty"`
	Seconds        float64        `json:"seconds"`

	// UnionParts lists, for a union measured part by part, each part's
	// kind, terms, weight and share of the budget.
	UnionParts []tblUnionPartJSON `json:"union_parts,omitempty"`

	// budget is the budget as the text output words it (not in the JSON,
	// which has privacy, rho, epsilon and delta).
	budget string
}

// tblPost names the post-processing.
func tblPost(f tblFlags) string {
	switch {
	case f.nonneg && f.integer:
		return "nonnegative+integer"
	case f.nonneg:
		return "nonnegative"
	case f.integer:
		return "integer"
	}
	return "none"
}

// MarshalJSON writes the report with its budget in calibrate's encoding
// after the privacy key, and each split term's after its share.
func (r tblJSON) MarshalJSON() ([]byte, error) {
	type plain tblJSON // without this method
	return calibrate.MarshalInline(plain(r), "privacy", r.Budget)
}

// MarshalJSON writes the term's budget after its share.
func (s tblSplitJSON) MarshalJSON() ([]byte, error) {
	type plain tblSplitJSON
	return calibrate.MarshalInline(plain(s), "share", s.Budget)
}

// tblPartsReport fills the planned figures of the release: one part's
// own, or with --split terms the sums over the terms' releases (errors,
// measurements), the largest noise and sensitivity, and each term's
// release in split_terms.
func tblPartsReport(parts []tables.Part, w *domain.Kron, b calibrate.Budget) *tblJSON {
	rep := tblReport(parts[0].Release, b)
	rep.Plan = parts[0].Plan
	if len(parts) == 1 && len(parts[0].Terms) == len(w.Terms()) {
		return rep
	}
	rep.Cells, rep.Queries, rep.Measurements = records.CellsFloat(w.Attributes()), w.Queries(), 0
	rep.ExpectedTotalSqErr, rep.ExpectedWeighted, rep.Terms = 0, 0, nil
	rep.Template, rep.Plan = "split over terms", "--split terms"
	rep.Terms = make([]tblTermJSON, len(w.Terms()))
	for _, p := range parts {
		pr := tblReport(p.Release, p.Budget)
		rep.Sigma, rep.NoiseScale = math.Max(rep.Sigma, pr.Sigma), math.Max(rep.NoiseScale, pr.NoiseScale)
		rep.Sensitivity, rep.SnappedSensitivity = math.Max(rep.Sensitivity, pr.Sensitivity), math.Max(rep.SnappedSensitivity, pr.SnappedSensitivity)
		rep.Measurements += pr.Measurements
		rep.ExpectedTotalSqErr += pr.ExpectedTotalSqErr
		rep.ExpectedWeighted += pr.ExpectedWeighted
		for i, t := range p.Terms {
			rep.Terms[t] = pr.Terms[i]
			rep.SplitTerms = append(rep.SplitTerms, tblSplitJSON{Term: pr.Terms[i].Name, Share: p.Share,
				Budget: p.Budget, Plan: p.Plan, Template: pr.Template,
				Sigma: pr.Sigma, Sensitivity: pr.Sensitivity, Measurements: pr.Measurements, ExpectedTotalSqErr: pr.ExpectedTotalSqErr})
		}
	}
	unionReport(rep, parts)
	return rep
}

// tblReport fills the release's planned figures.
func tblReport(r *tables.Release, b calibrate.Budget) *tblJSON {
	w := r.Workload()
	attrs := w.Attributes()
	sens, norm := r.Sensitivity()
	rep := &tblJSON{
		budget:   b.String(),
		Template: r.Template(), Attributes: len(attrs), Cells: records.CellsFloat(attrs), Queries: w.Queries(),
		Mechanism: r.Mechanism(), Privacy: string(b.Kind()), Budget: b,
		Sigma: r.Sigma(), NoiseScale: r.NoiseScale(), Sensitivity: sens, SensitivityNorm: norm,
		SnappedSensitivity: r.SnappedSensitivity(), Measurements: r.Measurements(),
		ExpectedTotalSqErr: r.ExpectedTotalSquaredError(), ExpectedWeighted: r.ExpectedWeightedError(),
	}
	if b.Kind() == calibrate.Concentrated {
		for _, d := range []float64{1e-6, 1e-9} {
			if e, err := b.ApproxEpsilon(d); err == nil {
				if a, err := calibrate.ApproxDP(e, d); err == nil {
					rep.ApproxDP = append(rep.ApproxDP, a)
				}
			}
		}
	}
	for _, tb := range r.MarginalTables() {
		names := make([]string, len(tb.Attrs))
		for i, a := range tb.Attrs {
			names[i] = attrs[a].Name
		}
		rep.MarginalTables = append(rep.MarginalTables, tblTableJSON{Attributes: names, Cells: tb.Cells, Epsilon: tb.Epsilon,
			Scale: tb.Scale, Variance: tb.Variance, Grid: tb.Grid})
	}
	for _, e := range r.TermErrors() {
		rep.Terms = append(rep.Terms, tblTermJSON{Name: e.Name, Weight: e.Weight, Queries: e.Queries,
			TotalVariance: e.TotalVariance, MinStd: e.MinStd, MaxStd: e.MaxStd, HalfWidth95: e.HalfWidth95})
	}
	return rep
}

// tblPrint prints the report as JSON or as a table.
func tblPrint(stdout io.Writer, asJSON bool, rep *tblJSON) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if rep.DryRun {
		fmt.Fprintln(stdout, "dry run: no data read, nothing written, no budget spent")
	}
	fmt.Fprintf(stdout, "spec           %s (%d attributes, %.4g cells, %d queries)\n", rep.Spec, rep.Attributes, rep.Cells, rep.Queries)
	fmt.Fprintf(stdout, "plan           %s (%s)\n", rep.Template, rep.Plan)
	split := ""
	if rep.Split > 1 {
		split = fmt.Sprintf(" (1/%d of the given budget)", rep.Split)
	}
	fmt.Fprintf(stdout, "budget         %s%s\n", rep.budget, split)
	for _, a := range rep.ApproxDP {
		fmt.Fprintf(stdout, "               implies (eps=%.4g, delta=%g)-DP\n", a.Epsilon(), a.Delta())
	}
	for _, p := range rep.SplitTerms {
		fmt.Fprintf(stdout, "split          term %s: %.4g of it, %s, sigma %.6g, %s\n", p.Term, p.Share, tblBudgetString(p), p.Sigma, p.Plan)
	}
	printUnionParts(stdout, rep)
	fmt.Fprintf(stdout, "mechanism      %s, %s sensitivity %.6g, %d noisy values\n", rep.Mechanism, rep.SensitivityNorm, rep.Sensitivity, rep.Measurements)
	largest := ""
	if len(rep.SplitTerms) > 0 || len(rep.UnionParts) > 0 {
		largest = " (the largest over the terms)"
	}
	fmt.Fprintf(stdout, "noise          sigma %.6g per measurement%s\n", rep.Sigma, largest)
	if len(rep.MarginalTables) > 0 {
		lo, hi := math.Inf(1), 0.0
		for _, tb := range rep.MarginalTables {
			lo, hi = math.Min(lo, math.Sqrt(tb.Variance)), math.Max(hi, math.Sqrt(tb.Variance))
		}
		fmt.Fprintf(stdout, "               at unit sensitivity; the %d marginal tables get Laplace noise of stddev %.4g … %.4g (marginal_tables in --json)\n", len(rep.MarginalTables), lo, hi)
	}
	fmt.Fprintf(stdout, "expected error %.6g total squared error over all %d answers (weighted: %.6g)\n", rep.ExpectedTotalSqErr, rep.Queries, rep.ExpectedWeighted)
	fmt.Fprintf(stdout, "%-16s %9s %8s %14s %23s %12s\n", "term", "queries", "weight", "sq. error", "stddev (min … max)", "95% ±")
	for _, t := range rep.Terms {
		fmt.Fprintf(stdout, "%-16s %9d %8.4g %14.6g %11.4g … %9.4g %12.4g\n", t.Name, t.Queries, t.Weight, t.TotalVariance, t.MinStd, t.MaxStd, t.HalfWidth95)
	}
	if rep.LedgerLimit != nil {
		verb := "after this release"
		if rep.DryRun {
			verb = "would be after this release"
		}
		fmt.Fprintf(stdout, "ledger         %s: spent %s of %s %s\n", rep.BudgetFile, rep.LedgerSpent, rep.LedgerLimit, verb)
	}
	if !rep.Private {
		fmt.Fprintf(stdout, "private        NO (seeded simulation noise, --insecure-seed %s)\n", rep.Seed)
	}
	if rep.Note != "" {
		fmt.Fprintf(stdout, "note           %s\n", rep.Note)
	}
	if c := rep.Consistency; c != nil {
		conv := "converged"
		if c.Status.Err() != nil {
			conv = "NOT converged"
		}
		fmt.Fprintf(stdout, "consistency    %s (%d tables, %d iterations, %s): max inconsistency %.3g, max negativity %.3g\n",
			c.Method, c.Tables, c.Iterations, conv, c.MaxInconsistency, c.MaxNegativity)
	}
	printEstimators(stdout, rep)
	if rep.Out != "" {
		fmt.Fprintf(stdout, "answers        %s\n", filepath.Join(rep.Out, "answers.csv"))
	}
	return nil
}

// tblBudgetString formats one term's share of the budget.
func tblBudgetString(p tblSplitJSON) string {
	switch b := p.Budget; b.Kind() {
	case calibrate.Concentrated:
		return fmt.Sprintf("rho=%.6g", b.Rho())
	case calibrate.Approx:
		return fmt.Sprintf("epsilon=%.6g, delta=%.6g", b.Epsilon(), b.Delta())
	}
	return fmt.Sprintf("epsilon=%.6g", p.Budget.Epsilon())
}
