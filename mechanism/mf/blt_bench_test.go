package mf

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkBLTOptimize times OptimizeBLT (buffers chosen by the 1% rule)
// at the sizes, prefix workload, b-min-separation with k uses.
func BenchmarkBLTOptimize(b *testing.B) {
	for _, c := range []struct{ n, sep, k int }{{2052, 342, 6}, {10000, 1000, 10}, {100000, 10000, 10}, {1000000, 100000, 10}} {
		b.Run(fmt.Sprintf("n=%d", c.n), func(b *testing.B) {
			s := Schema{Kind: MinSep, MinSep: c.sep, Epochs: c.k}
			for b.Loop() {
				if _, err := OptimizeBLT(context.Background(), ToeplitzWorkload{Name: "prefix"}, c.n, s, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBLTEvaluate times the O(n·d) scoring of a 4-buffer BLT at
// n = 10⁶ (coefficients, inverse, errors, sensitivity).
func BenchmarkBLTEvaluate(b *testing.B) {
	blt, err := NewBLT([]float64{0.9999, 0.999, 0.99, 0.9}, []float64{0.9995, 0.995, 0.95, 0.5})
	if err != nil {
		b.Fatal(err)
	}
	s := Schema{Kind: MinSep, MinSep: 100000, Epochs: 10}
	for b.Loop() {
		if _, err := blt.Evaluate(ToeplitzWorkload{}, 1000000, s, false); err != nil {
			b.Fatal(err)
		}
	}
}
