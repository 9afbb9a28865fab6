package resources_test

import (
	"fmt"

	"github.com/dpsolve/dpsolve/internal/resources"
)

// A command estimates its peak before allocating and refuses what cannot
// fit, naming both figures.
func Example() {
	avail := resources.Memory{Bytes: 16 << 30, Source: "cgroup limit"}
	need := func(n float64) float64 { return 80 * n * n } // ten n×n float64 matrices
	fmt.Println(resources.Check(need(100000), avail, "n = 100000"))
	fmt.Println("largest n:", resources.LargestN(need, avail))
	// Output:
	// n = 100000 needs about 745 GiB of memory, but this machine has 16 GiB (cgroup limit)
	// largest n: 13510
}
