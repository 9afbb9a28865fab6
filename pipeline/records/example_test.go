package records_test

import (
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
)

func Example() {
	// Four people; the "id" column is not an attribute and is ignored.
	csv := "id,sex,age\n1,0,2\n2,1,2\n3,1,0\n4,1,2\n"
	dom := []domain.Attribute{{Name: "sex", Size: 2}, {Name: "age", Size: 3}}

	// The full histogram, row-major (sex slowest): cell = sex·3 + age.
	hist, st, err := records.ReadHistogram(strings.NewReader(csv), dom, nil)
	fmt.Println(hist, st.Records, err)

	// Or only the marginals a plan needs, without the histogram.
	tabs, _, err := records.ReadMarginals(strings.NewReader(csv), dom, [][]int{{1}, {}}, nil)
	fmt.Println(tabs[0].Counts, tabs[1].Counts, err)
	// Output:
	// [0 0 1 1 0 2] 4 <nil>
	// [1 0 3] [4] <nil>
}

// Records with labels and raw numbers, read through the attributes'
// codebooks (normally from the spec's "values" and "edges").
func Example_codebook() {
	sex, _ := domain.NewValueCodebook([]string{"Female", "Male"}, "", nil)
	age, _ := domain.NewBinCodebook([]float64{0, 18, 65, 120}, false)
	dom := []domain.Attribute{{Name: "sex", Size: 2, Codebook: sex}, {Name: "age", Size: 3, Codebook: age}}
	csv := "sex,age\nMale,34\nFemale,70\nMale,17\nMale,40\n"
	tabs, _, err := records.ReadMarginals(strings.NewReader(csv), dom, [][]int{{0, 1}}, nil)
	fmt.Println(tabs[0].Counts, err)
	// An unlisted value is an error naming the record, line, column and value.
	_, _, err = records.ReadMarginals(strings.NewReader("sex,age\nMale,34\nmale,40\n"), dom, [][]int{{0}}, nil)
	fmt.Println(err)
	// Output:
	// [0 0 1 1 2 0] <nil>
	// records: invalid input: record 2 (line 3), column "sex": value "male" is not one of the values "Female", "Male" (add it, an alias, or an "other" value to the spec)
}
