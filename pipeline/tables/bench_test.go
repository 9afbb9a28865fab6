//go:build unix

package tables

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// BenchmarkAdultTwoWayRelease measures the release of docs/releasing.md:
// all 91 two-way marginals of the 14 Adult attributes (6.4·10¹⁷ cells, 148,137 answers),
// released from the CSV — plan, read the tables, measure with secure
// noise, reconstruct, write answers.csv (to io.Discard); the goal is ≤ 2 s.
func BenchmarkAdultTwoWayRelease(b *testing.B) {
	dir := adultDir(b)
	dom, err := os.ReadFile(filepath.Join(dir, "domain.json"))
	if err != nil {
		b.Fatal(err)
	}
	spec := `{"domain": ` + strings.TrimSpace(extractDomain(string(dom))) + `, "workload": [{"name": "pairs", "marginals": {"k": 2}}]}`
	c0 := testkit.ProcessCPU()
	for b.Loop() {
		k, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Prepare(k, MarginalsStrategy{}, budgettest.ZCDP(0.5))
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, "adult.csv"))
		if err != nil {
			b.Fatal(err)
		}
		_, sets := r.Needs()
		tabs, _, err := records.ReadMarginals(f, k.Attributes(), sets, nil)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		res, err := r.Run(context.Background(), Data{Tables: tabs}, noise.NewSecure(), nil, Publishable{})
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteAnswersCSV(io.Discard, k, res); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time per release: on the shared machine the wall time measures
	// the other jobs too.
	cpu := (testkit.ProcessCPU() - c0).Seconds()
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
}

// extractDomain returns the JSON array of domain.json's "domain" key.
func extractDomain(s string) string {
	i := strings.Index(s, "[")
	j := strings.LastIndex(s, "]")
	if i < 0 || j < i {
		panic(fmt.Sprintf("bad domain.json: %q", s))
	}
	return s[i : j+1]
}

// BenchmarkNonNegativeKron measures the histogram plans' publishable-table
// estimator against the plain least-squares release on the same instance:
// a 40×40×20 domain (32,000 cells), all two-way marginals, the Kronecker
// strategy [I; 1ᵀ]/√2 per attribute, at ρ = 0.05 on a sparse histogram
// (seeded noise, simulation only). Sub-benchmarks "ls", "nonnegative" and
// "nonnegative+integer" report CPU seconds per release and, for the
// estimator, its iterations; compare them within one run.
func BenchmarkNonNegativeKron(b *testing.B) {
	dom := []domain.Attribute{{Name: "a", Size: 40}, {Name: "b", Size: 40}, {Name: "c", Size: 20}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{{Name: "two-way", Weight: 1, Products: []explicitProduct{
		marginalProduct(dom, []int{0, 1}), marginalProduct(dom, []int{0, 2}), marginalProduct(dom, []int{1, 2}),
	}}}}
	a, err := kron.New(identityTotal(40), identityTotal(40), identityTotal(20))
	if err != nil {
		b.Fatal(err)
	}
	r, err := prepare(w, KronStrategy{A: a}, budgettest.ZCDP(0.05))
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float64, 40*40*20)
	for i := range x {
		if i%7 == 0 {
			x[i] = float64(i % 5)
		}
	}
	for _, c := range []struct {
		name string
		pp   Publishable
	}{{"ls", Publishable{}}, {"nonnegative", Publishable{NonNegative: true}}, {"nonnegative+integer", Publishable{NonNegative: true, Integer: true}}} {
		b.Run(c.name, func(b *testing.B) {
			c0 := testkit.ProcessCPU()
			iters := 0
			seed := uint64(1)
			for b.Loop() {
				res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(seed), nil, c.pp)
				if err != nil {
					b.Fatal(err)
				}
				if res.Estimator != nil {
					iters += res.Estimator.Iterations
				}
				seed++
			}
			cpu := (testkit.ProcessCPU() - c0).Seconds()
			b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(iters)/float64(b.N), "iterations/op")
		})
	}
}
