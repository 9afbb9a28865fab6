package resources_test

import (
	"fmt"

	"github.com/dpsolve/dpsolve/internal/resources"
)

// A command estimates its peak before allocating and refuses what cannot
// fit, naming what it needs, the usable share of the limit, the limit and
// its source, and the override with the value this problem would need.
func Example() {
	avail := resources.Memory{Bytes: 16 << 30, Source: "cgroup limit"}
	need := func(n float64) float64 { return 80 * n * n } // ten n×n float64 matrices
	fmt.Println(resources.Check(need(100000), avail, "n = 100000"))
	fmt.Println("largest n:", resources.LargestN(need, avail))
	// Output:
	// n = 100000 needs about 745 GiB of memory, but only 13.6 GiB is available to it: 85% of the 16 GiB this machine has (cgroup limit), the rest left for the Go runtime, the kernel libraries and the estimate's error; to plan for another limit set DPSOLVE_MEMORY_LIMIT (this needs DPSOLVE_MEMORY_LIMIT=877GiB or more, if that much memory is free)
	// largest n: 13510
}
