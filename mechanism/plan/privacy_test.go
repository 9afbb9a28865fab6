package plan

import (
	"context"
	"errors"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/kronwork"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// TestOptionsNoise: a plan takes the one noise model. The zero value is
// Gaussian; the old spelling "pure" (and any other string) is bad input,
// not a silent Gaussian plan; a Laplace plan is normalized to L1.
func TestOptionsNoise(t *testing.T) {
	o, err := Options{}.withDefaults()
	if err != nil || o.Noise != calibrate.Gaussian {
		t.Errorf("zero Options: noise %q, err %v; want gaussian", o.Noise, err)
	}
	for _, bad := range []calibrate.NoiseKind{"pure", "L1"} {
		if _, err := (Options{Noise: bad}).withDefaults(); !errors.Is(err, ErrInput) {
			t.Errorf("Options{Noise: %q}: err %v, want bad input", bad, err)
		}
	}
	w, err := kronwork.KWay([]int{2, 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Kron{}.Plan(context.Background(), w, Options{Noise: calibrate.Laplace})
	if err != nil {
		t.Fatal(err)
	}
	if res.Strategy.Noise != calibrate.Laplace {
		t.Errorf("Laplace kron plan: noise %q", res.Strategy.Noise)
	}
}
