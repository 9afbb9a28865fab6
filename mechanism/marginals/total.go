package marginals

import "math"

// TotalStd returns the standard deviation of the least-squares grand total
// of m's reconstruction (every reconstructed table sums to the residual
// coordinate θ_∅, whose noise is the ∅ residual's), and false when the plan
// does not measure the empty residual (no estimable marginal).
func (m *Measurement) TotalStd() (float64, bool) {
	if m == nil {
		return 0, false
	}
	for _, r := range m.Residuals {
		if len(r.Attrs) == 0 {
			return r.Std, true
		}
	}
	return 0, false
}

// TotalStd returns the standard deviation of the generalized-least-squares
// grand total of Reconstruct when table i's noise has variance
// tableVar[i] (in Tables order): √Var θ̂_∅, the precision-weighted
// combination of every table's total. It is false for a plan with no
// tables or a variance count that does not match.
func (pp *PurePlan) TotalStd(tableVar []float64) (float64, bool) {
	if len(tableVar) != len(pp.Tables) || len(pp.Tables) == 0 {
		return 0, false
	}
	j, ok := pp.base.lat.lookup([]int{})
	if !ok {
		return 0, false
	}
	return math.Sqrt(pp.residualVariances(tableVar)[j]), true
}
