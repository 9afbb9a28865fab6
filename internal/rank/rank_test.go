package rank

import (
	"math"
	"testing"
)

// Cutoff is dim·2⁻⁵²·largest, bit for bit as the expression the module
// used to restate (so replacing it changes no output), and scales with
// both arguments.
func TestCutoff(t *testing.T) {
	for _, c := range []struct {
		dim     int
		largest float64
	}{{1, 1}, {3, 7.25}, {1000, 1e-300}, {64, 3.5e12}} {
		want := float64(c.dim) * math.Pow(2, -52) * c.largest
		if got := Cutoff(c.dim, c.largest); got != want {
			t.Errorf("Cutoff(%d, %g) = %g, want %g", c.dim, c.largest, got, want)
		}
	}
	if Eps != math.Nextafter(1, 2)-1 {
		t.Errorf("Eps = %g is not the spacing of float64 at 1", Eps)
	}
}
