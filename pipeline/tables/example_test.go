package tables_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func Example() {
	// A spec over two attributes: both one-way marginals and the total.
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "agegroup", "size": 3}],
	          "workload": [{"name": "m", "marginals": {"upto": 1}}]}`
	k, _ := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)

	// The optimal residual plan for marginals, under rho = 1 zCDP.
	rho, _ := calibrate.ZCDP(1)
	r, _ := tables.Prepare(k, tables.MarginalsStrategy{}, rho)
	fmt.Printf("sigma %.4f, expected total squared error %.4f over %d answers\n",
		r.Sigma(), r.ExpectedTotalSquaredError(), k.Queries())

	// Read only the tables the plan needs, straight from the records.
	csv := "sex,agegroup\n0,0\n0,2\n1,1\n1,2\n1,2\n0,1\n"
	_, sets := r.Needs()
	tabs, _, _ := records.ReadMarginals(strings.NewReader(csv), k.Attributes(), sets, nil)

	// Seeded noise for a reproducible example; real releases use
	// noise.NewSecure().
	res, _ := r.Run(context.Background(), tables.Data{Tables: tabs}, noise.NewSeededInsecure(42), nil, tables.Publishable{})
	fmt.Println("private:", res.Private)
	for i, v := range res.Answers[0] {
		fmt.Printf("query %d: %5.1f ± %.3f\n", i, v, res.Std[0][i])
	}
	// tables.WriteAnswersCSV(os.Stdout, k, res) writes the same as
	// answers.csv, with a column per attribute.
	// Output:
	// sigma 0.7071, expected total squared error 5.1707 over 6 answers
	// private: false
	// query 0:   5.9 ± 1.090
	// query 1:   2.9 ± 0.930
	// query 2:   3.0 ± 0.930
	// query 3:  -0.1 ± 0.867
	// query 4:   2.3 ± 0.867
	// query 5:   3.7 ± 0.867
}

// ExampleSplitTerms divides a ρ budget over three terms in proportion
// 1:1:2; releasing each term on its own under its share spends the whole ρ
// (zCDP composes additively).
func ExampleSplitTerms() {
	rho, err := calibrate.ZCDP(1)
	if err != nil {
		fmt.Println(err)
		return
	}
	bs, err := tables.SplitTerms(rho, []float64{1, 1, 2}, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range bs {
		fmt.Println(b)
	}
	// Output:
	// rho=0.25 (zCDP)
	// rho=0.25 (zCDP)
	// rho=0.5 (zCDP)
}
