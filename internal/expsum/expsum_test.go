package expsum

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReciprocalAccuracy checks the sinc-quadrature approximation of 1/x against
// 1/x itself on a dense logarithmic grid over [lo, hi] for several condition
// numbers and tolerances: the relative error must stay below tol.
func TestReciprocalAccuracy(t *testing.T) {
	for _, tc := range []struct{ lo, hi, tol float64 }{
		{1, 10, 1e-3}, {1e-3, 1e3, 1e-3}, {1e-7, 1e5, 1e-6}, {2, 2, 1e-10}, {1e-9, 1e9, 1e-8},
		{1, 1e6, 1e-2}, {1, 1e6, 3e-2}, {1, 1e9, 3e-3}, {0.5, 2e12, 1e-1},
	} {
		tt, w := Reciprocal(tc.lo, tc.hi, tc.tol)
		worst := 0.0
		for i := 0; i <= 20000; i++ {
			x := tc.lo * math.Pow(tc.hi/tc.lo, float64(i)/20000)
			s := 0.0
			for r := range tt {
				s += w[r] * math.Exp(-tt[r]*x)
			}
			worst = math.Max(worst, math.Abs(s*x-1))
		}
		require.Less(t, worst, tc.tol, "lo=%g hi=%g tol=%g (%d nodes)", tc.lo, tc.hi, tc.tol, len(tt))
		t.Logf("lo=%g hi=%g tol=%g: %d nodes, worst relative error %.2g", tc.lo, tc.hi, tc.tol, len(tt), worst)
	}
}
