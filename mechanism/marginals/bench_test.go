package marginals

import (
	"fmt"
	"testing"
)

var adultSizes = []int{85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2}

func benchPlan(b *testing.B, sizes []int, k int, obj Objective) {
	sets, err := UpTo(len(sizes), k)
	if err != nil {
		b.Fatal(err)
	}
	ws := Weighted(sets, 1)
	b.ResetTimer()
	var p *Plan
	for i := 0; i < b.N; i++ {
		if p, err = NewPlan(sizes, ws, obj, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(p.Residuals)), "residuals")
	b.ReportMetric(p.Gap, "gap")
	if obj == Max {
		b.ReportMetric(float64(p.Iterations), "newton-steps")
	}
}

// BenchmarkPlanAdult plans all 0…3-way marginals over the 14 Adult
// attributes (6.4·10¹⁷ cells; issue 16 asks ≤ 10 ms for the sum plan).
func BenchmarkPlanAdult(b *testing.B) {
	for _, obj := range []Objective{Sum, Max} {
		b.Run(string(obj), func(b *testing.B) { benchPlan(b, adultSizes, 3, obj) })
	}
}

// BenchmarkPlanBinary plans all 0…3-way marginals over n binary attributes
// (n = 100: 166,751 residual subsets; issue 16 asks ≤ 1 s).
func BenchmarkPlanBinary(b *testing.B) {
	for _, n := range []int{10, 30, 100} {
		sizes := make([]int, n)
		for i := range sizes {
			sizes[i] = 2
		}
		b.Run(fmt.Sprintf("sum/n=%d", n), func(b *testing.B) { benchPlan(b, sizes, 3, Sum) })
	}
}
