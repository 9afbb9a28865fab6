package strategy_test

import (
	"context"
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/strategy"
)

func ExampleParse() {
	// Registered baselines by name (case-insensitive), or hB for a B-ary
	// tree; "optimized" also needs the workload's Gram.
	for _, name := range []string{"identity", "H2", "h4", "wavelet"} {
		s, err := strategy.Parse(context.Background(), name, 16, nil, nil)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %d measurements\n", s.Name(), s.Rows())
	}
	// Output:
	// identity(n=16): 16 measurements
	// h2(n=16): 31 measurements
	// h4(n=16): 21 measurements
	// wavelet(n=16): 16 measurements
}
