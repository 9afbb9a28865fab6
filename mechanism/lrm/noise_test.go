package lrm

import (
	"errors"
	"testing"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// ballFor and Ball.Noise are inverse on the two noise models, and the
// ball's norm is the noise model's (L1 ↔ Laplace, L2 ↔ Gaussian).
func TestBallForNoise(t *testing.T) {
	for _, k := range []calibrate.NoiseKind{calibrate.Laplace, calibrate.Gaussian} {
		b, err := ballFor(k)
		if err != nil {
			t.Fatal(err)
		}
		if int(b) != k.Norm() || b.noise() != k {
			t.Errorf("ballFor(%s) = %v (noise %q), want the L%d ball", k, b, b.noise(), k.Norm())
		}
	}
	if _, err := ballFor("pure"); !errors.Is(err, inputerr.ErrInput) {
		t.Errorf("ballFor(pure): err %v, want bad input", err)
	}
	if ball(3).noise() != "" {
		t.Error("an unknown ball has no noise model")
	}
}
