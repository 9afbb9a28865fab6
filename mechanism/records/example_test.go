package records_test

import (
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/domain"
	"github.com/dpsolve/dpsolve/mechanism/records"
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
