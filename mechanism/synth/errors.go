package synth

import (
	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error caused by bad input (data, spec, budget
// or options); test with errors.Is.
var ErrInput = inputerr.ErrInput

func inputf(format string, args ...any) error {
	return inputerr.Errorf("synth", format, args...)
}
