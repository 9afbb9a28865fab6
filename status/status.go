// Package status is dpsolve's one vocabulary for how an iterative solve
// ended. The solvers (newton, cg, lrm, sdp, plan, marginals) report a
// Status; its text form — "converged", "iteration_limit", "cancelled",
// "stalled", "failed" — is what the command line prints and what JSON
// output carries, so a program reading dpsolve's output and one calling
// the library see the same values.
package status

import (
	"errors"
	"fmt"
)

// Status says why an iterative solve stopped. The zero value is Unknown:
// no solve ran (or the solver did not say).
type Status uint8

const (
	// Unknown: no solve ran, or the solver reported nothing.
	Unknown Status = iota
	// Converged: the solver's stopping test was met (for the certified
	// solvers: the certified relative gap is at most the tolerance).
	Converged
	// IterationLimit: the iteration cap was reached first.
	IterationLimit
	// Cancelled: the context was cancelled; the result holds the best
	// point so far.
	Cancelled
	// Stalled: no further progress was possible in floating point before
	// the tolerance was met; the result is the best point found.
	Stalled
	// Failed: the solver gave up without a usable certificate (an
	// external solver's error exit, for example).
	Failed
)

var names = [...]string{
	Unknown:        "",
	Converged:      "converged",
	IterationLimit: "iteration_limit",
	Cancelled:      "cancelled",
	Stalled:        "stalled",
	Failed:         "failed",
}

// String returns the status's text form ("converged", "iteration_limit",
// "cancelled", "stalled", "failed"; "" for Unknown).
func (s Status) String() string {
	if int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Parse returns the Status whose text form is text ("" is Unknown).
func Parse(text string) (Status, error) {
	for s, name := range names {
		if name == text {
			return Status(s), nil
		}
	}
	return Unknown, fmt.Errorf("status: unknown status %q", text)
}

// MarshalText encodes s as its text form, so JSON carries the same
// strings as String.
func (s Status) MarshalText() ([]byte, error) {
	if int(s) >= len(names) {
		return nil, fmt.Errorf("status: invalid status %d", uint8(s))
	}
	return []byte(names[s]), nil
}

// UnmarshalText decodes a text form written by MarshalText.
func (s *Status) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ErrNotConverged is wrapped by the error Err returns for every status
// other than Converged.
var ErrNotConverged = errors.New("solve did not converge")

// Err is nil for Converged and otherwise an error wrapping ErrNotConverged
// that names the status, for callers that treat an unconverged solve as a
// failure.
func (s Status) Err() error {
	if s == Converged {
		return nil
	}
	name := s.String()
	if s == Unknown {
		name = "unknown"
	}
	return fmt.Errorf("%w (status %s)", ErrNotConverged, name)
}
