package tables_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// The "In Go" snippet of docs/releasing.md for multi-attribute tables: what
// `dpsolve plan` and `dpsolve release` do, in Go — plan a spec, prepare the
// release (the dry run), read the records, charge a budget ledger just
// before the noise, and release with secure noise. (internal/readme keeps
// the page's lines identical to the middle of this function.)
func Example_readmeRelease() {
	ctx := context.Background()
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 8}],
	          "workload": [{"name": "cumulative", "product": {"sex": "identity", "age": "prefix"}},
	                       {"name": "ages", "marginals": {"sets": [["age"]]}}]}`
	var rows strings.Builder
	rows.WriteString("sex,age\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&rows, "%d,%d\n", i%2, (i*5)%8)
	}
	csvFile := strings.NewReader(rows.String())
	dir, err := os.MkdirTemp("", "readme-release")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ledgerPath := filepath.Join(dir, "budget.json")
	limit, err := calibrate.ZCDP(1)
	if err != nil {
		panic(err)
	}
	if err := ledger.Create(ledgerPath, limit); err != nil {
		panic(err)
	}

	k, _ := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)        // or domain.LoadSpec(path, workload.Blocks)
	p, err := plan.Run(ctx, k, plan.Best{}, plan.Options{Accept: tables.Writable}) // only strategies tables.FromPlan takes (a hybrid union is not one: use package publish)
	s, err := tables.FromPlan(p.Strategy, k)                                       // tables.MarginalsStrategy{} for a workload of marginals
	b, err := calibrate.ZCDP(0.5)                                                  // or calibrate.PureDP(ε), calibrate.ApproxDP(ε, δ)
	r, err := tables.Prepare(k, s, b)                                              // the dry run: r.Sigma(), r.ExpectedTotalSquaredError(), r.TermErrors()
	x, _, err := records.ReadHistogram(csvFile, k.Attributes(), nil)               // records.ReadMarginals when r.Needs() asks for tables
	charge := func() error { _, err := ledger.Spend(ledgerPath, r.Budget(), "my release"); return err }
	res, err := r.Run(ctx, tables.Data{Histogram: x}, noise.NewSecure(), charge, tables.Publishable{})
	// res.Answers[t][i] ± res.Std[t][i] answers query i of term t; tables.WriteAnswersCSV writes answers.csv
	if err != nil {
		panic(err)
	}

	fmt.Printf("plan %s: objective %.4f, certified lower bound %.4f\n", p.Template, p.Objective, p.LowerBound)
	fmt.Printf("sigma %.4f, expected total squared error %.4f\n", r.Sigma(), r.ExpectedTotalSquaredError())
	f, err := ledger.Read(ledgerPath)
	if err != nil {
		panic(err)
	}
	fmt.Println("ledger spent:", f.Total(), "of", f.Limit, "in", len(f.Spent), "release; private:", res.Private)
	// Every answer lies within 8 standard deviations of the true count
	// (secure noise: the answers change from run to run; one outside has
	// probability ~1e-15).
	// Term 0 is kron(identity, prefix): query 8s+a counts sex s, age ≤ a.
	worst := 0.0
	for i, v := range res.Answers[0] {
		truth := 0.0
		for a := 0; a <= i%8; a++ {
			truth += x[(i/8)*8+a]
		}
		worst = math.Max(worst, math.Abs(v-truth)/res.Std[0][i])
	}
	fmt.Printf("%d + %d answers, within 8 standard deviations: %v\n", len(res.Answers[0]), len(res.Answers[1]), worst < 8)
	// Output:
	// plan dense: objective 54.5934, certified lower bound 54.5934
	// sigma 1.0000, expected total squared error 54.5934
	// ledger spent: rho=0.5 of rho=1 in 1 release; private: true
	// 16 + 8 answers, within 8 standard deviations: true
}
