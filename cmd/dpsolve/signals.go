package main

// Signal handling for every subcommand. run (main.go) creates the context
// once; commands only ever see a context.Context, so they stay testable
// in-process and never install handlers of their own.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/dpsolve/dpsolve/internal/ctxwait"
	"github.com/dpsolve/dpsolve/pipeline/publish"
)

// exitInterrupted is the exit status of an interrupted command: 128 + SIGINT,
// what shells report for a program killed by Ctrl-C.
const exitInterrupted = 130

// exitNow ends the process on a second signal; a variable so tests can
// observe it without dying.
var exitNow = os.Exit

// signalContext returns a context that the first SIGINT or SIGTERM cancels
// (the command then stops at its next check, typically within one kernel
// call). A second signal exits at once with status 130: a user who presses
// Ctrl-C twice wants out now, and the atomic writers guarantee that exiting
// mid-write leaves no partial file. stop releases the handler.
func signalContext(parent context.Context, stderr io.Writer, name string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case sig := <-ch:
			fmt.Fprintf(stderr, "dpsolve %s: %v received, stopping (send it again to exit at once)\n", name, sig)
			cancel(fmt.Errorf("%w by %v", context.Canceled, sig))
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			fmt.Fprintf(stderr, "dpsolve %s: second %v, exiting now\n", name, sig)
			resume := publish.Quiesce() // let a release's commit in progress finish
			exitNow(exitInterrupted)
			resume() // reached only when exitNow is a test double
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			wg.Wait()
			cancel(nil)
		})
	}
}

// interrupted reports whether err is the result of a cancelled context: the
// command stopped because it was told to, not because it failed.
func interrupted(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil
}

// errCancelled is returned by a command that noticed the cancellation itself
// (rather than through a library call that returned ctx.Err()); it wraps
// context.Canceled so run maps it to status 130.
func errCancelled(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return context.Canceled
}

// untilCancelled runs f and returns its result, or errCancelled as soon as
// ctx is cancelled, without waiting for f. The solvers check ctx only
// between iterations and then certify the point they stopped at (several
// O(n³) kernels: 13 s at n = 1024 on a busy 2-core machine), which a user
// who pressed Ctrl-C does not want; f's result is discarded anyway, and the
// process exits as soon as the command returns. f keeps running in the
// background until then, so it must not write outputs itself.
func untilCancelled[T any](ctx context.Context, f func() (T, error)) (T, error) {
	v, err := ctxwait.Abandon(ctx, f)
	if ctx.Err() != nil && err == context.Cause(ctx) {
		err = errCancelled(ctx)
	}
	return v, err
}
