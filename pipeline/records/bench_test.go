package records

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAdultTwoWay reads the Adult CSV into all 91 two-way marginal
// tables of its 14 attributes (the data side of the 2 s Adult release,
// BenchmarkAdultTwoWayRelease in package tables).
func BenchmarkAdultTwoWay(b *testing.B) {
	dir := adultPath(b)
	attrs := adultDomain(b, dir)
	var sets [][]int
	for i := range attrs {
		for j := i + 1; j < len(attrs); j++ {
			sets = append(sets, []int{i, j})
		}
	}
	for b.Loop() {
		f, err := os.Open(filepath.Join(dir, "adult.csv"))
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := ReadMarginals(f, attrs, sets, nil); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
