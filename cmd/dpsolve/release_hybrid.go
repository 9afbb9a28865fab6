package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// A union measured part by part (tables.PrepareParts) reports its parts
// with their shares of the budget.

// tblUnionPartJSON is one part of a union measured part by part, in
// release.json's union_parts.
type tblUnionPartJSON struct {
	Part   int      `json:"part"`
	Kind   string   `json:"kind"`
	Weight float64  `json:"weight"`
	Terms  []string `json:"terms"`
	Share  float64  `json:"share"`
	// Budget is the part's budget, written after share (MarshalJSON).
	Budget             calibrate.Budget `json:"-"`
	ExpectedTotalSqErr float64          `json:"expected_total_squared_error"`
	ExpectedWeighted   float64          `json:"expected_weighted_error"`
}

// MarshalJSON writes the part's budget after its share.
func (u tblUnionPartJSON) MarshalJSON() ([]byte, error) {
	type plain tblUnionPartJSON
	return calibrate.MarshalInline(plain(u), "share", u.Budget)
}

// unionReport relabels a report of parts that are a union's (not --split
// terms') and lists the parts with their shares.
func unionReport(rep *tblJSON, parts []tables.Part) {
	for _, p := range parts {
		if p.Union == nil {
			continue
		}
		u := tblUnionPartJSON{Part: p.Union.Part, Kind: p.Union.Kind, Weight: p.Union.Weight, Terms: p.Union.Terms}
		u.Share, u.Budget = p.Share, p.Budget
		u.ExpectedTotalSqErr, u.ExpectedWeighted = p.Release.ExpectedTotalSquaredError(), p.Release.ExpectedWeightedError()
		rep.UnionParts = append(rep.UnionParts, u)
	}
	if len(rep.UnionParts) > 0 && len(rep.UnionParts) == len(parts) {
		// The shares are the parts', not the terms': union_parts says them.
		rep.SplitTerms = nil
		rep.Template = "union"
		rep.Plan = strings.SplitN(parts[0].Plan, ", part ", 2)[0] + ", measured part by part"
	}
}

// printUnionParts prints a union's parts, measured part by part, with their
// shares of the budget.
func printUnionParts(stdout io.Writer, rep *tblJSON) {
	for _, u := range rep.UnionParts {
		b := fmt.Sprintf("rho=%.6g", u.Budget.Rho())
		if u.Budget.Epsilon() > 0 {
			b = fmt.Sprintf("eps=%.6g", u.Budget.Epsilon())
		}
		fmt.Fprintf(stdout, "union part %-3d %s of terms %s (weight %.6g): %.4g of the budget, %s, weighted error %.6g\n",
			u.Part, u.Kind, strings.Join(u.Terms, ", "), u.Weight, u.Share, b, u.ExpectedWeighted)
	}
}
