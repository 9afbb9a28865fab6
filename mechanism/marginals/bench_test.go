package marginals

import (
	"fmt"
	"testing"

	"github.com/dpsolve/dpsolve/privacy/noise"
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
// attributes (6.4·10¹⁷ cells; the goal is ≤ 10 ms for the sum plan, see
// docs/marginals.md).
func BenchmarkPlanAdult(b *testing.B) {
	for _, obj := range []Objective{Sum, Max} {
		b.Run(string(obj), func(b *testing.B) { benchPlan(b, adultSizes, 3, obj) })
	}
}

// BenchmarkPlanBinary plans all 0…3-way marginals over n binary attributes
// (n = 100: 166,751 residual subsets; the goal is ≤ 1 s, see
// docs/marginals.md).
func BenchmarkPlanBinary(b *testing.B) {
	for _, n := range []int{10, 30, 100} {
		sizes := make([]int, n)
		for i := range sizes {
			sizes[i] = 2
		}
		b.Run(fmt.Sprintf("sum/n=%d", n), func(b *testing.B) { benchPlan(b, sizes, 3, Sum) })
	}
}

// BenchmarkMeasureReconstructAdult measures (seeded discrete Gaussian) and
// reconstructs all ≤2-way marginals of the 14 Adult attributes from their
// tables: the planning-independent part of the Adult release of
// docs/releasing.md.
func BenchmarkMeasureReconstructAdult(b *testing.B) {
	sets, _ := UpTo(len(adultSizes), 2)
	p, err := NewPlan(adultSizes, Weighted(sets, 1), Sum, nil)
	if err != nil {
		b.Fatal(err)
	}
	var tables []Table
	for _, s := range p.Needs() {
		vals := make([]float64, int(cells(adultSizes, s)))
		for i := range vals {
			vals[i] = float64(i % 7)
		}
		tables = append(tables, Table{Attrs: s, Values: vals})
	}
	coords := 0.0
	for _, r := range p.Residuals {
		coords += r.Coords
	}
	s := noise.NewSeededInsecure(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := p.Measure(tables, s, 10)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Reconstruct(m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(coords, "noisy-values")
}

// BenchmarkProjectConsistentAdult is one sweep of MakeConsistent's
// projection onto consistent tables (the cost of each Dykstra iteration)
// for the 91 two-way Adult tables (148,137 cells).
func BenchmarkProjectConsistentAdult(b *testing.B) {
	sets, _ := KWay(len(adultSizes), 2)
	p, err := NewPlan(adultSizes, Weighted(sets, 1), Sum, nil)
	if err != nil {
		b.Fatal(err)
	}
	var tables []Table
	var vars []float64
	for _, s := range p.Needs() {
		vals := make([]float64, int(cells(adultSizes, s)))
		for i := range vals {
			vals[i] = float64(i%7) - 2
		}
		tables = append(tables, Table{Attrs: s, Values: vals})
		vars = append(vars, 1+float64(len(vals))/1000)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.projectConsistent(tables, vars)
	}
}
