package synth

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// roundTo rounds the non-negative weights w·n/Σw to integers summing exactly
// to n (largest remainders; ties to the lower index), so every count is
// ⌊t⌋ or ⌊t⌋ + 1 of its target t.
func roundTo(w []float64, n int) []int {
	out := make([]int, len(w))
	s := 0.0
	for _, v := range w {
		s += v
	}
	if n == 0 || len(w) == 0 {
		return out
	}
	if !(s > 0) {
		w = make([]float64, len(w))
		for i := range w {
			w[i] = 1
		}
		s = float64(len(w))
	}
	type rem struct {
		f float64
		i int
	}
	rems := make([]rem, len(w))
	got := 0
	for i, v := range w {
		t := v / s * float64(n)
		f := math.Floor(t)
		out[i] = int(f)
		got += out[i]
		rems[i] = rem{t - f, i}
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].f > rems[b].f })
	for k := 0; got < n; k++ {
		out[rems[k%len(rems)].i]++
		got++
	}
	return out
}

// Sample draws n records from the model along the junction tree with
// controlled rounding: the root clique's counts are n·p(C) rounded to
// integers that sum to n, and every later clique C splits the records of
// each separator value s into n_s·p(C∖S | s) rounded to integers summing to
// n_s; only which record gets which of those values is random (a shuffle
// from rng). So every clique marginal of the records is within the rounding
// of n·p(C) instead of carrying multinomial sampling noise; marginals across
// cliques follow the model's conditional independences through the shuffle.
// Sampling is post-processing of the model: rng need not be secure.
func (m *Model) Sample(n int, rng *rand.Rand) *Data {
	t := m.Tree
	d := &Data{Sizes: slices.Clone(t.Sizes), Cols: make([][]int32, len(t.Sizes))}
	for a := range d.Cols {
		d.Cols[a] = make([]int32, n)
	}
	assigned := make([]bool, len(t.Sizes))
	for _, i := range t.Order {
		c := t.Cliques[i]
		pc := m.CliqueMarginal(i)
		sep := t.Sep[i]
		free := make([]int, 0, len(c))
		for _, a := range c {
			if !assigned[a] {
				free = append(free, a)
			}
		}
		// Group the records by their separator value.
		sepCells := cells(t.Sizes, sep)
		groups := make([][]int, sepCells)
		strides := make([]int, len(sep))
		st := 1
		for k := len(sep) - 1; k >= 0; k-- {
			strides[k] = st
			st *= t.Sizes[sep[k]]
		}
		for r := 0; r < n; r++ {
			idx := 0
			for k, a := range sep {
				idx += int(d.Cols[a][r]) * strides[k]
			}
			groups[idx] = append(groups[idx], r)
		}
		// p(C) laid out as [sep cell][free cell]: C's cells map to both.
		freeCells := cells(t.Sizes, free)
		cond := make([]float64, sepCells*freeCells)
		si := m.idx.get(c, sep)
		fi := m.idx.get(c, free)
		for j, v := range pc {
			cond[int(si[j])*freeCells+int(fi[j])] += v
		}
		codes := make([]int, len(free))
		for s, recs := range groups {
			if len(recs) == 0 {
				continue
			}
			counts := roundTo(cond[s*freeCells:(s+1)*freeCells], len(recs))
			rng.Shuffle(len(recs), func(a, b int) { recs[a], recs[b] = recs[b], recs[a] })
			pos := 0
			for f, k := range counts {
				// Decode f into the free attributes' codes.
				rem := f
				for q := len(free) - 1; q >= 0; q-- {
					codes[q] = rem % t.Sizes[free[q]]
					rem /= t.Sizes[free[q]]
				}
				for _, r := range recs[pos : pos+k] {
					for q, a := range free {
						d.Cols[a][r] = int32(codes[q])
					}
				}
				pos += k
			}
		}
		for _, a := range free {
			assigned[a] = true
		}
	}
	return d
}
