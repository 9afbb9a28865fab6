package tables

import (
	"cmp"
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
	projectSimplexFrom(dst, v, total, work, math.Inf(-1))
}

// projectSimplexFrom is projectSimplex warm-started from hint, a threshold
// τ of a nearby vector (the previous iterate's; −Inf for none), and
// returns this projection's τ (NaN when total ≤ 0). Michelot's iteration
// may start from any τ₀ ≤ τ*: the active set {v > τ₀} then holds every
// cell that stays positive, and each step τ ← (Σ_{v>τ} v − total)/#{v>τ}
// rises without passing τ*. A hint above τ* gives a start below it by one
// Newton step back (see warmThreshold). An iterative solver's hint keeps
// the active set to about the cells that stay positive from the first
// pass on.
func projectSimplexFrom(dst, v []float64, total float64, work []float64, hint float64) float64 {
	if total <= 0 {
		clear(dst)
		return math.NaN()
	}
	tau := thresholdFrom(v, total, work, hint)
	dst = dst[:len(v)]
	for i, x := range v {
		if d := x - tau; d > 0 {
			dst[i] = d
		} else {
			dst[i] = 0
		}
	}
	return tau
}

// thresholdFrom returns projectSimplexFrom's τ without writing the
// projection (total > 0): the caller that forms max(v − τ, 0) in a pass of
// its own saves one over the vectors.
func thresholdFrom(v []float64, total float64, work []float64, hint float64) float64 {
	tau := math.NaN()
	if hint > math.Inf(-1) {
		tau = warmThreshold(v, total, work, hint)
	}
	if math.IsNaN(tau) {
		tau = simplexThreshold(v, total, work)
	}
	return tau
}

// warmThreshold is simplexThreshold started from hint (NaN when no v
// exceeds hint: then the cold start).
func warmThreshold(v []float64, total float64, work []float64, hint float64) float64 {
	k, s := 0, 0.0
	for _, x := range v {
		if x > hint {
			work[k] = x
			s += x
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	if s-float64(k)*hint < total {
		// hint is above τ*. f(τ) = Σ max(v − τ, 0) − total is convex
		// with slope −k just left of hint, so f(τ) ≥ f(hint) + k·(hint −
		// τ) and τ₀ = (s − total)/k, where that line is 0, has f(τ₀) ≥ 0:
		// a start below τ*, and close to it, on all of v.
		return michelot(v, total, (s-total)/float64(k), v, work)
	}
	return michelot(work[:k], total, (s-total)/float64(k), v, work)
}

// simplexThreshold returns τ with Σ max(vᵢ − τ, 0) = total (total > 0).
func simplexThreshold(v []float64, total float64, work []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return michelot(v, total, (sum-total)/float64(len(v)), v, work)
}

// michelot runs Michelot's pivot iteration from τ = tau ≤ τ* on the
// active candidates act (v itself or a prefix of work), compacting them
// into work; after 64 passes it falls back to the sort rule on all of v.
func michelot(act []float64, total, tau float64, v, work []float64) float64 {
	n := len(act)
	for pass := 0; pass < 64; pass++ {
		k := 0
		s := 0.0
		for _, x := range act {
			if x > tau {
				work[k] = x
				s += x
				k++
			}
		}
		if k == n {
			return tau // no element left the active set: τ is exact
		}
		act, n = work[:k], k
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

// twoStepThreshold returns τ with Σ dᵢ·max(uᵢ − τ, 0) = total (total > 0;
// dᵢ = pos > 0 where cls[i] > 0, other > 0 elsewhere): the threshold of the
// projection onto the simplex {x ≥ 0, Σx = total} in the metric
// Σ (xᵢ − vᵢ)²/dᵢ, which is xᵢ = dᵢ·max(uᵢ − τ, 0) with uᵢ = vᵢ/dᵢ. It is
// Michelot's pivot iteration weighted: φ(τ) = Σ dᵢ·max(uᵢ − τ, 0) − total
// is convex and decreasing, and from τ₀ ≤ τ* each Newton step τ ←
// (Σ_{u>τ} dᵢuᵢ − total)/Σ_{u>τ} dᵢ rises without passing τ*, ending
// when no cell leaves {u > τ}. hint is a nearby threshold (the previous
// iterate's; −Inf for none): below τ* it is the start; above it, one
// Newton step back from it is (the tangent there lies below φ). The
// candidates of each class are compacted into work (len(u)), the pos
// class from the front and the other from the back; after 64 passes the
// sort rule decides (twoStepSortThreshold).
func twoStepThreshold(u, cls []float64, pos, other, total float64, work []float64, hint float64) float64 {
	var c twoStepCandidates
	if hint > math.Inf(-1) {
		c = scanTwoStep(u, cls, work, hint)
	}
	return twoStepFrom(u, cls, pos, other, total, work, hint, c)
}

// twoStepCandidates is a scan of u above a threshold into work: the pos
// class in work[:front], the other in work[back:], and their sums.
type twoStepCandidates struct {
	front, back int
	sp, so      float64
}

// scanTwoStep collects the u above t (twoStepThreshold's candidates).
func scanTwoStep(u, cls, work []float64, t float64) twoStepCandidates {
	c := twoStepCandidates{back: len(u)}
	for i, x := range u {
		if x > t {
			if cls[i] > 0 {
				work[c.front] = x
				c.sp += x
				c.front++
			} else {
				c.back--
				work[c.back] = x
				c.so += x
			}
		}
	}
	return c
}

// twoStepFrom is twoStepThreshold given the scan of u above hint (c,
// ignored when hint is −Inf): a caller that forms u can collect them in
// the same pass.
func twoStepFrom(u, cls []float64, pos, other, total float64, work []float64, hint float64, c twoStepCandidates) float64 {
	n := len(u)
	weight := func(c twoStepCandidates) float64 { return pos*float64(c.front) + other*float64(n-c.back) }
	step := func(c twoStepCandidates) float64 { return (pos*c.sp + other*c.so - total) / weight(c) }
	var tau float64
	warm := false
	if hint > math.Inf(-1) {
		if sd := weight(c); sd > 0 {
			warm = true
			tau = step(c)
			if pos*c.sp+other*c.so-sd*hint < total {
				// hint is above τ*: the step back is below it; the cells
				// between it and hint are candidates again, and the next
				// step is from them.
				c = scanTwoStep(u, cls, work, tau)
				tau = step(c)
			}
		}
	}
	if !warm {
		c = scanTwoStep(u, cls, work, math.Inf(-1))
		tau = step(c)
	}
	for pass := 0; pass < 64; pass++ {
		next := twoStepCandidates{back: n}
		for _, x := range work[:c.front] {
			if x > tau {
				work[next.front] = x
				next.sp += x
				next.front++
			}
		}
		for j := n - 1; j >= c.back; j-- {
			if x := work[j]; x > tau {
				next.back--
				work[next.back] = x
				next.so += x
			}
		}
		if next.front == c.front && next.back == c.back {
			return tau
		}
		c = next
		if !(weight(c) > 0) {
			break
		}
		tau = step(c)
	}
	return twoStepSortThreshold(u, cls, pos, other, total)
}

// twoStepSortThreshold is twoStepThreshold by the sort rule: with u in
// decreasing order, τ = (Σ_{j≤ρ} dⱼuⱼ − total)/Σ_{j≤ρ} dⱼ for the largest ρ
// with u_ρ above it.
func twoStepSortThreshold(u, cls []float64, pos, other, total float64) float64 {
	idx := make([]int, len(u))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(u[b], u[a]) })
	s, sd := 0.0, 0.0
	tau := math.Inf(-1)
	for _, i := range idx {
		d := other
		if cls[i] > 0 {
			d = pos
		}
		s += d * u[i]
		sd += d
		t := (s - total) / sd
		if u[i] <= t {
			break
		}
		tau = t
	}
	return tau
}
