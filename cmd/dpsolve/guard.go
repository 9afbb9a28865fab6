package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// runGuarded runs c and turns a panic into an ordinary error: a user must
// never see a Go stack dump (set DPSOLVE_DEBUG=1 to get it, for a bug
// report). Panics are programming errors, so the message asks for a report.
// Out-of-memory is not a panic and cannot be caught; the memory preflight
// (preflight.go) refuses such sizes before allocating.
func runGuarded(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if os.Getenv("DPSOLVE_DEBUG") != "" {
				fmt.Fprintf(stderr, "%s\n", debug.Stack())
			}
			err = fmt.Errorf("internal error (%v); please report it with the command line (DPSOLVE_DEBUG=1 prints details)", r)
		}
	}()
	return c.run(ctx, args, stdout, stderr)
}
