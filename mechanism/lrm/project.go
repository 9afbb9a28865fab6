package lrm

import (
	"math"
	"slices"
)

// ProjectL1 replaces v by its Euclidean projection onto the unit ℓ1 ball
// {w : Σ|wᵢ| ≤ 1}, the unique minimizer of ‖w − v‖₂ over the ball.
//
// It is the sort-based algorithm of Duchi, Shalev-Shwartz, Singer & Chandra
// (ICML 2008, Fig. 1): a vector already in the ball is returned unchanged;
// otherwise, with u the magnitudes |vᵢ| sorted in decreasing order,
// ρ = max{j : u_j − (Σ_{i≤j} u_i − 1)/j > 0} and θ = (Σ_{i≤ρ} u_i − 1)/ρ, the
// projection is wᵢ = sign(vᵢ)·max(|vᵢ| − θ, 0). Ties and zero vectors need no
// special case. Rounding can leave Σ|wᵢ| above 1 by a few ulps of 1; the
// result is then scaled back so that Σ|wᵢ| ≤ 1 holds in floating point.
//
// scratch, if it has capacity len(v), is used for the sorted magnitudes to
// avoid an allocation; it may be nil. v must be finite.
func ProjectL1(v, scratch []float64) {
	var s float64
	for _, x := range v {
		s += math.Abs(x)
	}
	if s <= 1 {
		return
	}
	u := scratch[:0]
	if cap(u) < len(v) {
		u = make([]float64, 0, len(v))
	}
	for _, x := range v {
		u = append(u, math.Abs(x))
	}
	slices.Sort(u) // ascending; walk it from the end
	var cum, theta float64
	for j := 1; j <= len(u); j++ {
		uj := u[len(u)-j]
		cum += uj
		t := (cum - 1) / float64(j)
		if uj-t > 0 {
			theta = t
		} else {
			// The condition holds for j = 1..ρ and fails for every j > ρ
			// (Duchi et al., Lemma 2), so the first failure ends the scan.
			break
		}
	}
	shrinkL1(v, theta)
}

// ProjectL2 replaces v by its Euclidean projection onto the unit ℓ2 ball:
// v itself when ‖v‖₂ ≤ 1, otherwise v/‖v‖₂.
func ProjectL2(v []float64) {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s <= 1 {
		return
	}
	nrm := math.Sqrt(s)
	for i := range v {
		v[i] /= nrm
	}
	// Guard the last ulps: ‖v/‖v‖₂‖₂² can round to just above 1.
	for {
		s = 0
		for _, x := range v {
			s += x * x
		}
		if s <= 1 {
			return
		}
		for i := range v {
			v[i] *= 1 - 0x1p-52
		}
	}
}

// shrinkL1 sets vᵢ ← sign(vᵢ)·max(|vᵢ| − θ, 0). The exact result has
// Σ|vᵢ| = 1; when rounding leaves the computed sum above 1 it is scaled
// back (by a relative ~1e-16) so that the ball constraint holds in floating
// point.
func shrinkL1(v []float64, theta float64) {
	var out float64
	for i, x := range v {
		a := math.Abs(x) - theta
		if a <= 0 {
			v[i] = 0
			continue
		}
		v[i] = math.Copysign(a, x)
		out += a
	}
	for out > 1 {
		f := 1 / out
		if f == 1 {
			f = 1 - 0x1p-52
		}
		out = 0
		for i := range v {
			v[i] *= f
			out += math.Abs(v[i])
		}
	}
}

// projectL1 computes the same projection as ProjectL1 by Michelot's
// support-pruning iteration (1986) instead of a sort: starting from all
// entries, θ = (Σ_{active}|vᵢ| − 1)/|active| is recomputed after dropping
// every active entry with |vᵢ| ≤ θ, until none is dropped. θ increases
// monotonically to the θ of Duchi et al. and the final support is theirs,
// so the result is the exact projection; it needs a few linear passes
// instead of an O(r log r) sort, which matters in the L-step's inner loop.
// idx must have capacity len(v).
func projectL1(v []float64, idx []int) {
	var s float64
	for _, x := range v {
		s += math.Abs(x)
	}
	if s <= 1 {
		return
	}
	act := idx[:0]
	for i := range v {
		act = append(act, i)
	}
	theta := (s - 1) / float64(len(act))
	for {
		keep := act[:0]
		s = 0 // summed afresh, not by subtraction, to keep θ exact
		for _, i := range act {
			if a := math.Abs(v[i]); a > theta {
				keep = append(keep, i)
				s += a
			}
		}
		dropped := len(keep) != len(act)
		act = keep
		theta = (s - 1) / float64(len(act))
		if !dropped {
			break
		}
	}
	shrinkL1(v, theta)
}
