package tables

import (
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
)

// A hybrid union (plan.Union with parts of different kinds: the marginals
// template's residual plan of some terms, Kronecker strategies for the
// others) has no joint measurement here, but it is the same mechanism as
// measuring each part on its own: part k is measured at weight wₖ with the
// union's noise, i.e. at weight 1 with noise scaled by 1/wₖ. Under ρ-zCDP
// a Gaussian measurement of L2 sensitivity 1 and noise σ/wₖ costs
// ρₖ = wₖ²/(2σ²) = wₖ²·ρ, and Σ wₖ² = 1 gives Σ ρₖ = ρ (sequential
// composition, Bun & Steinke 2016, Lemma 2.3); under pure ε a Laplace
// measurement of L1 sensitivity 1 and scale b/wₖ costs εₖ = wₖ·ε, and
// Σ wₖ = 1 gives Σ εₖ = ε. Part k's error is then Eₖ/wₖ² per unit noise
// and the total is the union's objective. Analytic (ε,δ) calibration does
// not compose this way, so there a release keeps to strategies it
// measures jointly.

// releaseAccept is the plan filter of a release of w under b: strategies
// FromPlan measures jointly and, where b composes by addition, unions
// whose every part it measures on its own.
func releaseAccept(w *domain.Kron, b Budget) func(*plan.Plan) error {
	return func(s *plan.Plan) error {
		_, err := FromPlan(s, w)
		if err == nil || s.Kind() != "union" || !pureOrZCDP(b) {
			return err
		}
		for _, p := range s.Parts {
			if _, perr := FromPlan(partStrategy(s, p), w); perr != nil {
				return fmt.Errorf("union part of terms %s: %w", strings.Join(p.Terms, ", "), perr)
			}
		}
		return nil
	}
}

// isHybrid reports whether s is a union that must be measured part by part.
func isHybrid(s *plan.Plan, w *domain.Kron) bool {
	if s.Kind() != "union" {
		return false
	}
	_, err := FromPlan(s, w)
	return err != nil
}

// partStrategy is union part p as a strategy of its own (sensitivity 1).
func partStrategy(s *plan.Plan, p plan.Part) *plan.Plan {
	if p.Strategy != nil {
		return p.Strategy
	}
	return &plan.Plan{Template: "kron", Noise: s.Noise, Factors: p.Factors}
}

// unionShare is the fraction of the budget union part weight w spends (see
// above): w² under ρ-zCDP, w under pure ε.
func unionShare(weight float64, b Budget) float64 {
	if pure(b) {
		return weight
	}
	return weight * weight
}

// unionParts prepares the release of hybrid union s of w's terms under b,
// one Part per union part, at the part's share of b. The shares are
// normalized to add up to 1 (the weights do up to rounding), so the parts'
// budgets add up to b, which a release charges once.
func (req *PartsRequest) unionParts(s *plan.Plan, w *domain.Kron, b Budget, desc string) ([]Part, error) {
	if !pureOrZCDP(b) {
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
	budgets, err := SplitTerms(b, shares, len(shares))
	if err != nil {
		return nil, fmt.Errorf("union part budgets: %w", err)
	}
	total := 0.0
	for _, sh := range shares {
		total += sh
	}
	parts := make([]Part, 0, len(s.Parts))
	for k, p := range s.Parts {
		if req.CheckPart != nil {
			if err := req.CheckPart(PartCheck{Budget: budgets[k], Union: &s.Parts[k]}); err != nil {
				return nil, err
			}
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
		ps, err := FromPlan(partStrategy(s, p), sw)
		if err != nil {
			return nil, err
		}
		r, err := Prepare(sw, ps, budgets[k])
		if err != nil {
			return nil, fmt.Errorf("union part of terms %s: %w", strings.Join(p.Terms, ", "), err)
		}
		parts = append(parts, Part{Release: r, Terms: terms, Plan: fmt.Sprintf("%s, part %d of %d (%s)", desc, k+1, len(s.Parts), ps.Template()),
			Budget: budgets[k], Share: shares[k] / total, Union: &UnionPartOf{Part: k + 1, Kind: ps.Template(), Weight: p.Weight, Terms: p.Terms}})
	}
	return parts, nil
}
