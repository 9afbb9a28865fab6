package synth

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

func TestRoundToKeepsTotalAndFloors(t *testing.T) {
	w := []float64{0.2, 1.7, 3.1, 0, 2.5}
	for n := 0; n < 40; n++ {
		c := roundTo(w, n)
		s := 0
		for i, v := range c {
			s += v
			tgt := w[i] / 7.5 * float64(n)
			if float64(v) < math.Floor(tgt) || float64(v) > math.Floor(tgt)+1 {
				t.Fatalf("n %d cell %d: %d for target %v", n, i, v, tgt)
			}
		}
		if s != n {
			t.Fatalf("n %d: total %d", n, s)
		}
	}
}

// The synthetic records reproduce every clique marginal of the model to
// within the rounding, far closer than independent draws would.
func TestSampleReproducesCliqueMarginals(t *testing.T) {
	sizes := []int{3, 4, 2, 5, 3}
	d := randomData(sizes, 2000, 7)
	ms := measure(t, d, [][]int{{0, 1}, {1, 2, 3}, {3, 4}, {0, 4}}, 5, 8)
	model, _, err := Fit(context.Background(), sizes, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	syn := model.Sample(n, rand.New(rand.NewPCG(1, 2)))
	if syn.Len() != n {
		t.Fatalf("%d records", syn.Len())
	}
	tr := model.Tree
	for i, c := range tr.Cliques {
		p := model.CliqueMarginal(i)
		got := syn.Marginal(c)
		// Separator counts of the records and of the model.
		sep := tr.Sep[i]
		ns := syn.Marginal(sep)
		ps := make([]float64, len(ns))
		si := subIndex(sizes, c, sep)
		sumInto(ps, p, si)
		worst, l1 := 0.0, 0.0
		for j := range p {
			e := math.Abs(got[j] - n*p[j])
			worst = math.Max(worst, e)
			l1 += e
			// Rounding n_s·p(f|s) moves a cell by < 1, and the separator's
			// own rounding error moves its target by |n_s − n·p(s)|·p(f|s):
			// |count − n·p(C)| < 1 + |n_s − n·p(s)|·p(f|s) (the root: < 1).
			s := si[j]
			bound := 1 + math.Abs(ns[s]-n*ps[s])*p[j]/ps[s] + 1e-9
			if e > bound {
				t.Fatalf("clique %v cell %d: off by %v > %v", c, j, e, bound)
			}
		}
		// Independent draws would be off by ~√(n·p) ≈ 10 per cell.
		t.Logf("clique %v: largest cell error %.3f, L1 %.2f over %d cells", c, worst, l1, len(p))
		if worst > 3 {
			t.Fatalf("clique %v: a cell off by %v", c, worst)
		}
	}
}
