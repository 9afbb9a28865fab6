package lrm

import (
	"errors"
	"testing"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// BallFor and Ball.Noise are inverse on the two noise models, and the
// ball's norm is the noise model's (L1 ↔ Laplace, L2 ↔ Gaussian).
func TestBallForNoise(t *testing.T) {
	for _, k := range []calibrate.NoiseKind{calibrate.Laplace, calibrate.Gaussian} {
		b, err := BallFor(k)
		if err != nil {
			t.Fatal(err)
		}
		if int(b) != k.Norm() || b.Noise() != k {
			t.Errorf("BallFor(%s) = %v (noise %q), want the L%d ball", k, b, b.Noise(), k.Norm())
		}
	}
	if _, err := BallFor("pure"); !errors.Is(err, inputerr.ErrInput) {
		t.Errorf("BallFor(pure): err %v, want bad input", err)
	}
	if Ball(3).Noise() != "" {
		t.Error("an unknown ball has no noise model")
	}
}
