package tables

import (
	"math"
	"slices"
)

// projectSimplex writes to dst the Euclidean projection of v onto the
// scaled simplex {x ≥ 0, Σx = total} (total ≥ 0): x = max(v − τ, 0) with τ
// the root of Σ max(v − τ, 0) = total. τ comes from Michelot's (1986)
// pivot iteration — a shrinking active set, expected O(n) — falling back,
// after a bounded number of passes, to the sort-based rule of Held, Wolfe
// & Crowder (1974), O(n log n). work is scratch of len(v) (reused).
func projectSimplex(dst, v []float64, total float64, work []float64) {
	if total <= 0 {
		clear(dst)
		return
	}
	tau := simplexThreshold(v, total, work)
	for i, x := range v {
		dst[i] = math.Max(x-tau, 0)
	}
}

// simplexThreshold returns τ with Σ max(vᵢ − τ, 0) = total (total > 0).
func simplexThreshold(v []float64, total float64, work []float64) float64 {
	act := append(work[:0], v...)
	sum := 0.0
	for _, x := range act {
		sum += x
	}
	tau := (sum - total) / float64(len(act))
	for pass := 0; pass < 64; pass++ {
		k := 0
		s := 0.0
		for _, x := range act {
			if x > tau {
				act[k] = x
				s += x
				k++
			}
		}
		if k == len(act) {
			return tau // no element left the active set: τ is exact
		}
		act = act[:k]
		tau = (s - total) / float64(k)
	}
	return sortThreshold(v, total, work)
}

// sortThreshold is simplexThreshold by the sort rule: τ = (Σ_{j≤ρ} u_j −
// total)/ρ, u sorted decreasingly and ρ the largest j with
// u_j > (Σ_{i≤j} u_i − total)/j.
func sortThreshold(v []float64, total float64, work []float64) float64 {
	u := append(work[:0], v...)
	slices.Sort(u)
	s := 0.0
	tau := math.Inf(-1)
	for j := len(u) - 1; j >= 0; j-- {
		s += u[j]
		t := (s - total) / float64(len(u)-j)
		if u[j] <= t {
			break
		}
		tau = t
	}
	return tau
}

// cumulativeRound rounds x in place to integers by rounding its running
// sums: cell i becomes round(Cᵢ) − round(Cᵢ₋₁), Cᵢ = x₀ + … + xᵢ. The
// total becomes round(Σx); every run of consecutive cells moves by less
// than 1 in total (so every cell by less than 1), which for a row-major
// histogram bounds the rounding error of every table on a leading run of
// the attributes by 1 per cell, and non-negative cells stay non-negative
// (the running sums only grow).
func cumulativeRound(x []float64) {
	c, prev := 0.0, 0.0
	for i, v := range x {
		c += v
		r := math.Round(c)
		x[i] = r - prev
		prev = r
	}
}
