package compare

// The reference of RatioReference. Under Gaussian noise it is the certified
// optimum (the optimized row). Under Laplace noise that row is still the
// Gaussian optimum, which can be much worse than simple ε-DP strategies, so
// a ratio to it would flatter every row; the reference is then the best
// ε-DP strategy of the comparison (Identity, the trees, wavelet, LRM: every
// row but the Gaussian-optimized one).

import (
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/privacy/accounting"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// setReference fills RatioReference of every successful row.
func setReference(rows []Row, nz accounting.Noise) {
	ref := -1
	for i, r := range rows {
		if r.Err != nil {
			continue
		}
		if nz.Mechanism == calibrate.Laplace {
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
			rows[j].RatioReference = rows[j].Report.RMSE / rows[ref].Report.RMSE
		}
	}
}

// Err joins the failed rows into one error (nil when every row worked): a
// comparison with a missing row is not a successful comparison.
func (r *Result) Err() error {
	var msgs []string
	for _, row := range r.Rows {
		if row.Err != nil {
			msgs = append(msgs, fmt.Sprintf("%s: %v", row.Strategy, row.Err))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%d row(s) failed: %s", len(msgs), strings.Join(msgs, "; "))
}
