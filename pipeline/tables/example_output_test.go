package tables_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/tables"
)

// answers.csv and the per-table files of a release over attributes with
// codebooks (here with made-up answers: a Result comes from Run).
func ExampleWriteTableFiles() {
	spec := `{"domain": [{"name": "sex", "values": ["Female", "Male"]}, {"name": "age", "edges": [0, 18, 65, 120]}],
	          "workload": [{"name": "m", "marginals": {"sets": [["sex", "age"]]}}]}`
	k, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	if err != nil {
		fmt.Println(err)
		return
	}
	res := &tables.Result{Answers: [][]float64{{10, 52, 31, 12, 47, 20}}, Std: [][]float64{{1.5, 1.5, 1.5, 1.5, 1.5, 1.5}}, Private: true}
	var b strings.Builder
	if err := tables.WriteAnswersCSV(&b, k, res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(strings.Join(strings.SplitAfter(b.String(), "\n")[:3], ""))
	dir, _ := os.MkdirTemp("", "tables-example-")
	defer os.RemoveAll(dir)
	names, err := tables.WriteTableFiles(dir, k, res)
	fmt.Println(names, err)
	ct, _ := os.ReadFile(filepath.Join(dir, names[0]))
	fmt.Print(string(ct))
	fmt.Println(tables.FormulaSafe("=HYPERLINK(\"x\")"), tables.FormulaSafe("-3"))
	// Output:
	// term,query,answer,stddev,sex,age,table,sex label,age label
	// m,0,10,1.5,0,0,"m (sex, age)",Female,"[0, 18)"
	// m,1,52,1.5,0,1,"m (sex, age)",Female,"[18, 65)"
	// [m_sex_age.csv m_sex_age.stddev.csv] <nil>
	// sex \ age,"[0, 18)","[18, 65)","[65, 120)"
	// Female,10,52,31
	// Male,12,47,20
	// '=HYPERLINK("x") -3
}
