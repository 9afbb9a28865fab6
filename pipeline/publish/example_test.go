package publish_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// syntheticAdult returns records over mixed.json's four attributes (age,
// race, sex, income>50K), for the example only.
func syntheticAdult() string {
	var b strings.Builder
	b.WriteString("age,race,sex,income>50K\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", (i*37)%85, (i*3)%5, i%2, (i/7)%2)
	}
	return b.String()
}

// Example charges a budget ledger and releases examples/adult/mixed.json's
// workload (a hybrid of marginals and a cumulative product) planned with
// the template "best", in one transaction: the output directory is reserved
// and every check runs before the charge, the ledger is charged under its
// lock, then the noise is drawn and answers.csv committed atomically.
func Example() {
	dir, _ := os.MkdirTemp("", "publish-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	spec := filepath.Join("..", "..", "examples", "adult", "mixed.json")
	ledgerPath := filepath.Join(dir, "ledger.json")
	limit, _ := calibrate.ZCDP(1)
	ledger.Create(ledgerPath, limit) // once: the limit over all releases

	k, err := domain.LoadSpec(spec, workload.Blocks)
	b, err := calibrate.ZCDP(0.5) // or calibrate.PureDP(ε), calibrate.ApproxDP(ε, δ)
	res, err := publish.Run(ctx, publish.Request{
		Workload: k, Budget: b, Template: "best", // or PlanDir: a dpsolve plan --out directory
		Data:   publish.Data{Records: strings.NewReader(syntheticAdult())}, // or Data.Histogram
		Ledger: ledgerPath, Label: "adult mixed",
		Out: filepath.Join(dir, "release"), // answers.csv (and Request.Files) land here atomically
	})
	switch res.Outcome {
	case publish.Refused: // nothing charged, nothing written
		fmt.Println("refused:", err)
	case publish.ChargedNotReleased: // the budget is spent, nothing was published
		fmt.Println("charged, not released:", err)
	case publish.Released:
		fmt.Println("released", len(res.Tables.Answers), "terms from", res.Records, "records")
		fmt.Println("ledger spent", res.Ledger.Spent, "of", res.Ledger.Limit)
	}
	_, err = os.Stat(filepath.Join(dir, "release", "answers.csv"))
	fmt.Println("answers.csv written:", err == nil)
	// Output:
	// released 3 terms from 5000 records
	// ledger spent rho=0.5 of rho=1
	// answers.csv written: true
}
