package marginals

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// CheckGrid reports, without drawing any noise, whether Measure(tables, s,
// sigma) could add its noise: every residual's values must lie within
// noise.MaxGridUnits of its noise grid. Call it before charging a budget,
// so that data too large for the noise (counts near 10¹⁹·σ) are refused
// while the budget is still unspent. It computes the residuals exactly as
// Measure does.
func (p *Plan) CheckGrid(tables []Table, sigma float64) error {
	order, err := p.checkTables(tables)
	if err != nil {
		return err
	}
	sens2 := 0.0
	for _, r := range p.Residuals {
		sens2 += r.Sensitivity2 / r.Variance
	}
	guard := math.Sqrt(math.Max(1, sens2))
	done := make([]bool, len(p.Residuals))
	buf := make([]int, 0, 64)
	for _, ti := range order {
		tab := tables[ti]
		forSubsets(p.Sizes, tab.Attrs, buf, func(t []int, _ uint64) bool {
			j, ok := p.lat.lookup(t)
			if !ok || done[j] {
				return true
			}
			done[j] = true
			var g float64
			if g, err = noise.Grid(sigma * math.Sqrt(p.Residuals[j].Variance) * guard); err != nil {
				return false
			}
			err = fitsGrid(p.residualValues(tab, t), g, "residual", t)
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckGrid reports, without drawing any noise, whether Measure(tables,
// src, cals) could add its noise: every measured table's cells must lie
// within noise.MaxGridUnits of its calibration's grid. Call it before charging a budget.
func (pp *PurePlan) CheckGrid(tables []Table, cals []calibrate.Calibration) error {
	if len(cals) != len(pp.Tables) {
		return errorf("%d calibrations for the %d tables of the plan", len(cals), len(pp.Tables))
	}
	if _, err := pp.base.checkTables(tables); err != nil {
		return err
	}
	for i, tb := range pp.Tables {
		found := -1
		for k, t := range tables {
			if isSubset(tb.Attrs, t.Attrs) && (found < 0 || len(t.Values) < len(tables[found].Values)) {
				found = k
			}
		}
		if found < 0 {
			return errorf("no table covers the marginal %v; give the tables of %v", tb.Attrs, pp.Needs())
		}
		if err := fitsGrid(pp.base.marginalize(tables[found], tb.Attrs), cals[i].Grid, "table", slices.Clone(tb.Attrs)); err != nil {
			return err
		}
	}
	return nil
}

// fitsGrid refuses values beyond noise.MaxGridUnits of grid g.
func fitsGrid(vals []float64, g float64, what string, attrs []int) error {
	for k, v := range vals {
		if math.Abs(v/g) >= noise.MaxGridUnits {
			return errorf("%s %v, value %d is %.6g, too large for the noise grid %g of this budget (at most %.3g): counts this large cannot be released at this budget", what, fmt.Sprint(attrs), k, v, g, noise.MaxGridUnits*g)
		}
	}
	return nil
}
