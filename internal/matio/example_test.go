package matio_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsolve/dpsolve/internal/matio"
	"gonum.org/v1/gonum/mat"
)

// Write a workload matrix as .npy, read it back, and read a histogram from
// in-memory CSV text.
func Example() {
	dir, err := os.MkdirTemp("", "matio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	w := mat.NewDense(2, 3, []float64{1, 1, 0, 0, 1, 1})
	path := filepath.Join(dir, "W.npy")
	if err := matio.WriteMatrix(path, w); err != nil {
		log.Fatal(err)
	}
	back, err := matio.ReadMatrix(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(mat.Equal(w, back))

	x, err := matio.ReadVectorFrom(strings.NewReader("# counts\n3\n0\n7\n"), matio.CSV)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x)

	_, err = matio.ReadMatrixFrom(strings.NewReader("1,2\n3\n"), matio.CSV)
	fmt.Println(err)
	// Output:
	// true
	// [3 0 7]
	// csv: shape mismatch: line 2 has 1 values but line 1 has 2 (all rows must have the same length)
}
