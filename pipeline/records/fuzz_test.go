package records

import (
	"errors"
	"strings"
	"testing"
)

// FuzzReadMarginals feeds arbitrary bytes to the CSV reader: it must never
// panic, every error must be bad input (the reader never fails), and on
// success the tables must sum to the record count.
func FuzzReadMarginals(f *testing.F) {
	for _, s := range []string{"a,b,c\n0,1,2\n", "c,a,b,x\n1,0,0,zz\n3,1,2,\n", "", "a,b\n", "a,b,c\n0,0,0\n1,2\n", "\ufeffa,b,c\r\n1,1,1\r\n", "a,\"b\",c\n\"1\",0,0\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tabs, st, err := ReadMarginals(strings.NewReader(s), small, [][]int{{0, 2}, {}}, nil)
		if err != nil {
			if !errors.Is(err, ErrInput) {
				t.Fatalf("not a bad-input error: %v", err)
			}
			return
		}
		total := 0.0
		for _, v := range tabs[0].Counts {
			total += v
		}
		if total != float64(st.Records) || tabs[1].Counts[0] != float64(st.Records) {
			t.Fatalf("tables sum to %v and %v, records %d", total, tabs[1].Counts[0], st.Records)
		}
	})
}
