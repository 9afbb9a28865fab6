package synth

import (
	"math"
	"testing"
)

// TestFromMarginal: the residuals of a table are its ANOVA decomposition,
// so expanding every returned residual back over the table's cells (a
// residual of T, a centered T-marginal, spread evenly over the cells of the
// dropped attributes; the total over all cells) and adding them gives the
// table again; each residual's variance
// is the cell variance times the number of cells summed into one of its
// cells; a residual of a size-1 attribute (no coordinates) is left out.
func TestFromMarginal(t *testing.T) {
	sizes := []int{2, 1, 3, 4}
	attrs := []int{0, 2, 3}
	vals := make([]float64, 2*3*4)
	for i := range vals {
		vals[i] = float64((i*7)%11) + 0.25*float64(i%3)
	}
	ms, err := FromMarginal(sizes, attrs, vals, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 8 {
		t.Fatalf("%d measurements, want the 8 subsets of 3 attributes", len(ms))
	}
	sum := make([]float64, len(vals))
	for _, m := range ms {
		dropped := 1.0
		for _, a := range attrs {
			if !containsAttr(m.Attrs, a) {
				dropped *= float64(sizes[a])
			}
		}
		if m.Variance != 0.5*dropped {
			t.Fatalf("residual %v: variance %v, want %v", m.Attrs, m.Variance, 0.5*dropped)
		}
		for c := range vals {
			// c's codes: attribute 0 slowest, 3 fastest.
			code := map[int]int{0: c / 12, 2: (c / 4) % 3, 3: c % 4}
			idx := 0
			for _, a := range m.Attrs {
				idx = idx*sizes[a] + code[a]
			}
			sum[c] += m.Values[idx] / dropped // P_T of the table: its T-marginal, centered, spread over the dropped cells
		}
	}
	for c := range vals {
		if math.Abs(sum[c]-vals[c]) > 1e-12 {
			t.Fatalf("cell %d: residuals add to %v, the table holds %v", c, sum[c], vals[c])
		}
	}
	with1, err := FromMarginal(sizes, []int{1, 2}, []float64{1, 2, 3}, 1)
	if err != nil || len(with1) != 2 {
		t.Fatalf("a table with a size-1 attribute gave %d measurements, %v; want 2 (∅, {2})", len(with1), err)
	}
	if _, err := FromMarginal(sizes, attrs, vals[:5], 1); err == nil {
		t.Fatal("a short table was accepted")
	}
}

func containsAttr(s []int, a int) bool {
	for _, x := range s {
		if x == a {
			return true
		}
	}
	return false
}
