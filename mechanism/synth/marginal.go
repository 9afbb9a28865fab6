package synth

import "math"

// FromMarginal converts a noisy marginal table into Measurements: values
// holds the counts over the cells of attrs (increasing positions,
// row-major, the last attribute fastest), each cell with independent noise
// of variance cellVar. For every subset T of attrs it returns the residual
// of T of the table's T-marginal (Q_TᵀQ_T m_T, the form Fit takes), whose
// Helmert coordinates carry noise of variance cellVar·Π_{a∈attrs∖T} d_a;
// T = ∅ is the table's total. A published table (a release's answers) is
// fitted this way; correlations between the cells are ignored.
func FromMarginal(sizes, attrs []int, values []float64, cellVar float64) ([]Measurement, error) {
	if len(values) != cells(sizes, attrs) {
		return nil, inputf("a table over %v has %d cells, got %d values", attrs, cells(sizes, attrs), len(values))
	}
	if !(cellVar > 0) || math.IsInf(cellVar, 0) {
		return nil, inputf("a table over %v has cell variance %v", attrs, cellVar)
	}
	if len(attrs) > 20 {
		return nil, inputf("a table over %d attributes is too wide to fit", len(attrs))
	}
	k := len(attrs)
	strides := make([]int, k)
	st := 1
	for i := k - 1; i >= 0; i-- {
		strides[i] = st
		st *= sizes[attrs[i]]
	}
	var out []Measurement
	for mask := 0; mask < 1<<k; mask++ {
		sub := []int{}
		dropped, empty := 1.0, false
		for i, a := range attrs {
			if mask&(1<<i) != 0 {
				sub = append(sub, a)
				empty = empty || sizes[a] == 1 // a residual without coordinates
			} else {
				dropped *= float64(sizes[a])
			}
		}
		if empty {
			continue
		}
		m := make([]float64, cells(sizes, sub))
		for c, v := range values {
			idx := 0
			for i, a := range attrs {
				if mask&(1<<i) != 0 {
					idx = idx*sizes[a] + (c/strides[i])%sizes[a]
				}
			}
			m[idx] += v
		}
		if len(sub) > 0 {
			center(sizes, sub, m)
		}
		out = append(out, Measurement{Attrs: sub, Values: m, Variance: cellVar * dropped})
	}
	return out, nil
}
