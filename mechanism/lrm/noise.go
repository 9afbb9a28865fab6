package lrm

import (
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// BallFor returns the ball whose norm the noise model is calibrated to:
// L1 for calibrate.Laplace, L2 for calibrate.Gaussian. It is the bridge
// from dpsolve's one noise model to Options.Ball.
func BallFor(noise calibrate.NoiseKind) (Ball, error) {
	switch noise.Norm() {
	case 1:
		return L1, nil
	case 2:
		return L2, nil
	}
	return 0, inputerr.Errorf("lrm", "unknown noise %q (want laplace or gaussian)", noise)
}

// Noise returns the noise model the ball serves: calibrate.Laplace for L1,
// calibrate.Gaussian for L2 ("" for an unknown ball).
func (b Ball) Noise() calibrate.NoiseKind {
	switch b {
	case L1:
		return calibrate.Laplace
	case L2:
		return calibrate.Gaussian
	}
	return ""
}
