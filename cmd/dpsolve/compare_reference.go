package main

// The "× optimized" column of dpsolve compare. Under Gaussian noise the
// reference is the certified optimum (the optimized row). Under Laplace
// noise that row is still the Gaussian optimum, which can be much worse than
// simple ε-DP strategies, so a ratio to it would flatter every row; the
// reference is then the best ε-DP strategy on the table (Identity, the
// trees, wavelet, LRM: every row but the Gaussian-optimized one).

import (
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/accounting"
)

// setCompareReference fills RatioOptimized of every successful row.
func setCompareReference(rows []compareRow, nz accounting.Noise) {
	ref := -1
	for i, r := range rows {
		if r.Err != nil {
			continue
		}
		if nz.Mechanism == accounting.Laplace {
			if r.Strategy != "optimized" && (ref < 0 || r.Report.RMSE < rows[ref].Report.RMSE) {
				ref = i
			}
		} else if r.Strategy == "optimized" {
			ref = i
		}
	}
	if ref < 0 {
		return
	}
	for j := range rows {
		if rows[j].Err == nil {
			rows[j].RatioOptimized = rows[j].Report.RMSE / rows[ref].Report.RMSE
		}
	}
}

// compareReferenceHeader names the ratio column.
func compareReferenceHeader(mech accounting.Mechanism) string {
	if mech == accounting.Laplace {
		return "× best ε-DP"
	}
	return "× optimized"
}

// compareRowsError turns failed rows into the command's error (exit 1) once
// the table, with the rows that worked, has been printed: a comparison with
// a missing row is not a successful comparison.
func (o *compareJSON) rowsError() error {
	var msgs []string
	for _, r := range o.Rows {
		if r.Error != "" {
			msgs = append(msgs, fmt.Sprintf("%s: %s", r.Strategy, r.Error))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%d row(s) failed: %s", len(msgs), strings.Join(msgs, "; "))
}
