package workload

import (
	"slices"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// The built-in random workloads (Parse's wrange and wdiscrete) never leave a
// cell that no query touches. Such a cell has a zero column in W, so V is
// singular, no strategy can estimate the cell, and the usual advice — drop
// the cell — is not something a user can do to a generated workload. The
// raw constructors NewWRange and NewWDiscrete keep the paper's distribution
// unconditioned; Parse draws from the distribution conditioned on every cell
// being touched, and says so in the workload's name (",redrawn=K").

// maxRedraws bounds the rejection loops below; past it the parameters make
// coverage so unlikely that the user must change them.
const maxRedraws = 10000

// newWRangeCovering draws m ranges as NewWRange does (the first draw is
// identical) and redraws the whole set until every cell is covered: the
// ranges are exchangeable, so whole-set rejection samples exactly the
// conditioned distribution.
func newWRangeCovering(n, m int, seed uint64) (*WRange, error) {
	w, err := NewWRange(n, m, seed)
	if err != nil {
		return nil, err
	}
	rng := newWorkloadRand(seed, 1)
	for r := 0; r < m; r++ { // replay the first draw to continue its stream
		rng.IntN(n)
		rng.IntN(n)
	}
	cover := make([]int, n+1)
	for attempt := 0; ; attempt++ {
		clear(cover)
		for r := range w.Lo {
			cover[w.Lo[r]]++
			cover[w.Hi[r]+1]--
		}
		covered, run := true, 0
		for c := 0; c < n; c++ {
			run += cover[c]
			if run == 0 {
				covered = false
				break
			}
		}
		if covered {
			w.Redrawn = attempt
			return w, nil
		}
		if attempt == maxRedraws {
			return nil, inputerr.Errorf("workload", "wrange with m=%d ranges on n=%d cells left a cell no range covers in each of %d draws; use a larger m (about n/2 or more)", m, n, maxRedraws+1)
		}
		for r := 0; r < m; r++ {
			a, b := rng.IntN(n), rng.IntN(n)
			w.Lo[r], w.Hi[r] = min(a, b), max(a, b)
		}
	}
}

// newWDiscreteCovering draws as NewWDiscrete does, then redraws every column
// that came out all zero until it has a nonzero entry. The entries are
// independent, so the distribution conditioned on "no zero column" is the
// product of the per-column conditionals, and per-column rejection samples
// it exactly (the rows keep their columns in increasing order).
func newWDiscreteCovering(n, m int, pNeg, pPos float64, seed uint64) (*WDiscrete, error) {
	w, err := NewWDiscrete(n, m, pNeg, pPos, seed)
	if err != nil {
		return nil, err
	}
	touched := make([]bool, n)
	for _, cols := range w.Cols {
		for _, c := range cols {
			touched[c] = true
		}
	}
	rng := newWorkloadRand(seed, 3) // a stream of its own: the first draw stays NewWDiscrete's
	for c := 0; c < n; c++ {
		if touched[c] {
			continue
		}
		w.Redrawn++
		for attempt := 0; !touched[c]; attempt++ {
			if attempt == maxRedraws {
				return nil, inputerr.Errorf("workload", "wdiscrete with m=%d queries and pneg+ppos=%g leaves cell %d untouched in each of %d draws; use a larger m or larger probabilities", m, pNeg+pPos, c, maxRedraws)
			}
			for r := 0; r < m; r++ {
				u := rng.Float64()
				var sign int8
				switch {
				case u < pNeg:
					sign = -1
				case u < pNeg+pPos:
					sign = 1
				default:
					continue
				}
				k, _ := slices.BinarySearch(w.Cols[r], c)
				w.Cols[r] = slices.Insert(w.Cols[r], k, c)
				w.Signs[r] = slices.Insert(w.Signs[r], k, sign)
				touched[c] = true
			}
		}
	}
	return w, nil
}
