package inputerr

import (
	"errors"
	"io"
	"testing"
)

func TestErrorfWrapsAndNames(t *testing.T) {
	err := Errorf("workload", "n must be positive, got %d", -1)
	if !errors.Is(err, ErrInput) {
		t.Fatalf("%v does not wrap ErrInput", err)
	}
	if got, want := err.Error(), "workload: invalid input: n must be positive, got -1"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	wrapped := Errorf("matio", "reading: %w", io.ErrUnexpectedEOF)
	if !errors.Is(wrapped, ErrInput) || !errors.Is(wrapped, io.ErrUnexpectedEOF) {
		t.Fatalf("%v must wrap both ErrInput and its %%w operand", wrapped)
	}
}
