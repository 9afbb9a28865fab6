package marginals

import (
	"math"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// The reported stddev of the least-squares grand total is the empirical
// one: over 3000 seeded releases (simulation only) of a pure and a
// Gaussian plan, every reconstructed table sums to one total whose sample
// variance matches TotalStd² within the 99% interval of a sample variance
// (±2.576·√(2/(R−1)) relative, normal approximation), and whose mean is
// the true count (unbiased, 99% interval).
func TestTotalStdIsEmpirical(t *testing.T) {
	pp, _ := pureInstance(t, Sum)
	x := make([]float64, 24)
	x[0], x[5], x[13], x[22] = 30, 4, 1, 12
	const releases = 3000
	cals, err := pp.Calibrate(budgettest.PureDP(0.5))
	if err != nil {
		t.Fatal(err)
	}
	gauss, err := NewPlan(pp.Sizes, pp.Sets, Sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"pure", "gaussian"} {
		var totals []float64
		var std float64
		for rel := 0; rel < releases; rel++ {
			src := noise.NewSeededInsecure(uint64(500 + rel))
			var est []Estimate
			if kind == "pure" {
				m, err := pp.Measure(tablesOf(pp.Sizes, [][]int{{0, 1, 2}}, x), src, cals)
				if err != nil {
					t.Fatal(err)
				}
				vars := make([]float64, len(m.Tables))
				for i, tb := range m.Tables {
					vars[i] = tb.Variance
				}
				s, ok := pp.TotalStd(vars)
				if !ok {
					t.Fatal("no total")
				}
				std = s
				est, err = pp.Reconstruct(m)
				if err != nil {
					t.Fatal(err)
				}
			} else {
				m, err := gauss.Measure(tablesOf(pp.Sizes, [][]int{{0, 1, 2}}, x), src, 2)
				if err != nil {
					t.Fatal(err)
				}
				s, ok := m.TotalStd()
				if !ok {
					t.Fatal("no total")
				}
				std = s
				est, err = gauss.Reconstruct(m)
				if err != nil {
					t.Fatal(err)
				}
			}
			tot := 0.0
			for i, e := range est {
				s := 0.0
				for _, v := range e.Values {
					s += v
				}
				if i == 0 {
					tot = s
				} else if math.Abs(s-tot) > 1e-9*(1+math.Abs(tot)) {
					t.Fatalf("%s: table %d sums to %v, table 0 to %v", kind, i, s, tot)
				}
			}
			totals = append(totals, tot)
		}
		mean, v := 0.0, 0.0
		for _, s := range totals {
			mean += s / releases
		}
		for _, s := range totals {
			v += (s - mean) * (s - mean) / (releases - 1)
		}
		t.Logf("%s: total %.3f (true 47), sample stddev %.4f, reported %.4f", kind, mean, math.Sqrt(v), std)
		if rel := math.Abs(v/(std*std) - 1); rel > 2.576*math.Sqrt(2.0/(releases-1)) {
			t.Errorf("%s: sample variance %.4g, reported %.4g", kind, v, std*std)
		}
		if math.Abs(mean-47) > 2.576*std/math.Sqrt(releases) {
			t.Errorf("%s: mean total %.4g, true 47", kind, mean)
		}
	}
}
