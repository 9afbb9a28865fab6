package marginals_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// The snippet of docs/marginals.md, end to end on a small data
// set: plan all 0…3-way marginals over four attributes, read the tables the
// plan needs from a CSV of records, measure them with secure noise and
// reconstruct every marginal. (internal/readme keeps the page's lines
// identical to the middle of this function.)
func Example_readmeMarginals() {
	// 240 records over attributes of sizes 2, 3, 4, 5.
	attrs := []domain.Attribute{{Name: "a", Size: 2}, {Name: "b", Size: 3}, {Name: "c", Size: 4}, {Name: "d", Size: 5}}
	var csv strings.Builder
	csv.WriteString("a,b,c,d\n")
	for i := 0; i < 240; i++ {
		fmt.Fprintf(&csv, "%d,%d,%d,%d\n", i%2, i%3, (i/3)%4, (i*7)%5)
	}
	sizes := []int{2, 3, 4, 5}
	readTables := func(sets [][]int) []marginals.Table {
		recs, _, err := records.ReadMarginals(strings.NewReader(csv.String()), attrs, sets, nil)
		if err != nil {
			panic(err)
		}
		tabs := make([]marginals.Table, len(recs))
		for i, t := range recs {
			tabs[i] = marginals.Table{Attrs: t.Attrs, Values: t.Counts}
		}
		return tabs
	}
	rho := 0.5
	sigma := 1 / math.Sqrt(2*rho)

	sets, _ := marginals.UpTo(len(sizes), 3)                                            // all 0…3-way, lexicographic, smaller first (KWay for exactly k)
	p, err := marginals.NewPlan(sizes, marginals.Weighted(sets, 1), marginals.Sum, nil) // or marginals.Max
	// p.TotalSquaredError, p.LowerBound (SVD bound, over every strategy), p.Gap
	// p.Residuals[i]: Attrs, Variance (σ_T² at L2 sensitivity 1); p.Marginals[i].CellVariance
	// p.Covariance(i, cellI, j, cellJ): any two reconstructed cells' covariance
	tables := readTables(p.Needs())                       // marginal tables of your records (records.ReadMarginals)
	m, err := p.Measure(tables, noise.NewSecure(), sigma) // ρ-zCDP with ρ = 1/(2σ²)
	est, err := p.Reconstruct(m)                          // every workload marginal, least squares, unbiased
	if err != nil {
		panic(err)
	}

	fmt.Printf("%d marginals from %d tables, %d residual subsets\n", len(p.Sets), len(tables), len(p.Residuals))
	fmt.Printf("expected total squared error %.6f, SVD bound %.6f\n", p.TotalSquaredError, p.LowerBound)
	// Every reconstructed cell lies within 8 standard deviations of the
	// true count (secure noise, so the values change from run to run; a
	// cell outside has probability ~1e-15).
	truth := readTables(sets)
	worst := 0.0
	for i, e := range est {
		for c, v := range e.Values {
			worst = math.Max(worst, math.Abs(v-truth[i].Values[c])/math.Sqrt(e.CellVariance))
		}
	}
	fmt.Printf("%d marginals reconstructed, all within 8 standard deviations: %v\n", len(est), worst < 8)
	// Output:
	// 15 marginals from 4 tables, 15 residual subsets
	// expected total squared error 885.274527, SVD bound 885.274527
	// 15 marginals reconstructed, all within 8 standard deviations: true
}
