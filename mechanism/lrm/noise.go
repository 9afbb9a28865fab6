package lrm

import (
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// ballFor returns the ball whose norm the noise model is calibrated to:
// l1 for calibrate.Laplace, l2 for calibrate.Gaussian; another kind is bad
// input.
func ballFor(noise calibrate.NoiseKind) (ball, error) {
	switch noise {
	case calibrate.Laplace:
		return l1, nil
	case calibrate.Gaussian:
		return l2, nil
	}
	return 0, inputerr.Errorf("lrm", "unknown noise %q (want laplace or gaussian)", noise)
}

// noise returns the noise model the ball serves: calibrate.Laplace for l1,
// calibrate.Gaussian for l2 ("" for an unknown ball).
func (b ball) noise() calibrate.NoiseKind {
	switch b {
	case l1:
		return calibrate.Laplace
	case l2:
		return calibrate.Gaussian
	}
	return ""
}
