package plantest

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/testkit"
	"github.com/dpsolve/dpsolve/internal/testkit/kronwork"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// benchWorkload is one workload of the plan benchmark.
type benchWorkload struct {
	name string
	make func() (*domain.Kron, error)
}

// benchWorkloads are HDMM-style workloads (internal/testkit/kronwork): 5–14
// attributes, every block kind, unions of 1–500 terms.
var benchWorkloads = []benchWorkload{
	{"identitytotal-5 (1 term, 2.8e5 cells)", func() (*domain.Kron, error) {
		return kronwork.Product([]int{10, 10, 10, 10, 28}, []string{"identitytotal", "identitytotal", "identitytotal", "identitytotal", "identitytotal"}, 0)
	}},
	{"prefix-identity-12 (1 term, 8.7e6 cells)", func() (*domain.Kron, error) {
		return kronwork.Product([]int{2, 3, 4, 5, 6, 7, 8, 9, 10, 2, 3, 4},
			[]string{"prefix", "identity", "prefix", "identity", "prefix", "identity", "prefix", "identity", "prefix", "identity", "prefix", "identity"}, 0)
	}},
	{"marginals-3way-8 (56 marginals)", func() (*domain.Kron, error) {
		return kronwork.KWay([]int{4, 4, 4, 4, 4, 4, 4, 4}, 3)
	}},
	{"census-5 (33 random terms, 5.0e5 cells)", func() (*domain.Kron, error) {
		return kronwork.Random([]int{2, 115, 64, 2, 17}, 33, 3, kronwork.Kinds, 5)
	}},
	{"ranges-matrix-6 (20 terms)", func() (*domain.Kron, error) {
		return kronwork.Random([]int{12, 8, 6, 10, 5, 7}, 20, 3, []string{"ranges", "matrix", "identity", "total"}, 11)
	}},
	{"adult-pairs-14 (91 terms, 6.4e17 cells)", func() (*domain.Kron, error) {
		return kronwork.Pairs(kronwork.AdultSizes, kronwork.AdultOrdinal)
	}},
	{"adult-mixed-14 (2-way marginals + 2 products)", func() (*domain.Kron, error) {
		return adultMixedKron()
	}},
	{"random-10 (500 terms)", func() (*domain.Kron, error) {
		return kronwork.Random([]int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 500, 3, kronwork.Kinds, 3)
	}},
}

var benchTemplates = []string{"kron", "union", "marginals", "best"}

// BenchmarkTemplates plans every benchmark workload with every template
// under both privacy models (one kernel thread, as dpsolve plan runs),
// reporting the objective and the CPU time per plan.
func BenchmarkTemplates(b *testing.B) {
	blas.Current().SetThreads(1)
	for _, bw := range benchWorkloads {
		w, err := bw.make()
		if err != nil {
			b.Fatal(err)
		}
		for _, pr := range []calibrate.NoiseKind{calibrate.Gaussian, calibrate.Laplace} {
			for _, tn := range benchTemplates {
				name := fmt.Sprintf("%s/%s/%s", strings.Fields(bw.name)[0], pr, tn)
				b.Run(name, func(b *testing.B) {
					tp, err := planner.Lookup(tn)
					if err != nil {
						b.Fatal(err)
					}
					var res *plan.Result
					c0 := testkit.ProcessCPU()
					for i := 0; i < b.N; i++ {
						if res, err = tp.Plan(context.Background(), w, plan.Options{Noise: pr}); err != nil {
							b.Skip(err) // the template does not apply
						}
					}
					b.ReportMetric(float64((testkit.ProcessCPU()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
					b.ReportMetric(res.Objective, "objective")
				})
			}
		}
	}
}

// TestPlanTable prints the benchmark's table (every workload, privacy
// model and template: objective, ratio to the best, CPU seconds, bound) as
// Markdown; it runs only with DPSOLVE_PLAN_TABLE set (minutes of CPU).
func TestPlanTable(t *testing.T) {
	if os.Getenv("DPSOLVE_PLAN_TABLE") == "" {
		t.Skip("set DPSOLVE_PLAN_TABLE=1 to print the plan benchmark table")
	}
	blas.Current().SetThreads(1)
	var sb strings.Builder
	sb.WriteString("| workload | privacy | template | objective | × best | CPU s | lower bound | family bound |\n|---|---|---|---|---|---|---|---|\n")
	for _, bw := range benchWorkloads {
		w, err := bw.make()
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range []calibrate.NoiseKind{calibrate.Gaussian, calibrate.Laplace} {
			type row struct {
				tn        string
				obj, cpu  float64
				lb, fb    float64
				err       error
				templ     string
				wallShare float64
			}
			var rows []row
			bestObj := math.Inf(1)
			for _, tn := range benchTemplates {
				tp, _ := planner.Lookup(tn)
				c0 := testkit.ProcessCPU()
				w0 := time.Now()
				res, err := tp.Plan(context.Background(), w, plan.Options{Noise: pr})
				r := row{tn: tn, cpu: (testkit.ProcessCPU() - c0).Seconds(), err: err, wallShare: time.Since(w0).Seconds()}
				if err == nil {
					r.obj, r.lb, r.fb, r.templ = res.Objective, res.LowerBound, res.FamilyBound, res.Template
					if tn != "best" {
						bestObj = math.Min(bestObj, res.Objective)
					}
				}
				rows = append(rows, r)
			}
			for _, r := range rows {
				if r.err != nil {
					fmt.Fprintf(&sb, "| %s | %s | %s | n/a: %v | | %.2f | | |\n", bw.name, pr, r.tn, r.err, r.cpu)
					continue
				}
				tn := r.tn
				if tn == "best" {
					tn = "best → " + r.templ
				}
				fmt.Fprintf(&sb, "| %s | %s | %s | %.6g | %.4f | %.2f | %s | %s |\n", bw.name, pr, tn, r.obj, r.obj/bestObj, r.cpu, fmtBound(r.lb), fmtBound(r.fb))
			}
		}
	}
	t.Log("\n" + sb.String())
	if path := os.Getenv("DPSOLVE_PLAN_TABLE_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fmtBound(x float64) string {
	if math.IsNaN(x) || !(x > 0) {
		return "—"
	}
	return fmt.Sprintf("%.4g", x)
}
