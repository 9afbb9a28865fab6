// Package inputerr holds dpsolve's one sentinel for bad input.
//
// Every public package re-exports it as its own ErrInput (the same value:
// `var ErrInput = inputerr.ErrInput`), so a caller can test any dpsolve error
// with errors.Is(err, newton.ErrInput), errors.Is(err, workload.ErrInput), …
// interchangeably, and the command line maps every such error to one exit
// status without re-validating. Errors returned for bad input wrap it and
// name their package: "workload: invalid input: dims: empty field in \"8xx8\"".
package inputerr

import (
	"errors"
	"fmt"
)

// ErrInput is wrapped by every error any dpsolve package returns for input
// the caller can fix (a bad size, a malformed file, an out-of-range option).
// Errors from a computation that failed on valid input do not wrap it.
var ErrInput = errors.New("invalid input")

// Errorf returns an error wrapping ErrInput whose message is
// "pkg: invalid input: <formatted message>". Verbs %w in format wrap their
// operands too.
func Errorf(pkg, format string, a ...any) error {
	return fmt.Errorf("%s: %w: %w", pkg, ErrInput, fmt.Errorf(format, a...))
}
