package mf

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The bound never exceeds an independently computed loss: the certified
// dense fixed-epoch optimum (mf.Solve, its objective × sens² and its own
// certificate), which no mechanism under the schema beats, and an
// optimized BLT's loss, uncompressed and compressed (compression can only
// lower it). At single participation, uncompressed, it equals the SVD
// bound (Σσᵢ(A))²/n from a dense SVD of A.
func TestToeplitzLowerBound(t *testing.T) {
	const n = 48
	for _, beta := range []float64{0, 0.9} {
		tw := ToeplitzWorkload{Beta: beta}
		dw, _ := Momentum(n, beta, nil)
		for _, s := range []Schema{{Kind: Single}, {Kind: FixedEpoch, Epochs: 4}} {
			full, err := ToeplitzLowerBound(tw, n, s, n)
			if err != nil {
				t.Fatal(err)
			}
			small, err := ToeplitzLowerBound(tw, n, s, 7)
			if err != nil {
				t.Fatal(err)
			}
			if small.Total > full.Total*(1+1e-12) {
				t.Fatalf("compressed bound %v above the full one %v", small.Total, full.Total)
			}
			res, err := Solve(context.Background(), dw, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			opt := res.Objective * res.Sensitivity.Squared
			// 1e-9: the dense optimum is certified to relative gap 1e-8.
			if full.Total > opt*(1+1e-9) {
				t.Fatalf("β=%g %v: bound %v above the certified optimum %v", beta, s, full.Total, opt)
			}
			blt, err := OptimizeBLT(context.Background(), tw, n, s, &BLTOptions{MaxBuffers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if full.Mean > blt.Loss {
				t.Fatalf("bound %v above a BLT's loss %v", full.Mean, blt.Loss)
			}
			t.Logf("β=%g %v: bound %.6g (compressed %.6g), dense optimum %.6g, BLT(2) %.6g", beta, s, full.Total, small.Total, opt, blt.Loss*n)
			if s.Kind == Single {
				var svd mat.SVD
				svd.Factorize(dw.Matrix(), mat.SVDNone)
				sum := 0.0
				for _, v := range svd.Values(nil) {
					sum += v
				}
				if want := sum * sum / n; math.Abs(full.Total-want) > 1e-10*want {
					t.Fatalf("single participation: %v, SVD bound %v", full.Total, want)
				}
			}
		}
	}
}
