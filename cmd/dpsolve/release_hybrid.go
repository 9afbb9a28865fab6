package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/domain"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/tables"
)

// A hybrid union (plan.Union with parts of different kinds: the marginals
// template's residual plan of some terms, Kronecker strategies for the
// others) has no joint measurement in tables, but it is the same mechanism
// as measuring each part on its own: part k is measured at weight wₖ with
// the union's noise, i.e. at weight 1 with noise scaled by 1/wₖ. Under
// ρ-zCDP a Gaussian measurement of L2 sensitivity 1 and noise σ/wₖ costs
// ρₖ = wₖ²/(2σ²) = wₖ²·ρ, and Σ wₖ² = 1 gives Σ ρₖ = ρ (sequential
// composition, Bun & Steinke 2016, Lemma 2.3); under pure ε a Laplace
// measurement of L1 sensitivity 1 and scale b/wₖ costs εₖ = wₖ·ε, and
// Σ wₖ = 1 gives Σ εₖ = ε. Part k's error is then Eₖ/wₖ² per unit noise
// and the total is the union's objective. Analytic (ε,δ) calibration does
// not compose this way, so there the release keeps to strategies it
// measures jointly.

// hybridParts reports whether a release under b may measure a union part
// by part at the shares above.
func hybridParts(b calibrate.Budget) bool {
	return b.Kind == calibrate.Concentrated || b.Kind == calibrate.Pure
}

// releaseAccept is the plan filter of a release of w under b: strategies
// tables.FromPlan measures jointly and, where b composes by addition,
// unions whose every part it measures on its own.
func releaseAccept(w *domain.Kron, b calibrate.Budget) func(*plan.Strategy) error {
	return func(s *plan.Strategy) error {
		_, err := tables.FromPlan(s, w)
		if err == nil || s.Kind() != "union" || !hybridParts(b) {
			return err
		}
		for _, p := range s.Parts {
			if _, perr := tables.FromPlan(partStrategy(s, p), w); perr != nil {
				return fmt.Errorf("union part of terms %s: %w", strings.Join(p.Terms, ", "), perr)
			}
		}
		return nil
	}
}

// isHybrid reports whether s is a union that must be measured part by part.
func isHybrid(s *plan.Strategy, w *domain.Kron) bool {
	if s.Kind() != "union" {
		return false
	}
	_, err := tables.FromPlan(s, w)
	return err != nil
}

// partStrategy is union part p as a strategy of its own (sensitivity 1).
func partStrategy(s *plan.Strategy, p plan.Part) *plan.Strategy {
	if p.Strategy != nil {
		return p.Strategy
	}
	return &plan.Strategy{Template: "kron", Privacy: s.Privacy, Factors: p.Factors}
}

// unionShare is the fraction of the budget union part weight w spends (see
// above): w² under ρ-zCDP, w under pure ε.
func unionShare(weight float64, b calibrate.Budget) float64 {
	if b.Kind == calibrate.Pure {
		return weight
	}
	return weight * weight
}

// unionParts prepares the release of hybrid union s of w's terms under b,
// one tblPart per union part, at the part's share of b. The shares are
// normalized to add up to 1 (the weights do up to rounding), so the parts'
// budgets add up to b, which the release charges once.
func unionParts(s *plan.Strategy, w *domain.Kron, b calibrate.Budget, desc string) ([]tblPart, error) {
	if !hybridParts(b) {
		return nil, fmt.Errorf("a union of parts of different kinds is measured part by part only under --rho or pure --eps")
	}
	index := map[string]int{}
	for i, t := range w.Terms() {
		index[t.Name] = i
	}
	shares := make([]float64, len(s.Parts))
	for k, p := range s.Parts {
		shares[k] = unionShare(p.Weight, b)
	}
	budgets, err := tables.SplitTerms(b, shares, len(shares))
	if err != nil {
		return nil, fmt.Errorf("union part budgets: %w", err)
	}
	total := 0.0
	for _, sh := range shares {
		total += sh
	}
	parts := make([]tblPart, 0, len(s.Parts))
	for k, p := range s.Parts {
		// A part's share must stay in the calibration's usable range.
		if bk := budgets[k]; bk.Kind == calibrate.Pure && bk.Epsilon < epsMin || bk.Kind == calibrate.Concentrated && bk.Rho < rhoMin {
			return nil, usageErrorf("the union's part of terms %s (weight %.4g) would get %s, below the usable range; use --template kron", strings.Join(p.Terms, ", "), p.Weight, bk)
		}
		var terms []int
		for _, name := range p.Terms {
			i, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("union part names term %q, which the spec does not have", name)
			}
			terms = append(terms, i)
		}
		sw, err := w.Part(terms)
		if err != nil {
			return nil, fmt.Errorf("union part of terms %s: %w", strings.Join(p.Terms, ", "), err)
		}
		ps, err := tables.FromPlan(partStrategy(s, p), sw)
		if err != nil {
			return nil, err
		}
		r, err := tables.Prepare(sw, ps, budgets[k])
		if err != nil {
			return nil, fmt.Errorf("union part of terms %s: %w", strings.Join(p.Terms, ", "), err)
		}
		parts = append(parts, tblPart{r: r, terms: terms, plan: fmt.Sprintf("%s, part %d of %d (%s)", desc, k+1, len(s.Parts), ps.Template()),
			b: budgets[k], share: shares[k] / total, union: &tblUnionPartJSON{Part: k + 1, Kind: ps.Template(), Weight: p.Weight, Terms: p.Terms}})
	}
	return parts, nil
}

// tblUnionPartJSON is one part of a union measured part by part, in
// release.json's union_parts.
type tblUnionPartJSON struct {
	Part               int      `json:"part"`
	Kind               string   `json:"kind"`
	Weight             float64  `json:"weight"`
	Terms              []string `json:"terms"`
	Share              float64  `json:"share"`
	Rho                float64  `json:"rho,omitempty"`
	Epsilon            float64  `json:"epsilon,omitempty"`
	ExpectedTotalSqErr float64  `json:"expected_total_squared_error"`
	ExpectedWeighted   float64  `json:"expected_weighted_error"`
}

// unionReport relabels a report of parts that are a union's (not --split
// terms') and lists the parts with their shares.
func unionReport(rep *tblJSON, parts []tblPart) {
	for _, p := range parts {
		if p.union == nil {
			continue
		}
		u := *p.union
		u.Share, u.Rho, u.Epsilon = p.share, p.b.Rho, p.b.Epsilon
		u.ExpectedTotalSqErr, u.ExpectedWeighted = p.r.ExpectedTotalSquaredError(), p.r.ExpectedWeightedError()
		rep.UnionParts = append(rep.UnionParts, u)
	}
	if len(rep.UnionParts) > 0 && len(rep.UnionParts) == len(parts) {
		// The shares are the parts', not the terms': union_parts says them.
		rep.SplitTerms = nil
		rep.Template = "union"
		rep.Plan = strings.SplitN(parts[0].plan, ", part ", 2)[0] + ", measured part by part"
	}
}

// printUnionParts prints a union's parts, measured part by part, with their
// shares of the budget.
func printUnionParts(stdout io.Writer, rep *tblJSON) {
	for _, u := range rep.UnionParts {
		b := fmt.Sprintf("rho=%.6g", u.Rho)
		if u.Epsilon > 0 {
			b = fmt.Sprintf("eps=%.6g", u.Epsilon)
		}
		fmt.Fprintf(stdout, "union part %-3d %s of terms %s (weight %.6g): %.4g of the budget, %s, weighted error %.6g\n",
			u.Part, u.Kind, strings.Join(u.Terms, ", "), u.Weight, u.Share, b, u.ExpectedWeighted)
	}
}
