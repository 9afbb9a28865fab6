package records

import "github.com/dpsolve/dpsolve/model/domain"

// Marginalize sums a histogram x over the domain attrs (row-major, first
// attribute slowest, as ReadHistogram returns it) into one marginal table
// per set of attribute positions, in the order of sets; each set's
// positions are taken in the order given (ReadMarginals sorts them, so
// give them sorted for the same tables). It returns nil for no sets. It
// is the histogram-side twin of ReadMarginals: on the histogram of a
// records file both give the same tables.
func Marginalize(x []float64, attrs []domain.Attribute, sets [][]int) []Table {
	if len(sets) == 0 {
		return nil
	}
	out := make([]Table, len(sets))
	for s, set := range sets {
		sizes := make([]int, len(set))
		n := 1
		for k, a := range set {
			sizes[k] = attrs[a].Size
			n *= sizes[k]
		}
		out[s] = Table{Attrs: append([]int(nil), set...), Sizes: sizes, Counts: make([]float64, n)}
	}
	codes := make([]int, len(attrs))
	for cell, v := range x {
		c := cell
		for i := len(attrs) - 1; i >= 0; i-- {
			codes[i] = c % attrs[i].Size
			c /= attrs[i].Size
		}
		for s := range out {
			idx := 0
			for k, a := range out[s].Attrs {
				idx = idx*out[s].Sizes[k] + codes[a]
			}
			out[s].Counts[idx] += v
		}
	}
	return out
}
