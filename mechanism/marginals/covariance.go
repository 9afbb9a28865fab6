package marginals

import "slices"

// Covariance returns the covariance, at the plan's unit noise, between cell
// ci of workload marginal i and cell cj of marginal j (cells given as
// values of the marginals' attributes, in their order; unweighted). With
// E_{S,T} = ⊗_{a∈T} U_a ⊗_{a∈S∖T} 1/d_a the reconstruction map of residual T
// into marginal S,
//
//	Cov(Ŝ₁, Ŝ₂) = Σ_{T ⊆ S₁∩S₂} σ_T² E_{S₁,T} E_{S₂,T}ᵀ,
//
// and since U_a U_aᵀ = I − J/d_a its entry is
//
//	Σ_T σ_T² Π_{a∈T}(δ(c₁a, c₂a) − 1/d_a) Π_{a∈S₁∖T} 1/d_a Π_{a∈S₂∖T} 1/d_a.
//
// For i = j and ci = cj it is the marginal's CellVariance. Both marginals
// must be estimable.
func (p *Plan) Covariance(i int, ci []int, j int, cj []int) (float64, error) {
	for _, q := range []struct {
		m    int
		cell []int
	}{{i, ci}, {j, cj}} {
		if q.m < 0 || q.m >= len(p.Sets) {
			return 0, errorf("marginal %d is not in the workload (it has %d)", q.m, len(p.Sets))
		}
		if !p.lat.estimable[q.m] {
			return 0, errorf("marginal %v is not estimable from this plan", p.Sets[q.m].Attrs)
		}
		attrs := p.Sets[q.m].Attrs
		if len(q.cell) != len(attrs) {
			return 0, errorf("a cell of marginal %v needs %d values, got %d", attrs, len(attrs), len(q.cell))
		}
		for k, a := range attrs {
			if q.cell[k] < 0 || q.cell[k] >= p.Sizes[a] {
				return 0, errorf("value %d of attribute %d is outside 0…%d", q.cell[k], a, p.Sizes[a]-1)
			}
		}
	}
	s1, s2 := p.Sets[i].Attrs, p.Sets[j].Attrs
	// Per attribute of S₁∪S₂: its value in each cell (−1 when absent).
	val1, val2 := map[int]int{}, map[int]int{}
	for k, a := range s1 {
		val1[a] = ci[k]
	}
	for k, a := range s2 {
		val2[a] = cj[k]
	}
	var common []int
	for _, a := range s1 {
		if slices.Contains(s2, a) {
			common = append(common, a)
		}
	}
	cov := 0.0
	buf := make([]int, 0, len(common))
	forSubsets(p.Sizes, common, buf, func(t []int, mask uint64) bool {
		r, ok := p.lat.lookup(t)
		if !ok {
			return true // cannot happen for estimable marginals
		}
		term := p.Residuals[r].Variance
		for k, a := range common {
			if mask&(1<<k) != 0 {
				d := float64(p.Sizes[a])
				delta := 0.0
				if val1[a] == val2[a] {
					delta = 1
				}
				term *= delta - 1/d
			}
		}
		for _, a := range s1 {
			if !slices.Contains(t, a) {
				term /= float64(p.Sizes[a])
			}
		}
		for _, a := range s2 {
			if !slices.Contains(t, a) {
				term /= float64(p.Sizes[a])
			}
		}
		cov += term
		return true
	})
	return cov, nil
}
